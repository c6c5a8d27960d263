// Tests of CheckJSON, with go-json-experiment's strict decoder (which
// refuses duplicate names and invalid UTF-8 by default) as an independent
// judge in the fuzz target.

package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/paymock/paymock"
)

// jsonCreateBody is a typical create request, about 600 bytes.
const jsonCreateBody = `{
  "amount": 1250.50,
  "currency": "EUR",
  "description": "Order 10293 — 2 items, Müller GmbH",
  "expires_in": 3600,
  "mcc": 5411,
  "customer": {"email": "jane.doe@example.com", "name": "Jane Doe"},
  "success_url": "https://shop.example.com/checkout/success?order=10293",
  "cancel_url": "https://shop.example.com/checkout/cancel?order=10293",
  "metadata": {"order_ref": "10293", "channel": "web", "cart": ["sku-1", "sku-2"], "note": "Lieferung ab 14 Uhr \u00e9t\u00e9 😀"},
  "payment_method": {"type": "card", "card": {"number": "4242424242424242", "expiry_month": 12, "expiry_year": 2030, "cvc": "123"},
    "billing_details": {"name": "Jane Doe", "address": {"line1": "1 Main St", "city": "Berlin", "postal_code": "10115", "country": "DE"}}}
}`

func TestCheckJSON_AcceptsWhatEncodingJSONKeepsExactly(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"typical create body", jsonCreateBody},
		{"multi-byte UTF-8 in keys and values", `{"café": "naïve — 日本語 😀", "ключ": "значение"}`},
		{"a literal U+FFFD is a real character", "{\"note\": \"\xef\xbf\xbd\"}"},
		{"surrogate-pair escape", `{"emoji": "\ud83d\ude00", "\ud83d\ude00": 1}`},
		{"escaped keys that differ", `{"a\u0062": 1, "ac": 2, "a\nb": 3, "a\\b": 4}`},
		{"same key in sibling objects", `{"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 1}, {"k": 2}]}`},
		{"same key in parent and child", `{"k": {"k": {"k": 1}}}`},
		{"key and value alike", `{"amount": "amount"}`},
		{"empty object and array", `{"o": {}, "a": [], "": ""}`},
		{"scalars at top level", `"plain"`},
		{"many keys without a repeat", jsonManyKeys(1000, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.body)) {
				t.Fatalf("test body is not valid JSON: %s", tt.body)
			}
			if got := CheckJSON([]byte(tt.body)); got != nil {
				t.Errorf("CheckJSON = %+v, want nothing", got)
			}
		})
	}
}

