// Tests of the cookie that makes Back load the pages again.

package backreload_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paymock/paymock/internal/backreload"
)

func TestTurn_SetsOneFreshCookieScopedAsAsked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope backreload.Scope
	}{
		{"a hosted page", backreload.Scope{Path: "/checkout/pay_eX4wfP3t53uWYeLytOXuTdQK", SameSite: http.SameSiteLaxMode}},
		{"the dashboard over https", backreload.Scope{Path: "/dashboard", Secure: true, SameSite: http.SameSiteStrictMode}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			w.Header().Add("Set-Cookie", "other=1; Path=/")
			backreload.Turn(w, tc.scope)
			got := backreload.Turned(w.Header())
			if len(got) != 1 {
				t.Fatalf("%d %s cookies in %q, want 1", len(got), backreload.CookieName, w.Header().Values("Set-Cookie"))
			}
			c := got[0]
			if c.Value == "" || c.Path != tc.scope.Path || c.Secure != tc.scope.Secure || c.SameSite != tc.scope.SameSite ||
				!c.HttpOnly || c.MaxAge != 60 {
				t.Errorf("cookie %s, want a value, Path %s, Secure %v, SameSite %v, HttpOnly and Max-Age 60",
					c.Raw, tc.scope.Path, tc.scope.Secure, tc.scope.SameSite)
			}
		})
	}
}

func TestTurned_ReadsOnlyThePageCookie(t *testing.T) {
	h := http.Header{"Set-Cookie": {"paymock_session=abc; Path=/dashboard", "paymock_page=1; Path=/dashboard", "paymock_page=2; Path=/dashboard"}}
	got := backreload.Turned(h)
	if len(got) != 2 || got[0].Value != "1" || got[1].Value != "2" {
		t.Errorf("read %v, want the two paymock_page cookies", got)
	}
	if got := backreload.Turned(http.Header{}); len(got) != 0 {
		t.Errorf("read %v from no cookies", got)
	}
}
