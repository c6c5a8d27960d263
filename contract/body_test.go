// Tests of reading a request body: the bound on its JSON values, and the
// charset it may be sent in.

package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/jsonsamples"
)

// decoderCount counts data's values as encoding/json's tokens give them:
// every token but a closing delimiter and an object's key.
func decoderCount(t testing.TB, data []byte) int {
	t.Helper()
	type frame struct{ object, wantKey bool }
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number past float64 is still one value
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("decoding %q: %v", data, err)
		}
		d, isDelim := tok.(json.Delim)
		if isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			stack[len(stack)-1].wantKey = false // a key, not a value
			continue
		}
		n++
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
		if isDelim {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
		}
	}
}

func TestCountValues_CountsWhatADecoderFinds(t *testing.T) {
	for _, body := range []string{
		`1`, `"x"`, `[]`, `[ ]`, `{}`, `[1]`, `[1,2,3]`, `[[],[],{}]`, `{"a":1}`, `{"a":[1,2],"b":{"c":null}}`,
		` { "a" : [ 1 , [ ] , { } ] , "b" : "x" } `,
		`{"s":"a,b:c[d{e"}`, `["\",[{:", "\\", "\\\""]`, `{"k,:":"v]}"}`,
		`{"amount":10.5,"currency":"EUR","metadata":{"a":[0,0,0],"b":{"c":[[],[1]]}}}`,
		`{"a":1,"a":2}`, // a duplicated key is two values to read
	} {
		t.Run(body, func(t *testing.T) {
			want := decoderCount(t, []byte(body))
			if got := countValues([]byte(body), 1<<30); got != want {
				t.Errorf("countValues = %d, want %d", got, want)
			}
		})
	}
}

func TestTooManyValues_RefusesPastTheBoundOnly(t *testing.T) {
	items := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]" }
	tests := []struct {
		name string
		body string
		max  int
		want bool
	}{
		{"an array at the bound", items(99), 100, false}, // 99 items and the array itself
		{"an array past the bound", items(100), 100, true},
		{"nested empty arrays past the bound", "[" + strings.TrimSuffix(strings.Repeat("[],", 200), ",") + "]", 100, true},
		{"deep nesting past the bound", strings.Repeat("[", 200) + strings.Repeat("]", 200), 100, true},
		{"many members past the bound", `{` + strings.TrimSuffix(strings.Repeat(`"k":{},`, 150), ",") + `}`, 100, true},
		{"a long string is one value", `{"s":"` + strings.Repeat(",[:", 1000) + `"}`, 100, false},
		{"a short body is not scanned", items(20), 100, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tooManyValues([]byte(tc.body), tc.max); got != tc.want {
				t.Errorf("tooManyValues = %v, want %v (count %d)", got, tc.want, countValues([]byte(tc.body), 1<<30))
			}
		})
	}
}

// TestReadJSONBody_LargestValidCreateIsUnderTheBound builds the create
// with the most values the contract and the metadata rules allow (50
// metadata values of at most 500 bytes of JSON each), so that the bound
// never refuses a request that could be valid.
func TestReadJSONBody_LargestValidCreateIsUnderTheBound(t *testing.T) {
	zeros := "[" + strings.TrimSuffix(strings.Repeat("0,", 249), ",") + "]" // 499 bytes, 250 values
	var meta strings.Builder
	for i := range 50 {
		if i > 0 {
			meta.WriteByte(',')
		}
		meta.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":` + zeros)
	}
	body := `{"amount":10.5,"currency":"EUR","description":"d","expires_in":900,"mcc":"5732",` +
		`"customer":{"email":"a@example.com","name":"A"},"success_url":"https://a.example/s",` +
		`"cancel_url":"https://a.example/c","metadata":{` + meta.String() + `}}`
	n := decoderCount(t, []byte(body))
	if n <= 12_000 || n > MaxBodyValues {
		t.Fatalf("the largest create holds %d values: want it past 12,000 and within %d", n, MaxBodyValues)
	}
	if _, err := ReadJSONBody(jsonRequest(body, "application/json"), 1<<20); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

func TestReadJSONBody_RefusesWhatCostsTooMuchOrIsNotUTF8(t *testing.T) {
	manyItems := `{"metadata":{"a":[` + strings.TrimSuffix(strings.Repeat("{},", 20_000), ",") + `]}}`
	tests := []struct {
		name, body, contentType string
		status                  int
		code                    string
	}{
		{"past the bound of values", manyItems, "application/json", 400, "body_too_complex"},
		{"deep arrays past the bound", strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000), "application/json", 400, "body_too_complex"},
		{"UTF-16 said", `{}`, "application/json; charset=utf-16", 415, "unsupported_media_type"},
		{"Latin-1 said", `{}`, "application/json; charset=ISO-8859-1", 415, "unsupported_media_type"},
		{"UTF-8 said", `{}`, "application/json; charset=UTF-8", 0, ""},
		{"utf8 said", `{}`, "application/json; charset=utf8", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSONBody(jsonRequest(tc.body, tc.contentType), 1<<20)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var pe *paymock.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *paymock.Error", err, err)
			}
			status := http.StatusBadRequest
			if se := (*StatusError)(nil); errors.As(err, &se) {
				status = se.Status
			}
			if code := pe.Code; status != tc.status || code != tc.code {
				t.Errorf("status %d code %s, want %d %s: %v", status, code, tc.status, tc.code, err)
			}
		})
	}
}