func TestCheckJSON_NamesWhatEncodingJSONWouldChange(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []paymock.Violation
	}{
		{
			"invalid bytes in a metadata value",
			"{\"metadata\": {\"order_ref\": \"ok\", \"note\": \"caf\xe9\"}}",
			[]paymock.Violation{{Param: "metadata.note", Code: "invalid_utf8", Message: "metadata.note is not valid UTF-8"}},
		},
		{
			"invalid bytes in a nested value",
			"{\"customer\": {\"email\": \"a\xff@example.com\"}}",
			[]paymock.Violation{{Param: "customer.email", Code: "invalid_utf8", Message: "customer.email is not valid UTF-8"}},
		},
		{
			"a UTF-8-encoded surrogate is not valid UTF-8",
			"{\"d\": \"\xed\xa0\x80\"}",
			[]paymock.Violation{{Param: "d", Code: "invalid_utf8", Message: "d is not valid UTF-8"}},
		},
		{
			"a truncated multi-byte sequence",
			"{\"d\": \"\xe2\x82\"}",
			[]paymock.Violation{{Param: "d", Code: "invalid_utf8", Message: "d is not valid UTF-8"}},
		},
		{
			"array elements are numbered",
			"{\"items\": [\"fine\", {\"name\": \"\xc0\xaf\"}], \"tags\": [\"a\", \"b\", \"\x80\"]}",
			[]paymock.Violation{
				{Param: "items.1.name", Code: "invalid_utf8", Message: "items.1.name is not valid UTF-8"},
				{Param: "tags.2", Code: "invalid_utf8", Message: "tags.2 is not valid UTF-8"},
			},
		},
		{
			"invalid bytes inside a key",
			"{\"metadata\": {\"n\xffte\": \"x\"}}",
			[]paymock.Violation{{Param: "metadata.n\uFFFDte", Code: "invalid_utf8", Message: "metadata has a key that is not valid UTF-8 (\"n\uFFFDte\")"}},
		},
		{
			"invalid key and invalid value under it",
			"{\"\xff\": \"\xfe\"}",
			[]paymock.Violation{
				{Param: "\uFFFD", Code: "invalid_utf8", Message: "the request body has a key that is not valid UTF-8 (\"\uFFFD\")"},
				{Param: "\uFFFD", Code: "invalid_utf8", Message: "\uFFFD is not valid UTF-8"},
			},
		},
		{
			"lone high surrogate escape",
			`{"metadata": {"note": "x\ud83dy"}}`,
			[]paymock.Violation{{Param: "metadata.note", Code: "invalid_utf8", Message: `metadata.note is not valid UTF-8: the escape \ud83d is half of a surrogate pair without the other half`}},
		},
		{
			"lone low surrogate escape",
			`{"note": "\uDE00"}`,
			[]paymock.Violation{{Param: "note", Code: "invalid_utf8", Message: `note is not valid UTF-8: the escape \uDE00 is half of a surrogate pair without the other half`}},
		},
		{
			"high surrogate followed by another escape",
			`{"note": "\ud83d\u0041"}`,
			[]paymock.Violation{{Param: "note", Code: "invalid_utf8", Message: `note is not valid UTF-8: the escape \ud83d is half of a surrogate pair without the other half`}},
		},
		{
			"high surrogate at the end",
			`{"note": "\ud83d"}`,
			[]paymock.Violation{{Param: "note", Code: "invalid_utf8", Message: `note is not valid UTF-8: the escape \ud83d is half of a surrogate pair without the other half`}},
		},
		{
			"lone surrogate in a key",
			`{"\udc00": 1}`,
			[]paymock.Violation{{Param: "\uFFFD", Code: "invalid_utf8", Message: "the request body has a key that is not valid UTF-8 (\"\uFFFD\")"}},
		},
		{
			"a whole body that is an invalid string",
			"\"\xff\"",
			[]paymock.Violation{{Param: "", Code: "invalid_utf8", Message: "the request body is not valid UTF-8"}},
		},
		{
			"duplicate key at the top",
			`{"amount": 10, "currency": "EUR", "amount": 1000}`,
			[]paymock.Violation{{Param: "amount", Code: "duplicate_key", Message: `duplicate key "amount" in the request body`}},
		},
		{
			"duplicate key reported once however often it repeats",
			`{"amount": 1, "amount": 2, "amount": 3}`,
			[]paymock.Violation{{Param: "amount", Code: "duplicate_key", Message: `duplicate key "amount" in the request body`}},
		},
		{
			"duplicate key in a nested object",
			`{"metadata": {"order_ref": "1", "order_ref": "2"}}`,
			[]paymock.Violation{{Param: "metadata.order_ref", Code: "duplicate_key", Message: `duplicate key "order_ref" in metadata`}},
		},
		{
			"duplicate key in an object inside an array",
			`{"items": [{"sku": "a"}, {"sku": "b", "sku": "c"}]}`,
			[]paymock.Violation{{Param: "items.1.sku", Code: "duplicate_key", Message: `duplicate key "sku" in items.1`}},
		},
		{
			"an escaped key repeats its plain spelling",
			`{"ab": 1, "a\u0062": 2}`,
			[]paymock.Violation{{Param: "ab", Code: "duplicate_key", Message: `duplicate key "ab" in the request body`}},
		},
		{
			"two escaped spellings of one key",
			`{"\u00e9": 1, "\u00E9": 2, "\/": 3, "/": 4}`,
			[]paymock.Violation{
				{Param: "é", Code: "duplicate_key", Message: `duplicate key "é" in the request body`},
				{Param: "/", Code: "duplicate_key", Message: `duplicate key "/" in the request body`},
			},
		},
		{
			"surrogate pair escape repeats the raw character",
			`{"😀": 1, "\ud83d\ude00": 2}`,
			[]paymock.Violation{{Param: "😀", Code: "duplicate_key", Message: `duplicate key "😀" in the request body`}},
		},
		{
			"duplicate found after many keys",
			jsonManyKeys(500, true),
			[]paymock.Violation{{Param: "k0", Code: "duplicate_key", Message: `duplicate key "k0" in the request body`}},
		},
		{
			"duplicates inside and after a nested object",
			`{"a": {"x": 1, "y": {"x": 1}, "x": 2}, "b": 1, "a": 2}`,
			[]paymock.Violation{
				{Param: "a.x", Code: "duplicate_key", Message: `duplicate key "x" in a`},
				{Param: "a", Code: "duplicate_key", Message: `duplicate key "a" in the request body`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.body)) {
				t.Fatalf("test body is not valid JSON to encoding/json: %q", tt.body)
			}
			got := CheckJSON([]byte(tt.body))
			if !slices.Equal(got, tt.want) {
				t.Errorf("CheckJSON =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}

func TestCheckJSON_LeavesBrokenJSONToTheContract(t *testing.T) {
	for _, body := range []string{
		"",
		"   ",
		`{"a": 1`,
		`{"a": 1, "a": 2`,
		"{\"a\": \"\xff\"} trailing",
		"{\"a\": \"\xff\"}{}",
		`{"a": 1,}`,
		`{"a" 1}`,
		`{a: 1}`,
		`[1, 2,]`,
		`{"a": 01, "a": 2}`,
		`{"a": 1., "a": 2}`,
		`{"a": -, "a": 2}`,
		`{"a": 1e, "a": 2}`,
		`{"a": tru, "a": 2}`,
		`{"a": "\x", "a": 2}`,
		`{"a": "\u12G4", "a": 2}`,
		"{\"a\": \"tab\there\", \"a\": 2}",
		`{"a": "unterminated}`,
		strings.Repeat("[", maxJSONDepth+1) + `"` + "\xff" + `"` + strings.Repeat("]", maxJSONDepth+1),
	} {
		if json.Valid([]byte(body)) {
			t.Errorf("test body %.40q is valid JSON to encoding/json", body)
			continue
		}
		if got := CheckJSON([]byte(body)); got != nil {
			t.Errorf("CheckJSON(%.40q) = %+v, want nil: broken JSON is the contract's to report", body, got)
		}
	}
}

func TestCheckJSON_FollowsEncodingJSONDepthLimit(t *testing.T) {
	// At exactly encoding/json's limit the body is still valid, and what is
	// inside it still counts.
	body := strings.Repeat("[", maxJSONDepth) + "\"\xff\"" + strings.Repeat("]", maxJSONDepth)
	if !json.Valid([]byte(body)) {
		t.Fatal("encoding/json refuses a body at its own depth limit")
	}
	got := CheckJSON([]byte(body))
	if len(got) != 1 || got[0].Code != "invalid_utf8" {
		t.Errorf("CheckJSON = %d violations, want the one invalid string", len(got))
	}
}

func TestCheckJSON_CapsViolationsPerBody(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\"\xff\"")
	}
	sb.WriteString("]")
	got := CheckJSON([]byte(sb.String()))
	if len(got) != maxJSONViolations {
		t.Errorf("%d violations, want the cap of %d", len(got), maxJSONViolations)
	}
	if got[0].Param != "0" || got[len(got)-1].Param != "99" {
		t.Errorf("violations run from %q to %q, want 0 to 99", got[0].Param, got[len(got)-1].Param)
	}
}

func TestCheckJSON_CutsLongKeysInParams(t *testing.T) {
	key := strings.Repeat("é", 300) // 600 bytes
	got := CheckJSON([]byte(`{"` + key + `": 1, "` + key + `": 2}`))
	if len(got) != 1 {
		t.Fatalf("got %+v, want one duplicate", got)
	}
	want := strings.Repeat("é", maxParamKey/2) + "…"
	if got[0].Param != want {
		t.Errorf("param %q, want %q", got[0].Param, want)
	}
}

func TestCheckJSON_ManyKeysTakeLinearTime(t *testing.T) {
	// A quadratic duplicate check would take minutes on this 2.6 MB body.
	body := []byte(jsonManyKeys(200_000, true))
	start := time.Now()
	got := CheckJSON(body)
	if len(got) != 1 || got[0].Param != "k0" {
		t.Errorf("CheckJSON = %+v, want the duplicate k0", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v on 200,000 keys", d)
	}
}

func TestCheckJSON_AllocatesNothingOnAGoodBody(t *testing.T) {
	body := []byte(jsonCreateBody)
	if n := testing.AllocsPerRun(100, func() { CheckJSON(body) }); n != 0 {
		t.Errorf("%v allocations on a typical create body, want 0", n)
	}
}

// jsonManyKeys is an object with n keys k0..k{n-1}, and k0 again if repeat.
func jsonManyKeys(n int, repeat bool) string {
	var sb strings.Builder
	sb.WriteString("{")
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"k`)
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString(`":1`)
	}
	if repeat {
		sb.WriteString(`,"k0":2`)
	}
	sb.WriteString("}")
	return sb.String()
}

// FuzzCheckJSON checks CheckJSON against two judges on every body that
// encoding/json calls valid: jsontext's strict decoder must fail exactly
// when CheckJSON reports something, and when neither objects, every string
// encoding/json decodes (key or value) must be exactly what jsontext
// decodes, so the body comes back as sent.
func FuzzCheckJSON(f *testing.F) {
	// More seeds, one per kind of body, are in testdata/fuzz/FuzzCheckJSON.
	f.Add([]byte(jsonCreateBody))
	f.Fuzz(func(t *testing.T, body []byte) {
		got := CheckJSON(body) // must not panic, whatever the body
		if !json.Valid(body) {
			if got != nil {
				t.Fatalf("violations on a body encoding/json refuses: %+v", got)
			}
			return
		}
		for _, v := range got {
			if v.Code != "invalid_utf8" && v.Code != "duplicate_key" {
				t.Fatalf("unknown code %q", v.Code)
			}
			if !jsonUTF8Valid(v.Param) || !jsonUTF8Valid(v.Message) {
				t.Fatalf("violation not valid UTF-8 itself: %+v", v)
			}
		}
		strict, err := jsonStringsStrict(body)
		if err != nil {
			var se *jsontext.SyntacticError
			if !errors.As(err, &se) {
				t.Fatalf("jsontext: %v", err)
			}
			if se.Err != jsontext.ErrDuplicateName && !strings.Contains(se.Err.Error(), "UTF-8") && !strings.Contains(se.Err.Error(), "surrogate") {
				t.Skipf("jsontext refuses for another reason: %v", err)
			}
			if len(got) == 0 {
				t.Fatalf("CheckJSON reports nothing; jsontext refuses: %v", err)
			}
			return
		}
		if len(got) != 0 {
			t.Fatalf("CheckJSON reports %+v; jsontext accepts the body", got)
		}
		loose, err := jsonStringsLoose(body)
		if err != nil {
			t.Fatalf("encoding/json tokens of a valid body: %v", err)
		}
		if !slices.Equal(loose, strict) {
			t.Fatalf("encoding/json reads strings %q, sent %q", loose, strict)
		}
		// And each comes back out as it went in: stored, echoed, read.
		for _, str := range loose {
			echoed, err := json.Marshal(str)
			if err != nil {
				t.Fatal(err)
			}
			var back string
			if err := json.Unmarshal(echoed, &back); err != nil || back != str {
				t.Fatalf("%q echoed as %s reads back as %q (%v)", str, echoed, back, err)
			}
		}
	})
}

func jsonUTF8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// jsonStringsStrict is every string of body in order, keys included, as the
// strict decoder reads them.
func jsonStringsStrict(body []byte) ([]string, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var out []string
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '"' {
			out = append(out, tok.String())
		}
	}
}

// jsonStringsLoose is every string of body in order, keys included, as
// encoding/json reads them.
func jsonStringsLoose(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a valid number past float64 is not an error here
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

func BenchmarkCheckJSON(b *testing.B) {
	body := []byte(jsonCreateBody)
	b.Run("hand scanner", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if CheckJSON(body) != nil {
				b.Fatal("violations on a good body")
			}
		}
	})
	b.Run("jsontext strict", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		dec := jsontext.NewDecoder(bytes.NewReader(nil))
		r := bytes.NewReader(nil)
		for b.Loop() {
			r.Reset(body)
			dec.Reset(r)
			if _, err := dec.ReadValue(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsontext Value.IsValid", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !jsontext.Value(body).IsValid() {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Unmarshal into any", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}

// FuzzPlainJSON_IsValidAndClean checks the one read that settles both
// ReadBody's and CheckJSON's questions: a body of the plain shape is
// valid JSON in which CheckJSON finds nothing.
func FuzzPlainJSON_IsValidAndClean(f *testing.F) {
	f.Add([]byte(jsonCreateBody))
	f.Add([]byte(`{"a":"\ud800"}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Add([]byte(`[1e5,-0.5,true,null,{"":[]}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !plainJSON(body) {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("plain, but encoding/json refuses it: %q", body)
		}
		if vs := CheckJSON(body); vs != nil {
			t.Fatalf("plain, but CheckJSON finds %+v in %q", vs, body)
		}
	})
}

// BenchmarkReadJSONBody compares the one read of a plain create body
// (paymock-load's) with encoding/json's scanner followed by CheckJSON,
// which it replaces.
func BenchmarkReadJSONBody(b *testing.B) {
	body := []byte(`{"amount":10.50,"currency":"USD","customer":{"email":"load@example.com","name":"Load Test"},` +
		`"description":"load","expires_in":3600,"metadata":{"k":"v"},` +
		`"success_url":"https://shop.example.com/ok","cancel_url":"https://shop.example.com/no","mcc":5732}`)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !plainJSON(body) {
				b.Fatal("not plain")
			}
		}
	})
	b.Run("valid-then-checkjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(body) || CheckJSON(body) != nil {
				b.Fatal("refused")
			}
		}
	})
}
