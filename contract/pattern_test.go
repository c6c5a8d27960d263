// Tests that the fast form of a pattern matches exactly what the regexp
// matches.

package contract

import (
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/paymock/paymock"
)

// documentPatterns are the patterns of every compiled check of both
// documents, sorted.
func documentPatterns(t testing.TB) []string {
	t.Helper()
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*check]bool{}
	var out []string
	var walk func(k *check)
	walk = func(k *check) {
		if k == nil || seen[k] {
			return
		}
		seen[k] = true
		if k.pattern != nil && !slices.Contains(out, k.pattern.re.String()) {
			out = append(out, k.pattern.re.String())
		}
		for _, c := range k.children() {
			walk(c)
		}
	}
	for _, d := range []*Document{docs.Service, docs.Sandbox} {
		d.ready()
		for _, k := range d.checks {
			walk(k)
		}
		for _, op := range d.params {
			for _, p := range op.params {
				walk(p.check)
			}
		}
	}
	slices.Sort(out)
	return out
}

// extraPatterns are shapes the documents do not use yet, to keep the
// fast form honest about folding, optional runs and refused shapes.
var extraPatterns = []string{
	`^(?i)abc$`, `^k$`, `^(?i)k$`, `^a?b$`, `^[ab]*a$`, `^x{2,3}y?$`, `^a(bc)?$`, `^(?:ab)?$`,
	`^[0-9]+(\.[0-9]{1,2})?$`, `^a.b$`, `^[^a]*$`, `^$`, `abc`, `^a|b$`, `^(a)(b)$`, `^a*(a)?$`,
	`^(ab|a)$`, `^(a|bc)(d|ef)$`, `^(x[0-9]*|y)(z)?$`, `^(a|b)(c|d)(e|f)$`, `^(ab|cd|ef|gh|ij)$`, `^(a|)b$`,
}

func TestPattern_EveryDocumentPatternHasAFastForm(t *testing.T) {
	pats := documentPatterns(t)
	if len(pats) == 0 {
		t.Fatal("no patterns found in the documents")
	}
	for _, expr := range pats {
		p, err := compilePattern(expr)
		if err != nil {
			t.Fatal(err)
		}
		if p.alts == nil {
			t.Errorf("%s has no fast form: every value it checks goes through the regexp engine", expr)
		}
	}
}

func TestPattern_FastFormTakesAlternativesUpToABound(t *testing.T) {
	tests := []struct {
		expr string
		alts int // 0: no fast form
	}{
		{`^[0-9]+(\.[0-9]{1,2})?$`, 1},
		{`^([1-9][0-9]{0,8}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$`, 3},
		{`^(a|bc)(d|ef)$`, 4},
		{`^(a|bc)(d|ef)(g|hi)$`, 0}, // 8 sequences: the regexp's one pass is cheaper
		{`^a|b$`, 0},                // each alternative is anchored at one end only
		{`^(a|)b$`, 2},              // "ab" or "b": an empty alternative adds no step
		{`^(|)$`, 0},                // but a sequence of no step is no fast form
	}
	for _, tc := range tests {
		p, err := compilePattern(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.alts) != tc.alts {
			t.Errorf("%s: %d alternatives in the fast form, want %d", tc.expr, len(p.alts), tc.alts)
		}
	}
}

func TestPattern_MatchesAsTheRegexp(t *testing.T) {
	tests := []struct {
		expr string
		in   []string
	}{
		{`^pay_[0-9A-Za-z]{24,}$`, []string{"pay_" + "abcdefghijklmnopqrstuvwx", "pay_abc", "pay_" + "abcdefghijklmnopqrstuvwxyz0123", "pay_" + "abcdefghijklmnopqrstuvw-", "Pay_abcdefghijklmnopqrstuvwx", "", "pay_abcdefghijklmnopqrstuvwxé"}},
		{`^[hH][tT][tT][pP][sS]?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=-]+)(|:[0-9]*)([/?#][A-Za-z0-9._~!$&'()*+,;=%:@/?#-]*)?$`, []string{"https://a.example", "HTTP://a", "https://a.example/x?y#z", "https:///x", "https://a b", "https://a@b", "https://a/\n", "https://a/é", "ftp://a", "https://:80",
			"https://[::1]:80/a", "https://a/b|c", "https://a/?q=a b", "https://a/%C3%A9", "https://a/'x'", `https://a/"x"`, "http://a]/x", "http://a/#x#y", "http://a/x[1]", "http://%41/x", "https://a:8080", "https://a:8080#f", "https://a#f", "https://a?q#f"}},
		{`^[0-9]+(\.[0-9]{1,2})?$`, []string{"1", "1.5", "1.55", "1.555", "1.", ".5", "", "12a"}},
		{`^([1-9][0-9]{0,8}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$`, []string{"1", "10.5", "10.50", "999999999.99",
			"1000000000", "0", "0.0", "0.00", "0.01", "0.1", "0.10", "0.001", "01", "00.50", "1.", ".5", "-1", "1e2", ""}},
		{`^(a|bc)(d|ef)$`, []string{"ad", "aef", "bcd", "bcef", "a", "bce", "ade"}},
		{`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`, []string{"2026-11-24T04:00:00Z", "2026-11-24T04:00:00", "2026-11-24 04:00:00Z"}},
		{`^(?i)k$`, []string{"k", "K", "\u212a", "x"}},
		{`^a*(a)?$`, []string{"", "a", "aa", "b"}},
		{`^(a|)b$`, []string{"ab", "b", "a", "", "aab"}},
	}
	for _, tc := range tests {
		p, err := compilePattern(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(tc.expr)
		for _, s := range tc.in {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, the regexp says %v", tc.expr, s, got, want)
			}
		}
	}
}

