// Tests of the dashboard while the sandbox's database cannot be reached: a
// session is kept rather than ended, pages and forms answer 503 and say
// why, nothing changes, and everything works again once it is back.

package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// runTimeKey creates a key of acme the way the API keys page does: unlike
// a configured key, it is looked up in the database on every request.
func runTimeKey(t *testing.T, h *harness) string {
	t.Helper()
	_, key, err := h.fake.CreateKey(context.Background(), &paymock.Merchant{ID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// sessionCleared reports an answer that deletes the session cookie.
func sessionCleared(p page) bool {
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "paymock_session" && (c.MaxAge < 0 || c.Value == "") {
			return true
		}
	}
	return false
}

// hasSession reports whether the browser still holds a session cookie.
func (b *browser) hasSession() bool {
	u, err := url.Parse(b.base + "/dashboard/")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "paymock_session" && c.Value != "" {
			return true
		}
	}
	return false
}

// state is everything an action could change in the fake sandbox, read
// around its database switch.
func (f *fakeSandbox) state(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for _, m := range []string{"acme", "globex"} {
		ps, _, err := f.store.List(context.Background(), m, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("payment %s %s", p.ID, p.Status))
		}
		lines = append(lines, fmt.Sprintf("clock %s %s", m, f.now(m)))
	}
	for _, k := range f.keys {
		lines = append(lines, fmt.Sprintf("key %s %s revoked=%t", k.id, k.merchantID, k.revoked))
	}
	for _, ep := range f.endpoints {
		lines = append(lines, fmt.Sprintf("endpoint %s disabled=%t deleted=%t", ep.ID, ep.Disabled, ep.deleted))
	}
	for _, e := range f.events {
		lines = append(lines, fmt.Sprintf("event %s deliveries=%d", e.ID, len(e.Deliveries)))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// outageSaid checks that an answer is the 503 of an outage, says so, and
// leaves the session cookie alone.
func outageSaid(t *testing.T, what string, p page, want string) {
	t.Helper()
	if p.status != http.StatusServiceUnavailable {
		t.Errorf("%s: status %d, want 503; page says %q", what, p.status, p.text())
		return
	}
	if !strings.Contains(p.text(), want) {
		t.Errorf("%s: page says %q, want %q in it", what, p.text(), want)
	}
	if sessionCleared(p) {
		t.Errorf("%s: the session cookie is cleared: %q", what, p.header.Values("Set-Cookie"))
	}
}

func TestOutage_SessionOfARunTimeKeyIsKeptAndWorksAgain(t *testing.T) {
	h := newHarness(t, nil)
	key := runTimeKey(t, h)
	b := h.browser()
	b.signIn(key)
	pages := allPages(h, b)
	h.fake.setDown(true)
	const shown = "The sandbox's database cannot be reached, so this page cannot be shown now. Try again shortly."
	for _, path := range append(pages, "/dashboard", "/dashboard/") {
		p := b.get(path)
		outageSaid(t, "GET "+path, p, shown)
		if p.field("merchant") != "" {
			t.Errorf("GET %s: the page names a merchant no one could check", path)
		}
		if retry := find(p.doc, "data-action", "retry"); retry == nil || attrOf(retry, "href") != path {
			t.Errorf("GET %s: no link to try the page again", path)
		}
	}
	signIn := b.get("/dashboard/sign-in?next=%2Fdashboard%2Fclock")
	outageSaid(t, "GET /dashboard/sign-in", signIn, "so your session cannot be checked now. You are still signed in")
	if find(signIn.doc, "data-action", "sign-in") == nil {
		t.Error("GET /dashboard/sign-in during the outage: no sign-in form")
	}
	if !b.hasSession() {
		t.Fatal("the browser lost its session cookie during the outage")
	}
	if logs := h.logs.String(); !strings.Contains(logs, "dashboard session kept") || strings.Contains(logs, "session ended") || strings.Contains(logs, key) {
		t.Errorf("the log does not say the session was kept, says it ended, or holds the key: %q", logs)
	}

	h.fake.setDown(false)
	for _, path := range pages {
		if p := b.get(path); p.status != http.StatusOK || p.field("merchant") != "acme" {
			t.Errorf("GET %s once the database is back: %d as %q, want 200 as acme", path, p.status, p.field("merchant"))
		}
	}
	if p := b.get("/dashboard/sign-in?next=%2Fdashboard%2Fclock"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/clock" {
		t.Errorf("GET /dashboard/sign-in once the database is back: %d to %q, want 303 to the page asked for", p.status, p.header.Get("Location"))
	}
}

func TestOutage_PagesOfAConfiguredKeySessionAre503AndSayWhatFailed(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey) // checked in memory: the session is read, its pages' data is not
	pages := allPages(h, b)
	h.fake.setDown(true)
	for _, path := range pages {
		p := b.get(path)
		if path == "/dashboard/clock" { // the clock is not read from the database
			if p.status != http.StatusOK {
				t.Errorf("GET %s: %d, want 200", path, p.status)
			}
			continue
		}
		outageSaid(t, "GET "+path, p, "The sandbox's database cannot be reached, so paymock could not ")
		if !strings.Contains(p.text(), "Try again shortly.") || strings.Contains(p.text(), "bug") {
			t.Errorf("GET %s: page says %q, want an outage, not a bug", path, p.text())
		}
		if p.field("merchant") != "acme" {
			t.Errorf("GET %s: no navigation for acme", path)
		}
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("an outage is logged as an error (a bug): %q", h.logs.String())
	}
	h.fake.setDown(false)
	for _, path := range pages {
		if p := b.get(path); p.status != http.StatusOK {
			t.Errorf("GET %s once the database is back: %d, want 200", path, p.status)
		}
	}
}

func TestOutage_SignInIs503AndTheSameFormWorksOnceTheDatabaseIsBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  func(*testing.T, *harness) string
		// during is the status of the sign-in during the outage, after
		// that of the same form sent again once the database is back.
		during, after int
	}{
		{"run-time key", runTimeKey, http.StatusServiceUnavailable, http.StatusSeeOther},
		{"unknown key (whose it is cannot be told)", func(*testing.T, *harness) string { return "sk_test_unknown_0123456789" }, http.StatusServiceUnavailable, http.StatusUnauthorized},
		{"configured key (checked in memory)", func(*testing.T, *harness) string { return acmeKey }, http.StatusSeeOther, http.StatusSeeOther},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			key := tt.key(t, h)
			b := h.browser()
			form := b.get("/dashboard/sign-in?next=%2Fdashboard%2Fapi-keys")
			h.fake.setDown(true)
			p := b.click(form, "", "", "sign-in", url.Values{"api_key": {key}})
			if p.status != tt.during {
				t.Fatalf("sign-in during the outage: %d, want %d; page says %q", p.status, tt.during, p.text())
			}
			if tt.during != http.StatusServiceUnavailable {
				return
			}
			const want = "The sandbox's database cannot be reached, so the key could not be checked. Try again shortly."
			if got := p.field("error"); got != want {
				t.Errorf("sign-in during the outage says %q, want %q", got, want)
			}
			if b.hasSession() {
				t.Error("a sign-in during the outage opened a session")
			}
			h.fake.setDown(false)
			again := b.click(p, "", "", "sign-in", url.Values{"api_key": {key}})
			if again.status != tt.after {
				t.Fatalf("the same form once the database is back: %d, want %d; page says %q", again.status, tt.after, again.text())
			}
			if tt.after == http.StatusSeeOther && again.header.Get("Location") != "/dashboard/api-keys" {
				t.Errorf("the same form once the database is back goes to %q, want the page asked for", again.header.Get("Location"))
			}
		})
	}
}