func jsonRequest(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/payments", strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	return r
}

// FuzzCountValues_AgreesWithTheDecoder holds the one-pass count to
// encoding/json's reading of every valid body.
func FuzzCountValues_AgreesWithTheDecoder(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":[]}],"c":"x,y"}`, `[[[]],[{}]]`, `"\\\""`, ` [ 1 , 2 ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if got, want := countValues(data, 1<<30), decoderCount(t, data); got != want {
			t.Errorf("countValues(%q) = %d, want %d", data, got, want)
		}
	})
}

// TestCountValues_KeepsItsCountOnTrickyBytes pins the count of values on
// bodies where a quote, a backslash or a bracket could mislead a walk
// outside strings, valid JSON or not, and where the count stops past max.
func TestCountValues_KeepsItsCountOnTrickyBytes(t *testing.T) {
	tests := []struct {
		data string
		max  int
		want int
	}{
		{``, 1 << 30, 1},
		{`-12.5e3`, 1 << 30, 1},
		{`"\\\"[{"`, 1 << 30, 1},
		{`"a\\",[`, 1 << 30, 1},
		{`"ab\`, 1 << 30, 1},
		{`{"a":1}`, 1 << 30, 2},
		{`{"a":[1,2,{"b":"c\"d"}]}`, 1 << 30, 6},
		{`{"a":[1,2,{"b":"c\"d"}]}`, 3, 4},
		{`[[[]],[{}]]`, 1 << 30, 5},
		{`[[[]],[{}]]`, 3, 4},
		{`"[[["`, 1, 1},
		{`[1]`, 1, 2},
		{`"s",[1,2`, 1, 2},
		{` [ 1 , 2 ] `, 1 << 30, 3},
		{"[ \t\n\r]", 1 << 30, 1},
		{`["\\",[[]]]`, 1 << 30, 4},
		{`["\\\"]",[]]`, 1 << 30, 3},
		{`{"k\"ey":"v,:[]{}","n":[null,true,false,-0.5e+2]}`, 1 << 30, 7},
		{`["é\u00e9",{"ü":[]}]`, 1 << 30, 4},
		{`]]}[`, 1 << 30, 1},
		{`}{{"a":[]`, 1 << 30, 2},
		{`[1,,2]`, 1 << 30, 4},
		{`[,]`, 1 << 30, 3},
		{`{:}`, 1 << 30, 2},
		{`"unterminated [`, 1 << 30, 1},
		// Past 64 open arrays the stack of containers leaves its buffer.
		{strings.Repeat("[1,", 70) + "1" + strings.Repeat("]", 70), 1 << 30, 141},
		{strings.Repeat("[1,", 70) + "1" + strings.Repeat("]", 70), 3, 4},
		{strings.Repeat("{\"a\":[1,", 70) + strings.Repeat("]}", 70), 1 << 30, 211},
	}
	for _, tc := range tests {
		if got := countValues([]byte(tc.data), tc.max); got != tc.want {
			t.Errorf("countValues(%q, %d) = %d, want %d", tc.data, tc.max, got, tc.want)
		}
	}
}

// BenchmarkCountValues counts the values of a 200-byte create body and of
// a megabyte of them in one array, the most a request body may be.
func BenchmarkCountValues(b *testing.B) {
	for _, bc := range jsonsamples.Bodies() {
		b.Run(bc.Name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.Data)))
			b.ReportAllocs()
			for b.Loop() {
				countValues(bc.Data, 1<<30)
			}
		})
	}
}

