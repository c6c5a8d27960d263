// Tests of dashboard sessions over real HTTP: the cookie, expiry, revoked
// keys, and which session ends when the store is full.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
)

func TestSessionCookie_IsRandomHttpOnlyStrictAndSecureBehindHTTPS(t *testing.T) {
	tests := []struct {
		publicURL  string
		wantSecure bool
	}{
		{"http://sandbox.example", false},
		{"https://sandbox.example", true},
	}
	for _, tt := range tests {
		t.Run(tt.publicURL, func(t *testing.T) {
			h := newHarness(t, func(c *dashboard.Config) { c.PublicURL = tt.publicURL })
			b := h.browser()
			form := b.get("/dashboard/sign-in")
			signIn := form.header.Values("Set-Cookie")
			p := b.click(form, "", "", "sign-in", url.Values{"api_key": {acmeKey}})
			var session *http.Cookie
			for _, c := range (&http.Response{Header: p.header}).Cookies() {
				if c.Name == "paymock_session" {
					session = c
				}
			}
			if session == nil {
				t.Fatalf("no session cookie; Set-Cookie: %q", p.header.Values("Set-Cookie"))
			}
			if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure != tt.wantSecure || session.Path != "/dashboard" {
				t.Errorf("cookie %s: HttpOnly %v SameSite %v Secure %v Path %q; want true, Strict, %v, /dashboard",
					session.Raw, session.HttpOnly, session.SameSite, session.Secure, session.Path, tt.wantSecure)
			}
			if session.MaxAge <= 0 {
				t.Errorf("cookie %s: no Max-Age, want it to expire", session.Raw)
			}
			if len(session.Value) < 22 { // 128 bits in base64
				t.Errorf("cookie value %d characters: fewer than 128 bits", len(session.Value))
			}
			for _, c := range signIn {
				if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") || strings.Contains(c, "Secure") != tt.wantSecure {
					t.Errorf("sign-in cookie %q lacks the flags", c)
				}
			}
			// Two sign-ins never share a cookie.
			other := h.browser()
			o := other.click(other.get("/dashboard/sign-in"), "", "", "sign-in", url.Values{"api_key": {acmeKey}})
			for _, c := range (&http.Response{Header: o.header}).Cookies() {
				if c.Name == "paymock_session" && c.Value == session.Value {
					t.Error("two sign-ins got the same session cookie")
				}
			}
		})
	}
}

func TestSession_ExpiresWhenIdleOrTooOld(t *testing.T) {
	tests := []struct {
		name  string
		steps []time.Duration // pauses between requests; the last one ends it
	}{
		{"idle past 8h", []time.Duration{8*time.Hour + time.Second}},
		{"busy but past 24h", []time.Duration{7 * time.Hour, 7 * time.Hour, 7 * time.Hour, 4 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			b := h.browser()
			b.signIn(acmeKey)
			p := b.get("/dashboard/payments/" + pay.ID)
			for i, d := range tt.steps {
				h.sleep(d)
				if i < len(tt.steps)-1 {
					if got := b.get("/dashboard/clock"); got.status != http.StatusOK {
						t.Fatalf("after %v the session had already ended: %d", d, got.status)
					}
				}
			}
			// A post on the expired session changes nothing and says so.
			post := b.click(p, "", "", "complete", nil)
			if post.status != http.StatusUnauthorized || !strings.Contains(post.field("error"), "session has ended") {
				t.Errorf("post after expiry: %d %q, want 401 saying the session ended", post.status, post.field("error"))
			}
			if got, _ := h.fake.store.Get(context.Background(), "acme", pay.ID); got.Status != paymock.StatusPending {
				t.Errorf("the payment became %s on an expired session", got.Status)
			}
			// The post forgot the session; a fresh expired one shows its message on a GET.
			b2 := h.browser()
			b2.signIn(acmeKey)
			h.sleep(9 * time.Hour)
			g := b2.get("/dashboard/payments")
			if loc := g.header.Get("Location"); g.status != http.StatusSeeOther || !strings.Contains(loc, "ended=1") {
				t.Fatalf("GET after expiry: %d to %q, want 303 to the sign-in page, ended", g.status, loc)
			}
			if msg := b2.follow(g).field("flash"); !strings.Contains(msg, "session has ended") {
				t.Errorf("sign-in page after expiry says %q", msg)
			}
		})
	}
}

func TestSession_EndsWhenItsKeyIsRevoked(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	created := b.follow(b.click(b.get("/dashboard/api-keys"), "", "", "create-key", nil))
	newKey := created.field("new-key")

	other := h.browser()
	if p := other.signIn(newKey); p.field("merchant") != "acme" {
		t.Fatalf("the created key signs in as %q, want acme", p.field("merchant"))
	}
	keys := b.get("/dashboard/api-keys")
	var id string
	for _, row := range findAll(keys.doc, "data-field", "masked-key") {
		if strings.HasSuffix(textOf(row), newKey[len(newKey)-4:]) {
			id = attrOf(row.Parent.Parent, "data-key-id")
		}
	}
	if id == "" {
		t.Fatalf("the new key is not listed: %q", keys.text())
	}
	b.follow(b.click(keys, "data-key-id", id, "revoke-key", nil))
	if got := other.get("/dashboard/payments"); got.status != http.StatusSeeOther || !strings.Contains(got.header.Get("Location"), "ended=1") {
		t.Errorf("a session of the revoked key still works: %d %q", got.status, got.header.Get("Location"))
	}
	if got := b.get("/dashboard/payments"); got.status != http.StatusOK {
		t.Errorf("the session of the other key ended too: %d", got.status)
	}
}

func TestSessions_PastTheLimitTheLeastRecentlyUsedEnds(t *testing.T) {
	h := newHarness(t, func(c *dashboard.Config) { c.MaxSessions = 2 })
	first, second, third := h.browser(), h.browser(), h.browser()
	first.signIn(acmeKey)
	h.sleep(time.Minute)
	second.signIn(acmeKey)
	h.sleep(time.Minute)
	first.get("/dashboard/clock") // first is now the most recently used
	h.sleep(time.Minute)
	third.signIn(globexKey)
	for name, tt := range map[string]struct {
		b    *browser
		want int
	}{"first": {first, 200}, "second": {second, 303}, "third": {third, 200}} {
		if got := tt.b.get("/dashboard/clock").status; got != tt.want {
			t.Errorf("%s session: %d, want %d", name, got, tt.want)
		}
	}
}