// FuzzPattern_MatchesAsTheRegexp matches every document pattern, and a
// few other shapes, against the regexp engine on the same string.
func FuzzPattern_MatchesAsTheRegexp(f *testing.F) {
	pats := append(documentPatterns(f), extraPatterns...)
	compiled := make([]*pattern, len(pats))
	for i, expr := range pats {
		p, err := compilePattern(expr)
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = p
	}
	for _, s := range []string{"pay_abcdefghijklmnopqrstuvwx", "https://a.example/x", "12.34", "2026-11-24T04:00:00Z", "US", "4242424242424242", "abc", "K"} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		for i, p := range compiled {
			if uint8(i) != which%uint8(len(compiled)) && which < 128 {
				continue // the low half picks one pattern, the high half tries all
			}
			if got, want := p.MatchString(s), p.re.MatchString(s); got != want {
				t.Fatalf("%s on %q: %v, the regexp says %v", pats[i], s, got, want)
			}
		}
	})
}

// BenchmarkPattern_Amount matches the amount's decimal strings by the
// fast form and by the regexp engine it stands in for.
func BenchmarkPattern_Amount(b *testing.B) {
	const expr = `^([1-9][0-9]{0,8}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$`
	p, err := compilePattern(expr)
	if err != nil || p.alts == nil {
		b.Fatalf("no fast form: %v", err)
	}
	in := []string{"10.50", "0.05", "999999999.99", "0.00"}
	for _, m := range []struct {
		name  string
		match func(string) bool
	}{{"fast", p.MatchString}, {"regexp", p.re.MatchString}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range in {
					if m.match(s) != (s != "0.00") {
						b.Fatalf("%q", s)
					}
				}
			}
		})
	}
}

func TestPlainURI_OnlyWhatURLParseTakes(t *testing.T) {
	tests := []struct {
		in    string
		plain bool
	}{
		{"https://a.example", true},
		{"http://127.0.0.1:8080/checkout/pay_x", true},
		{"https://shop.example.com/success?order=1234&x=%41", true},
		{"https://a.example/%zz", false},
		{"https://a.example#frag", false},
		{"https://", false},
		{"https://:80", false},
		{"ftp://a.example", false},
		{"HTTPS://a.example", false},
		{"https://a.example:123456", false},
		{"https://a b", false},
		{"https://user@a.example", false},
	}
	for _, tc := range tests {
		if got := paymock.PlainHTTPURL(tc.in); got != tc.plain {
			t.Errorf("PlainHTTPURL(%q) = %v, want %v", tc.in, got, tc.plain)
		}
	}
}

// FuzzPlainURI_OnlyWhatURLParseTakes checks the fast form of the uri
// format against url.Parse on the same string.
func FuzzPlainURI_OnlyWhatURLParseTakes(f *testing.F) {
	for _, s := range []string{"https://a.example", "http://127.0.0.1:8080/c/pay_x?a=b", "https://a.example/%41?%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !paymock.PlainHTTPURL(s) {
			return
		}
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
			t.Fatalf("PlainHTTPURL(%q) is true; url.Parse: %v, %+v", s, err, u)
		}
	})
}

// FuzzPlainDateTime_OnlyWhatKinTakes checks the fast form of the
// date-time format against the validator kin has registered for it.
func FuzzPlainDateTime_OnlyWhatKinTakes(f *testing.F) {
	for _, s := range []string{"2026-11-24T04:00:00Z", "2026-13-24T04:00:00Z", "2026-02-31T23:59:59Z", "0000-01-01T00:00:60Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !plainDateTime(s) {
			return
		}
		if err := openapi3.SchemaStringFormats["date-time"].Validate(s); err != nil {
			t.Fatalf("plainDateTime(%q) is true; kin: %v", s, err)
		}
	})
}

func TestPlainDateTime_TakesPaymocksTimes(t *testing.T) {
	for s, want := range map[string]bool{"2026-11-24T04:00:00Z": true, "2026-11-24T04:00:00.5Z": false, "2026-00-24T04:00:00Z": false, "2026-11-24T24:00:00Z": false, "2026-11-24 04:00:00Z": false} {
		if got := plainDateTime(s); got != want {
			t.Errorf("plainDateTime(%q) = %v, want %v", s, got, want)
		}
	}
}