func TestRefuseBody_TakesNothingBlanksAndAnEmptyObjectOnly(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // the error's code; "" for none
	}{
		{"", ""},
		{" \r\n\t", ""},
		{"{}", ""},
		{" {\n} ", ""},
		{`{"reason":"x"}`, "body_not_taken"},
		{"[]", "body_not_taken"},
		{"null", "body_not_taken"},
		{"garbage", "body_not_taken"},
		{"{", "body_not_taken"},
		{"}{", "body_not_taken"},
		{strings.Repeat(" ", 2000), "body_too_large"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/_sandbox/reset", strings.NewReader(tc.body))
		err := RefuseBody(r, 1000)
		var got string
		if err != nil {
			var pe *paymock.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: %v is no paymock.Error", tc.body, err)
			}
			got = pe.Code
		}
		if got != tc.want {
			t.Errorf("RefuseBody(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
	if err := RefuseBody(httptest.NewRequest(http.MethodPost, "/", http.NoBody), 10); err != nil {
		t.Errorf("no body: %v", err)
	}
}

// TestValidateParsedRequest_JudgesTheParseAsTheBytes checks create bodies
// through the parse ReadParsedJSONBody keeps and through their bytes:
// the verdicts must be the same, and a plain body must keep its parse
// (else the check parses it again, which is what the parse is kept for).
func TestValidateParsedRequest_JudgesTheParseAsTheBytes(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	valid := `{"amount":10.5,"currency":"USD","customer":{"email":"a@example.com","name":"A"},"description":"d","expires_in":3600,"metadata":{"k":"v"},"mcc":5732,"success_url":"https://shop.example.com/ok","cancel_url":"https://shop.example.com/no"}`
	tests := []struct {
		name, body string
		plain      bool // the parse is kept
		want       string
	}{
		{"valid", valid, true, ""},
		{"escaped, valid", strings.Replace(valid, `"A"`, `"\u0041"`, 1), false, ""},
		{"amount a string", strings.Replace(valid, `10.5`, `"10.5"`, 1), true, "amount"},
		{"no currency", strings.Replace(valid, `"currency":"USD",`, ``, 1), true, "currency"},
		{"mcc and account_id", strings.Replace(valid, `"mcc":5732`, `"mcc":5732,"account_id":"acc_1"`, 1), true, "account_id"},
		{"escaped, bad email", strings.Replace(valid, `a@example.com`, `a\u0040`, 1), false, "email"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/api/v1/payments", strings.NewReader(tc.body))
				r.Header.Set("Content-Type", "application/json")
				return r
			}
			r := req()
			rt, err := docs.Service.Match(r)
			if err != nil {
				t.Fatal(err)
			}
			jb, err := ReadParsedJSONBody(r, 1<<20)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if kept := jb.plain != nil; kept != tc.plain {
				t.Fatalf("parse kept %v, want %v", kept, tc.plain)
			}
			parsed := docs.Service.ValidateParsedRequest(r.Context(), r, rt, jb, true)
			jb.Release()
			r2 := req()
			body, err := ReadJSONBody(r2, 1<<20)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			bytesErr := docs.Service.ValidateRequest(r2.Context(), r2, rt, body, true)
			if fmt.Sprint(parsed) != fmt.Sprint(bytesErr) {
				t.Fatalf("the parse got %v, the bytes %v", parsed, bytesErr)
			}
			switch {
			case tc.want == "" && parsed != nil:
				t.Fatalf("refused: %v", parsed)
			case tc.want != "" && (parsed == nil || !strings.Contains(parsed.Error(), tc.want)):
				t.Fatalf("got %v, want an error naming %q", parsed, tc.want)
			}
		})
	}
}
