// Tests that the fast form of the email check agrees with net/mail.

package paymock

import (
	"net/mail"
	"strings"
	"testing"
)

// slowEmail is ValidEmail without its fast form.
func slowEmail(s string) bool {
	if !emailChars(s) {
		return false
	}
	a, err := mail.ParseAddress(s)
	if len(s) > 254 || err != nil || a.Address != s || a.Name != "" {
		return false
	}
	return domainLabels(s[strings.LastIndexByte(s, '@')+1:])
}

func TestValidEmail_FastFormAgreesWithNetMail(t *testing.T) {
	for _, s := range []string{"a@b.co", "first.last+tag@sub.example.com", "a@b", "a..b@c.de", ".a@b.co", "a.@b.co", "a@.b.co", "a@b.co.", "a@b..co",
		"a@@b.co", "@b.co", "a b@c.de", "A <a@b.co>", "a@b-c.de", "a@-b.de", "_@1.2", strings.Repeat("a", 250) + "@b.co"} {
		if len(s) <= 254 && plainEmail(s) && !slowEmail(s) {
			t.Errorf("plainEmail(%q) is true, net/mail refuses it", s)
		}
		if got, want := ValidEmail(s), slowEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, net/mail says %v", s, got, want)
		}
	}
	if !plainEmail("first.last+tag@sub.example.com") {
		t.Error("a plain address has no fast form")
	}
}

// FuzzValidEmail_FastFormAgreesWithNetMail compares ValidEmail, fast form
// included, with net/mail's answer on the same string.
func FuzzValidEmail_FastFormAgreesWithNetMail(f *testing.F) {
	for _, s := range []string{"a@b.co", "a.b+c@d-e.example", "a@b", "x@y..z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidEmail(s), slowEmail(s); got != want {
			t.Fatalf("ValidEmail(%q) = %v, net/mail says %v", s, got, want)
		}
	})
}
