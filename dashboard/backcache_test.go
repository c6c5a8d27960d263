// Tests of paymock_page, the cookie that makes Back load the pages again after a post.

package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/paymock/paymock/internal/backreload"
)

// pageCookies are the paymock_page cookies an answer sets.
func pageCookies(p page) []*http.Cookie { return backreload.Turned(p.header) }

func TestPageCookie_ChangesOnEveryPostAndOnLeavingThePageAPostLedTo(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	var last page
	steps := []struct {
		name string
		do   func() page
		// changes: whether the answer sets the cookie (never more than
		// once: a second change in a post's answer made Chromium restore
		// the page the post led to).
		changes bool
	}{
		{"a page", func() page { return b.get("/dashboard/api-keys") }, false},
		{"a post", func() page { return b.click(last, "", "", "create-key", nil) }, true},
		{"the page the post led to, with the new key", func() page { return b.follow(last) }, false},
		{"the next page, leaving the new key", func() page { return b.get("/dashboard/clock") }, true},
		{"a page after it", func() page { return b.get("/dashboard/clock") }, false},
		{"a refused post", func() page {
			return b.click(last, "", "", "advance-clock", url.Values{"by": {"soon"}})
		}, true},
		{"a post from a page with a note", func() page {
			return b.click(b.follow(b.click(b.get("/dashboard/clock"), "", "", "advance-clock", url.Values{"by": {"1m"}})), "", "", "advance-clock", url.Values{"by": {"1m"}})
		}, true},
		{"the page it led to, leaving no note of its own", func() page { return b.follow(last) }, false},
		{"a post with a stale form", func() page { return b.post("/dashboard/api-keys", url.Values{"csrf": {"stale"}}) }, false},
	}
	values := map[string]bool{}
	for _, s := range steps {
		last = s.do()
		got := pageCookies(last)
		want := 0
		if s.changes {
			want = 1
		}
		if len(got) != want {
			t.Fatalf("%s (%s, status %d): paymock_page set %d times, want %d; Set-Cookie: %q",
				s.name, last.path, last.status, len(got), want, last.header.Values("Set-Cookie"))
		}
		for _, c := range got {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/dashboard" || c.MaxAge <= 0 || c.Value == "" {
				t.Errorf("%s: cookie %s, want a value, HttpOnly, SameSite=Strict, Path=/dashboard and a Max-Age", s.name, c.Raw)
			}
			if values[c.Value] {
				t.Errorf("%s: the cookie is set to %q again: it does not change", s.name, c.Value)
			}
			values[c.Value] = true
		}
	}
}
