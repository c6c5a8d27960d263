// Tests of signing in and out: the form, the page asked for, a wrong key, and open mode.

package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSignIn_OpensASessionAndSignOutEndsIt(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()

	home := b.get("/dashboard")
	if home.status != http.StatusOK || find(home.doc, "data-action", "sign-in") == nil {
		t.Fatalf("GET /dashboard: status %d, want the sign-in form; page: %q", home.status, home.text())
	}
	p := b.signIn(acmeKey)
	if p.path != "/dashboard/payments" || p.status != http.StatusOK {
		t.Fatalf("after sign-in: %s %d, want /dashboard/payments 200", p.path, p.status)
	}
	if got := p.field("merchant"); got != "acme" {
		t.Errorf("signed in as %q, want acme", got)
	}
	// The navigation links, named exactly.
	var names []string
	walk(p.doc, func(n *htmlNode) {
		if n.Data == "a" && n.Parent != nil && n.Parent.Data == "li" {
			names = append(names, textOf(n))
		}
	})
	if got, want := strings.Join(names, ","), "Payments,API keys,Webhooks,Clock,Requests,Report"; got != want {
		t.Errorf("navigation links %q, want %q", got, want)
	}

	out := b.click(p, "", "", "sign-out", nil)
	if loc := out.header.Get("Location"); out.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/sign-in") {
		t.Fatalf("sign-out: %d to %q, want 303 to the sign-in page", out.status, loc)
	}
	if msg := b.follow(out).field("flash"); msg != "You are signed out." {
		t.Errorf("after sign-out the page says %q", msg)
	}
	again := b.get("/dashboard/payments")
	if loc := again.header.Get("Location"); again.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/sign-in?") {
		t.Fatalf("payments after sign-out: %d to %q, want 303 to the sign-in form", again.status, loc)
	}
}

func TestSignIn_ComesBackToThePageAskedFor(t *testing.T) {
	h := newHarness(t, nil)
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	tests := []struct {
		name, next, want string
	}{
		{"a dashboard page", "/dashboard/payments/" + pay.ID, "/dashboard/payments/" + pay.ID},
		{"another site", "https://evil.example/dashboard", "/dashboard/payments"},
		{"a scheme-relative URL", "//evil.example/dashboard/x", "/dashboard/payments"},
		{"outside the dashboard", "/_sandbox/reset", "/dashboard/payments"},
		{"a climb out of it", "/dashboard/../_sandbox/reset", "/dashboard/payments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := h.browser()
			form := b.get("/dashboard/sign-in?" + url.Values{"next": {tt.next}}.Encode())
			p := b.click(form, "", "", "sign-in", url.Values{"api_key": {acmeKey}})
			if got := p.header.Get("Location"); p.status != http.StatusSeeOther || got != tt.want {
				t.Errorf("sign-in with next=%q: %d to %q, want 303 to %q", tt.next, p.status, got, tt.want)
			}
		})
	}
	// A page asked for while signed out brings the browser back to it.
	b := h.browser()
	first := b.get("/dashboard/payments/" + pay.ID)
	form := b.follow(first)
	p := b.follow(b.click(form, "", "", "sign-in", url.Values{"api_key": {acmeKey}}))
	if p.path != "/dashboard/payments/"+pay.ID {
		t.Errorf("after sign-in landed on %s, want the payment asked for", p.path)
	}
}

func TestSignIn_AnswersAWrongKeyWithOneMessage(t *testing.T) {
	h := newHarness(t, nil)
	var msgs []string
	for _, key := range []string{"sk_test_nobody_0123456789", "not a key!", ""} {
		b := h.browser()
		p := b.click(b.get("/dashboard/sign-in"), "", "", "sign-in", url.Values{"api_key": {key}})
		if p.status != http.StatusUnauthorized {
			t.Errorf("key %q: status %d, want 401", key, p.status)
		}
		for _, c := range p.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "paymock_session=") {
				t.Errorf("key %q: a session cookie was set: %s", key, c)
			}
		}
		msgs = append(msgs, p.field("error"))
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Errorf("wrong keys get different messages: %q", msgs)
		}
	}
	if strings.Contains(strings.ToLower(msgs[0]), "exist") || msgs[0] == "" {
		t.Errorf("message %q must say the key was not accepted, not whether it exists", msgs[0])
	}
}

func TestSignIn_RefusesAFormWithoutItsToken(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct {
		name  string
		token func(form page) string
	}{
		{"missing", func(page) string { return "" }},
		{"forged", func(page) string { return "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }},
		{"another browser's", func(page) string { return h.browser().get("/dashboard/sign-in").csrf() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := h.browser()
			form := b.get("/dashboard/sign-in")
			p := b.post("/dashboard/sign-in", url.Values{"api_key": {acmeKey}, "csrf": {tt.token(form)}})
			if p.status != http.StatusForbidden || !strings.Contains(p.field("error"), "you were not signed in") {
				t.Errorf("status %d, message %q; want 403 saying nothing happened", p.status, p.field("error"))
			}
			if got := b.get("/dashboard/payments"); got.status != http.StatusSeeOther {
				t.Errorf("a session was opened anyway: payments answered %d", got.status)
			}
		})
	}
}

func TestOpenMode_AnyWellFormedKeySignsInAsItsOwnMerchant(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.open = true
	b1, b2 := h.browser(), h.browser()
	m1, m2 := b1.signIn("tok1_anything").field("merchant"), b2.signIn("tok2_anything").field("merchant")
	if m1 == "" || m2 == "" || m1 == m2 {
		t.Errorf("open-mode merchants %q and %q, want two of their own", m1, m2)
	}
}
