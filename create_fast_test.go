// Tests that a create's fast forms (plain redirect URLs, metadata sent
// compact) answer exactly what the forms they spare answer.

package paymock

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// parsedRedirectURL is ValidRedirectURL without its fast form.
func parsedRedirectURL(s string) bool {
	if !AbsoluteURI(s) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" || u.User != nil || strings.IndexFunc(u.Host, func(r rune) bool { return r == '%' || r >= 0x80 }) >= 0 {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// jsonCompact is compact without its fast form: json.Compact's output in
// a buffer of its own, or a copy of what it refuses.
func jsonCompact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

var redirectURLs = []string{
	"https://shop.example.com/ok", "http://127.0.0.1:8080/c/pay_x?a=b", "https://a.example/p@x", "https://u@a.example",
	"HTTPS://a.example", "https://a.example:99999", "https://a.example/%zz", "https://a.example/?q=%zz", "https://.", "http://a:",
	"https://a.example#frag", "https://[::1]/", "https://a b", "", "http://a]/x", "http://a/#x#y", "http://%C3%A9.example/",
}

func FuzzValidRedirectURL_FastFormAgreesWithURLParse(f *testing.F) {
	for _, s := range redirectURLs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidRedirectURL(s), parsedRedirectURL(s); got != want {
			t.Fatalf("ValidRedirectURL(%q) = %v; with url.Parse alone, %v", s, got, want)
		}
	})
}

func TestValidRedirectURL_PlainURLsAreNotParsed(t *testing.T) {
	for _, s := range []string{"https://shop.example.com/ok", "http://127.0.0.1:8080/checkout/pay_x?order=1&x=%41"} {
		if !ValidRedirectURL(s) {
			t.Fatalf("%q refused", s)
		}
		// url.Parse allocates the URL it returns; the fast form nothing.
		if n := testing.AllocsPerRun(100, func() { ValidRedirectURL(s) }); n != 0 {
			t.Errorf("ValidRedirectURL(%q): %v allocations, want 0", s, n)
		}
	}
}

var metadataSeeds = []string{
	`{"k":"v"}`, `{"order":"1234","n":[1,2,{"a":null}]}`, `{ "k" : "v" }`, "{\"a\":\"x y\"}", "{\"a\":\"\\\" \"}", "{\"a\":\"\\\\\" }",
	`{"a":1} `, "\t{}\n", `{"a":`, `{"a":"unterminated}`, `nope`, `"a b"`, `{}`, ``,
}

func FuzzCompact_WritesWhatJSONCompactWrites(f *testing.F) {
	for _, s := range metadataSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := compact(bytes.Clone(raw)), jsonCompact(raw)
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("compact(%q) = %q (nil: %v); json.Compact writes %q (nil: %v)", raw, got, got == nil, want, want == nil)
		}
	})
}

func TestCompact_CompactMetadataIsCopiedOnce(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		allocs float64
	}{
		{`{"order":"1234","note":"two words"}`, 1},
		{`{"a":"\" }"}`, 1},
		{`{ "order": "1234" }`, 1},
		{"{\"a\":1}\n", 1},
	} {
		raw := json.RawMessage(tc.raw)
		got := compact(raw)
		if !bytes.Equal(got, jsonCompact(raw)) {
			t.Fatalf("compact(%q) = %q", tc.raw, got)
		}
		if &got[0] == &raw[0] {
			t.Errorf("compact(%q) is raw itself, not a copy", tc.raw)
		}
		if n := testing.AllocsPerRun(100, func() { compact(raw) }); n != tc.allocs {
			t.Errorf("compact(%q): %v allocations, want %v", tc.raw, n, tc.allocs)
		}
	}
}

// BenchmarkCompact compacts a create's metadata sent compact: with the
// fast form, and with json.Compact's scanner alone.
func BenchmarkCompact(b *testing.B) {
	raw := json.RawMessage(`{"order_id":"ord_1234","channel":"web"}`)
	for _, f := range []struct {
		name string
		fn   func(json.RawMessage) json.RawMessage
	}{{"fast", compact}, {"json.Compact", jsonCompact}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.fn(raw)
			}
		})
	}
}