func TestOutage_ActionsChangeNothingAndAre503(t *testing.T) {
	for _, kind := range []struct {
		name string
		key  func(*testing.T, *harness) string
		want string
	}{
		// The session cannot be checked: nothing runs.
		{"run-time key", runTimeKey, "The sandbox's database cannot be reached, so nothing was changed. Try again shortly."},
		// The session is checked in memory; the change itself fails.
		{"configured key", func(*testing.T, *harness) string { return acmeKey }, "The sandbox's database cannot be reached, so paymock could not "},
	} {
		t.Run(kind.name, func(t *testing.T) {
			h := newHarness(t, nil)
			ctx, acme := context.Background(), &paymock.Merchant{ID: "acme"}
			key := kind.key(t, h)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			ep, err := h.fake.AddEndpoint(ctx, acme, "https://hooks.example/in")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.fake.SendTest(ctx, acme, ep.ID); err != nil { // a delivery to redeliver
				t.Fatal(err)
			}
			b := h.browser()
			b.signIn(key)
			payment, keys, hooks, clock := b.get("/dashboard/payments/"+pay.ID), b.get("/dashboard/api-keys"), b.get("/dashboard/webhooks"), b.get("/dashboard/clock")
			before := h.fake.state(t)

			h.fake.setDown(true)
			for _, a := range []struct {
				page   page
				action string
				set    url.Values
			}{
				{payment, "complete", nil},
				{payment, "fail", nil},
				{payment, "expire", nil},
				{keys, "create-key", nil},
				{keys, "revoke-key", nil},
				{hooks, "add-endpoint", url.Values{"url": {"https://hooks.example/other"}}},
				{hooks, "reveal-secret", nil},
				{hooks, "send-test", nil},
				{hooks, "redeliver", nil},
				{hooks, "disable-endpoint", nil},
				{hooks, "delete-endpoint", nil},
				{clock, "advance-clock", url.Values{"by": {"2h"}}},
			} {
				p := b.click(a.page, "", "", a.action, a.set)
				outageSaid(t, a.action, p, kind.want)
				if after := h.fake.state(t); after != before {
					t.Errorf("%s during the outage changed the sandbox:\n%s\nwas\n%s", a.action, after, before)
				}
			}
			h.fake.setDown(false)
			if after := h.fake.state(t); after != before {
				t.Errorf("the sandbox changed during the outage:\n%s\nwas\n%s", after, before)
			}
			if p := b.get("/dashboard/payments/" + pay.ID); p.status != http.StatusOK || !strings.Contains(p.text(), "pending") {
				t.Errorf("the payment once the database is back: %d %q, want 200 and still pending", p.status, p.text())
			}
			// The forms of before the outage still work: the session and
			// its CSRF token were kept.
			done := b.click(payment, "", "", "complete", nil)
			if done.status != http.StatusSeeOther || b.follow(done).field("flash") != "Payment completed." {
				t.Errorf("complete once the database is back: %d, want 303 and the payment completed", done.status)
			}
		})
	}
}
