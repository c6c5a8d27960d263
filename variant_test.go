// Parsing response variants and their encodings.

package paymock

import (
	"strings"
	"testing"
)

func TestParseVariants_FixedForms(t *testing.T) {
	tests := []struct {
		spec string
		want Encoding
	}{
		{"", Encoding{}},
		{"default", Encoding{}},
		{"amount=string", Encoding{AmountAsString: true}},
		{"status=succeeded", Encoding{StatusSucceeded: true}},
		{"payment_link=omit", Encoding{OmitPaymentLink: true}},
		{"amount=string, status=succeeded,payment_link=omit", Encoding{true, true, true}},
		{"amount=number,status=completed,payment_link=include", Encoding{}},
	}
	for _, tc := range tests {
		v, err := ParseVariants(tc.spec, 1)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		for range 3 {
			if got := v.Next(); got != tc.want {
				t.Errorf("%q: %+v, want %+v", tc.spec, got, tc.want)
			}
		}
	}
}

func TestParseVariants_RejectsUnknownForms(t *testing.T) {
	for _, spec := range []string{"amount", "amount=float", "colour=red", "amount=string,amount=number", "ALL"} {
		if _, err := ParseVariants(spec, 1); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
}

func TestParseVariants_AllRotatesEveryFormReproducibly(t *testing.T) {
	a, _ := ParseVariants("all", 7)
	b, _ := ParseVariants("all", 7)
	seen := map[Encoding]bool{}
	var seqA, seqB []string
	for range 200 {
		ea, eb := a.Next(), b.Next()
		seen[ea] = true
		seqA, seqB = append(seqA, ea.String()), append(seqB, eb.String())
	}
	if len(seen) != 8 {
		t.Errorf("%d of 8 forms seen", len(seen))
	}
	if strings.Join(seqA, ";") != strings.Join(seqB, ";") {
		t.Error("same seed, different sequence")
	}
}

func TestEncoding_String(t *testing.T) {
	if s := (Encoding{}).String(); s != "default" {
		t.Errorf("%q", s)
	}
	if s := (Encoding{AmountAsString: true, OmitPaymentLink: true}).String(); s != "amount=string,payment_link=omit" {
		t.Errorf("%q", s)
	}
}

func TestNilVariants_IsTheDefaultForm(t *testing.T) {
	var v *Variants
	if v.Next() != (Encoding{}) {
		t.Error("nil Variants is not the default form")
	}
}
