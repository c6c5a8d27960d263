// Tests that the two wire forms of a payment's amount, the JSON number and
// the decimal string, hold exactly the same amounts.

package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// amountAnswer is the model payment's answer with raw as its amount.
func amountAnswer(t testing.TB, raw string) []byte {
	t.Helper()
	b, _, _, err := modelPayment().EncodePlain(paymock.Encoding{})
	if err != nil {
		t.Fatal(err)
	}
	const amount = `"amount":10.50,`
	if !bytes.Contains(b, []byte(amount)) {
		t.Fatalf("the model payment's answer has no %s: %s", amount, b)
	}
	return bytes.Replace(b, []byte(amount), []byte(`"amount":`+raw+`,`), 1)
}

// amountVerdict is the contract's verdict on an answer whose amount is
// raw, for every operation that answers a payment: the check the server
// runs (ValidateResponse) and kin-openapi's alone must agree, and so must
// the operations.
func amountVerdict(t *testing.T, cases []modelCase, raw string) bool {
	t.Helper()
	body := amountAnswer(t, raw)
	var verdict *bool
	for _, c := range cases {
		got := c.d.ValidateResponse(context.Background(), c.r, c.rt, c.status, jsonHeader, body) == nil
		if kin := kinResponse(c, body) == nil; kin != got {
			t.Fatalf("%s: amount %s: the server's check says valid=%v, kin %v", c.name, raw, got, kin)
		}
		if verdict != nil && *verdict != got {
			t.Fatalf("%s: amount %s: valid=%v here, %v in %s", c.name, raw, got, *verdict, cases[0].name)
		}
		verdict = &got
	}
	return *verdict
}

// checkAmountForms checks the rule of the two forms on one text s:
// the string form takes s only where the number form takes it too and
// paymock reads it; and every amount the number form takes and paymock
// reads, the string form takes as paymock writes it ("10.50"). A number
// with more than two decimals (10.505) is the one difference: the schema
// cannot state two decimals of a double (multipleOf is inexact in
// binary), so the number form passes it and paymock's reading refuses it.
func checkAmountForms(t *testing.T, cases []modelCase, s string) {
	t.Helper()
	quoted, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	a, readErr := paymock.ParseAmount(s)
	number := json.Valid([]byte(s)) && s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && strings.TrimSpace(s) == s
	numberOK := number && amountVerdict(t, cases, s)
	if amountVerdict(t, cases, string(quoted)) {
		if !numberOK {
			t.Errorf("the string form takes %s, the number form does not take %s", quoted, s)
		}
		if readErr != nil {
			t.Errorf("the string form takes %s, which paymock cannot read: %v", quoted, readErr)
		}
	}
	if numberOK && readErr == nil {
		if canonical := strconv.Quote(a.String()); !amountVerdict(t, cases, canonical) {
			t.Errorf("the number form takes %s, the string form refuses the same amount as %s", s, canonical)
		}
	}
}

// amountTexts are texts of amounts at every edge of the rule.
var amountTexts = []string{
	"0.01", "0.1", "0.10", "0.05", "0.99", "1", "1.0", "1.5", "10.50", "999999999.99", "999999999.9", "999999999",
	"0", "0.0", "0.00", "-0", "-0.00", "-1", "-10.50", "0.001", "0.009", "10.505", "1000000000", "1000000000.00",
	"9999999999.99", "01", "00.50", "001", "00", "1.", ".5", "1e2", "1E2", "1e-2", "1e9", "1e10", "10.500", "+1",
	" 1", "1 ", "1,50", "ten", "", "0x10", "١", "1.5.5", "NaN", "Infinity",
}

func TestAmountForms_AcceptTheSameAmounts(t *testing.T) {
	cases := modelCases(t)
	for _, s := range amountTexts {
		checkAmountForms(t, cases, s)
	}
}

func TestAmountForms_RefuseZeroAndPastTheBoundsAlike(t *testing.T) {
	cases := modelCases(t)
	tests := []struct {
		name  string
		cents paymock.Amount
		valid bool
	}{
		{"zero", 0, false},
		{"negative", -1, false},
		{"smallest", 1, true},
		{"ten cents", 10, true},
		{"one unit", 100, true},
		{"largest", paymock.MaxAmount, true},
		{"past the largest", paymock.MaxAmount + 1, false},
		{"ten digits of units", 10 * paymock.MaxAmount, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, enc := range []paymock.Encoding{{}, {AmountAsString: true}} {
				p := modelPayment()
				p.Amount = tc.cents
				_, w, _, err := p.EncodePlain(enc)
				if err != nil {
					t.Fatal(err)
				}
				if got := amountVerdict(t, cases, string(w.Amount)); got != tc.valid {
					t.Errorf("amount %s: valid=%v, want %v", w.Amount, got, tc.valid)
				}
			}
		})
	}
}

func TestAmountForms_AgreeOnEveryWrittenAmount(t *testing.T) {
	// Amounts drawn over every magnitude, zero, negatives and past the
	// maximum, each written in both forms as paymock writes them.
	cases := modelCases(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		cents := paymock.Amount(rnd.Int64N(int64(paymock.MaxAmount) * 2))
		if rnd.IntN(2) == 0 {
			cents /= paymock.Amount(int64(1) << rnd.IntN(40))
		}
		if rnd.IntN(10) == 0 {
			cents = -cents
		}
		want := cents >= 1 && cents <= paymock.MaxAmount
		number := cents.String()
		if got := amountVerdict(t, cases, number); got != want {
			t.Errorf("amount %s: valid=%v, want %v", number, got, want)
		}
		if got := amountVerdict(t, cases, strconv.Quote(number)); got != want {
			t.Errorf("amount %q: valid=%v, want %v", number, got, want)
		}
	}
}

// FuzzAmountForms_AcceptTheSameAmounts checks the rule of the two forms
// on arbitrary texts.
func FuzzAmountForms_AcceptTheSameAmounts(f *testing.F) {
	for _, s := range amountTexts {
		f.Add(s)
	}
	cases := modelCases(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkAmountForms(t, cases, s)
	})
}
