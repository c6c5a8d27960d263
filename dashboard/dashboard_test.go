// Tests of the dashboard over real HTTP: signing in and out, the session
// and its cookie, CSRF, merchants kept apart, the security headers, and
// every page and action against the sandbox behind the interfaces.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
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

// allPages are the pages of a signed-in merchant with data, by path.
func allPages(h *harness, b *browser) []string {
	pay := h.fake.addPayment(h.t, "acme", "ada@example.com", 1050, 0)
	ep, _ := h.fake.AddEndpoint(context.Background(), &paymock.Merchant{ID: "acme"}, "https://hooks.example/in")
	return []string{
		"/dashboard/payments", "/dashboard/payments/" + pay.ID, "/dashboard/api-keys", "/dashboard/webhooks",
		"/dashboard/webhooks/" + ep.ID, "/dashboard/clock", "/dashboard/requests", "/dashboard/report",
	}
}

func TestSecurityHeaders_OnEveryAnswer(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	const csp = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	check := func(what string, p page) {
		t.Helper()
		if got := p.header.Get("Content-Security-Policy"); got != csp {
			t.Errorf("%s: CSP %q", what, got)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: nosniff %q, referrer %q", what, p.header.Get("X-Content-Type-Options"), p.header.Get("Referrer-Policy"))
		}
	}
	for _, path := range append(allPages(h, b), "/dashboard/nowhere", "/dashboard/assets/dashboard.css") {
		check("GET "+path, b.get(path))
	}
	anon := h.browser()
	check("sign-in form", anon.get("/dashboard/sign-in"))
	check("signed-out redirect", anon.get("/dashboard/payments"))
	check("refused post", b.post("/dashboard/api-keys", nil))
	check("wrong method", b.get("/dashboard/sign-out"))
}

func TestPages_RenderWithData(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_2", At: "2026-03-01T12:00:02Z", Method: "POST", Path: "/api/v1/payments", Operation: "createPayment", Status: 400,
			Violations: []paymock.Violation{{Param: "customer.email", Code: "parameter_missing", Message: "customer.email is required"}}},
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments", Query: "page=1", Operation: "listPayments", Status: 200},
	}
	h.fake.reports["acme"] = dashboard.Report{
		Calls: 2, ViolatingCalls: 1,
		Coverage: dashboard.ReportCoverage{Operations: 2.0 / 3, OperationsExercised: 2, OperationsTotal: 3, Statuses: 0.25, StatusesExercised: 2, StatusesTotal: 8},
		Operations: []dashboard.ReportOperation{{OperationID: "createPayment", Method: "POST", Path: "/api/v1/payments", Calls: 1, ViolatingCalls: 1,
			Statuses:   []dashboard.ReportStatus{{Status: 400, Declared: true, Count: 1}, {Status: 201, Declared: true}},
			Violations: []dashboard.ReportViolation{{Param: "customer.email", Code: "parameter_missing", Message: "customer.email is required", Count: 1}}}},
	}
	b := h.browser()
	b.signIn(acmeKey)
	paths := allPages(h, b)
	wants := map[string][]string{
		"/dashboard/payments":  {"ada@example.com", "$10.50", "pending"},
		"/dashboard/api-keys":  {"sk_test_…cdef", "configuration"},
		"/dashboard/webhooks":  {"https://hooks.example/in", "enabled"},
		"/dashboard/clock":     {"1 Mar 2026, 12:00:00 UTC", "frozen"},
		"/dashboard/requests":  {"POST /api/v1/payments", "customer.email is required", "GET /api/v1/payments?page=1"},
		"/dashboard/report":    {"2 of 3 (67%)", "2 of 8 (25%)", "createPayment", "parameter_missing, 1×"},
		"/dashboard/webhooks/": {"https://hooks.example/in", "No deliveries yet"},
	}
	for _, path := range paths {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Errorf("GET %s: %d: %q", path, p.status, p.text())
			continue
		}
		key := path
		if strings.HasPrefix(path, "/dashboard/webhooks/") {
			key = "/dashboard/webhooks/"
		}
		for _, want := range wants[key] {
			if !strings.Contains(p.text(), want) {
				t.Errorf("GET %s: no %q on the page", path, want)
			}
		}
		if find(p.doc, "aria-current", "page") == nil && !strings.HasPrefix(path, "/dashboard/payments/") {
			t.Errorf("GET %s: no navigation entry is marked current", path)
		}
	}
	req := b.get("/dashboard/requests")
	if rows := findAll(req.doc, "data-violations", "1"); len(rows) != 1 || attrOf(rows[0], "data-request-id") != "req_2" {
		t.Errorf("requests: the violating request is not highlighted")
	}
	only := b.get("/dashboard/requests?violations=1")
	if strings.Contains(only.text(), "listPayments") {
		t.Error("requests with violations only: lists a request without any")
	}
}

func TestPayments_ListNewestFirstPagedFilteredAndSearched(t *testing.T) {
	h := newHarness(t, nil)
	var ids []string
	for i := range 25 {
		email := "buyer" + strconv.Itoa(i) + "@example.com"
		if i == 7 {
			email = "Grace.Hopper@Example.com"
		}
		ids = append(ids, h.fake.addPayment(t, "acme", email, paymock.Amount(100+i), i).ID)
	}
	h.fake.addPayment(t, "globex", "grace.hopper@example.com", 999, 0)
	m := &paymock.Merchant{ID: "acme"}
	if _, err := h.fake.Act(context.Background(), m, ids[3], paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	b.signIn(acmeKey)
	rows := func(p page) []string {
		var out []string
		walk(p.doc, func(n *htmlNode) {
			if n.Data == "tr" && hasAttr(n, "data-payment-id") {
				out = append(out, attrOf(n, "data-payment-id"))
			}
		})
		return out
	}
	first := b.get("/dashboard/payments")
	got := rows(first)
	if len(got) != 20 || got[0] != ids[24] || got[19] != ids[5] {
		t.Fatalf("page 1: %d rows from %v, want 20 newest first", len(got), got)
	}
	older := find(first.doc, "rel", "next")
	if older == nil {
		t.Fatal("page 1 has no link to older payments")
	}
	second := b.get(attrOf(older, "href"))
	if got := rows(second); len(got) != 5 || got[4] != ids[0] {
		t.Errorf("page 2: %v, want the 5 oldest", got)
	}
	filtered := b.click(first, "role", "search", "filter", url.Values{"status": {"failed"}})
	if got := rows(filtered); len(got) != 1 || got[0] != ids[3] {
		t.Errorf("status failed: %v, want [%s]", got, ids[3])
	}
	tests := []struct {
		query, status string
		want          []string
	}{
		{ids[12], "", []string{ids[12]}},
		{ids[12], "failed", nil},
		{"grace.hopper@example", "", []string{ids[7]}},
		{"GRACE", "pending", []string{ids[7]}},
		{"nobody@example.com", "", nil},
	}
	for _, tt := range tests {
		p := b.click(first, "role", "search", "filter", url.Values{"q": {tt.query}, "status": {tt.status}})
		if got := rows(p); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("search %q status %q: %v, want %v", tt.query, tt.status, got, tt.want)
		}
	}
	bad := b.get("/dashboard/payments?status=paid")
	if bad.status != http.StatusBadRequest || !strings.Contains(bad.field("error"), "no status") {
		t.Errorf("unknown status: %d %q, want 400 with a message", bad.status, bad.field("error"))
	}
}

func TestPayment_OutcomeButtonsMoveItAndTheTimelineShowsTheDelivery(t *testing.T) {
	for _, action := range []string{"complete", "fail", "expire"} {
		t.Run(action, func(t *testing.T) {
			h := newHarness(t, nil)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			b := h.browser()
			b.signIn(acmeKey)
			b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
			p := b.get("/dashboard/payments/" + pay.ID)
			if p.field("status") != "pending" || p.field("checkout-url") == "" {
				t.Fatalf("pending payment page: status %q, checkout link %q", p.field("status"), p.field("checkout-url"))
			}
			if link := find(p.doc, "data-field", "checkout-url"); attrOf(link, "href") != pay.CheckoutURL {
				t.Errorf("checkout link %q, want %q", attrOf(link, "href"), pay.CheckoutURL)
			}
			for _, a := range []string{"complete", "fail", "expire"} {
				if find(p.doc, "data-action", a) == nil {
					t.Errorf("pending payment has no %s button", a)
				}
			}
			done := b.follow(b.click(p, "", "", action, nil))
			want := map[string]string{"complete": "completed", "fail": "failed", "expire": "expired"}[action]
			if got := done.field("status"); got != want {
				t.Errorf("after %s: status %q, want %q", action, got, want)
			}
			if got, _ := h.fake.store.Get(context.Background(), "acme", pay.ID); string(got.Status) != want {
				t.Errorf("store has %s, want %s", got.Status, want)
			}
			ev := find(done.doc, "class", "tl-item tl-event")
			if ev == nil || !strings.Contains(textOf(ev), "payment."+want) || find(ev, "data-attempt", "1") == nil ||
				!strings.Contains(textOf(ev), "HTTP 204") {
				t.Errorf("timeline has no payment.%s event with its attempt: %q", want, textOf(ev))
			}
			for _, a := range []string{"complete", "fail", "expire"} {
				if find(done.doc, "data-action", a) != nil {
					t.Errorf("final payment still offers %s", a)
				}
			}
			// The same form again: the payment is final, nothing changes.
			again := b.click(p, "", "", "complete", nil)
			if again.status != http.StatusConflict || !strings.Contains(again.field("error"), "Nothing was changed") {
				t.Errorf("second outcome: %d %q, want 409 saying nothing changed", again.status, again.field("error"))
			}
			// Redeliver from the timeline adds a round.
			re := b.follow(b.click(done, "", "", "redeliver", nil))
			if !strings.Contains(textOf(find(re.doc, "class", "tl-item tl-event")), "round 2") {
				t.Errorf("after redeliver the timeline shows no round 2: %q", re.text())
			}
		})
	}
}

func TestPayment_TimelineSaysWhichFaultShapedAnAttempt(t *testing.T) {
	h := newHarness(t, nil)
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	b := h.browser()
	b.signIn(acmeKey)
	b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
	done := b.follow(b.click(b.get("/dashboard/payments/"+pay.ID), "", "", "complete", nil))
	if find(done.doc, "data-field", "attempt-fault") != nil {
		t.Errorf("a plain attempt shows a fault: %q", done.text())
	}
	const effect = "injected by fault rule flt_1: a message of type payment.paymock_unknown went out before the event"
	h.fake.mu.Lock()
	ev := h.fake.events[len(h.fake.events)-1]
	ev.Deliveries[0].Attempts[0].Fault = effect
	h.fake.mu.Unlock()
	again := b.get("/dashboard/payments/" + pay.ID)
	att := find(find(again.doc, "class", "tl-item tl-event"), "data-attempt", "1")
	if got := textOf(find(att, "data-field", "attempt-fault")); got != effect {
		t.Errorf("attempt shows fault %q, want %q (attempt: %q)", got, effect, textOf(att))
	}
}

func TestAPIKeys_NewKeyShownOnceAndRevokedKeyRefused(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	created := b.follow(b.click(b.get("/dashboard/api-keys"), "", "", "create-key", nil))
	key := created.field("new-key")
	if !strings.HasPrefix(key, "sk_test_") {
		t.Fatalf("new key %q", key)
	}
	if m, err := h.fake.Authenticate(context.Background(), key); err != nil || m.ID != "acme" {
		t.Fatalf("the new key authenticates as %v, %v; want acme", m, err)
	}
	if again := b.get("/dashboard/api-keys"); strings.Contains(again.body, key) {
		t.Error("the new key is shown a second time")
	}
	keys := b.get("/dashboard/api-keys")
	rows := findAll(keys.doc, "data-action", "revoke-key")
	if len(rows) != 2 {
		t.Fatalf("%d revoke buttons, want 2 (configured and created)", len(rows))
	}
	var id string
	walk(keys.doc, func(n *htmlNode) {
		if hasAttr(n, "data-key-id") && strings.Contains(textOf(n), key[len(key)-4:]) {
			id = attrOf(n, "data-key-id")
		}
	})
	revoked := b.follow(b.click(keys, "data-key-id", id, "revoke-key", nil))
	if !strings.Contains(revoked.field("flash"), "revoked") || find(revoked.doc, "data-key-id", id) != nil {
		t.Errorf("after revoke: flash %q, key still listed: %v", revoked.field("flash"), find(revoked.doc, "data-key-id", id) != nil)
	}
	if _, err := h.fake.Authenticate(context.Background(), key); err == nil {
		t.Error("the revoked key still authenticates")
	}
	unknown := b.post("/dashboard/api-keys/ak_nope/revoke", url.Values{"csrf": {keys.csrf()}})
	if unknown.status != http.StatusNotFound || !strings.Contains(unknown.field("message"), "nothing was revoked") {
		t.Errorf("unknown key id: %d %q, want 404 with a message", unknown.status, unknown.field("message"))
	}
}

func TestWebhooks_AddRevealTestRedeliverDisableDelete(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	page0 := b.get("/dashboard/webhooks")
	for _, bad := range []string{"ftp://hooks.example/in", "/relative/path", "hooks.example/in", "https://", "https://hooks.example/in#frag", ""} {
		p := b.click(page0, "", "", "add-endpoint", url.Values{"url": {bad}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.field("error"), "Nothing was added") {
			t.Errorf("add %q: %d %q, want 400 with a message", bad, p.status, p.field("error"))
		}
	}
	if eps, _ := h.fake.ListEndpoints(context.Background(), &paymock.Merchant{ID: "acme"}); len(eps) != 0 {
		t.Fatalf("bad URLs added endpoints: %v", eps)
	}
	added := b.follow(b.click(page0, "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
	card := find(added.doc, "class", "panel endpoint")
	if card == nil {
		t.Fatalf("no endpoint listed after add: %q", added.text())
	}
	id := attrOf(card, "data-endpoint-id")
	if added.field("secret") != "" {
		t.Error("the secret is shown before it is asked for")
	}
	revealed := b.follow(b.click(added, "data-endpoint-id", id, "reveal-secret", nil))
	secret := revealed.field("secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("revealed secret %q", secret)
	}
	if b.get("/dashboard/webhooks").field("secret") != "" {
		t.Error("the secret stays on the page after a reload")
	}
	tested := b.follow(b.click(revealed, "data-endpoint-id", id, "send-test", nil))
	del := find(tested.doc, "class", "delivery")
	if del == nil || !strings.Contains(textOf(del), "webhook.test") || find(del, "data-attempt", "1") == nil {
		t.Fatalf("no test delivery with its attempt: %q", tested.text())
	}
	redelivered := b.follow(b.click(tested, "data-endpoint-id", id, "redeliver", nil))
	if !strings.Contains(textOf(find(redelivered.doc, "class", "delivery")), "round 2") {
		t.Errorf("redeliver: no round 2 among the deliveries: %q", redelivered.text())
	}
	full := b.get("/dashboard/webhooks/" + id)
	if full.status != http.StatusOK || len(findAll(full.doc, "class", "delivery")) != 2 {
		t.Errorf("endpoint page: %d with %d deliveries, want 200 with 2", full.status, len(findAll(full.doc, "class", "delivery")))
	}
	disabled := b.follow(b.click(redelivered, "data-endpoint-id", id, "disable-endpoint", nil))
	if got := textOf(find(find(disabled.doc, "data-endpoint-id", id), "data-field", "endpoint-state")); got != "disabled" {
		t.Errorf("after disable the endpoint is %q", got)
	}
	enabled := b.follow(b.click(disabled, "data-endpoint-id", id, "enable-endpoint", nil))
	if got := textOf(find(find(enabled.doc, "data-endpoint-id", id), "data-field", "endpoint-state")); got != "enabled" {
		t.Errorf("after enable the endpoint is %q", got)
	}
	deleted := b.follow(b.click(enabled, "data-endpoint-id", id, "delete-endpoint", nil))
	if find(deleted.doc, "data-endpoint-id", id) != nil {
		t.Error("the deleted endpoint is still listed")
	}
	if got := b.get("/dashboard/webhooks/" + id); got.status != http.StatusNotFound {
		t.Errorf("deleted endpoint's page: %d, want 404", got.status)
	}
}

func TestWebhooks_ConfiguredEndpointIsReadOnly(t *testing.T) {
	h := newHarness(t, nil)
	id := h.fake.addReadOnly("acme", "https://config.example/hooks")
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/webhooks")
	card := find(p.doc, "data-endpoint-id", id)
	if card == nil || find(card, "data-action", "delete-endpoint") != nil || find(card, "data-action", "disable-endpoint") != nil {
		t.Fatal("a configured endpoint offers disable or delete")
	}
	if find(card, "data-action", "reveal-secret") == nil || find(card, "data-action", "send-test") == nil {
		t.Error("a configured endpoint offers no reveal or test")
	}
	forced := b.post("/dashboard/webhooks/"+id+"/delete", url.Values{"csrf": {p.csrf()}})
	if forced.status != http.StatusBadRequest || !strings.Contains(forced.field("error"), "cannot be changed") {
		t.Errorf("delete of a configured endpoint: %d %q, want 400 with the reason", forced.status, forced.field("error"))
	}
}

func TestClock_AdvanceMovesItAndExpiresWhatFellDue(t *testing.T) {
	h := newHarness(t, nil)
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	b := h.browser()
	b.signIn(acmeKey)
	clock := b.get("/dashboard/clock")
	if clock.field("clock-mode") != "frozen" || clock.field("now") != "1 Mar 2026, 12:00:00 UTC" {
		t.Fatalf("clock page: mode %q now %q", clock.field("clock-mode"), clock.field("now"))
	}
	for _, bad := range []string{"soon", "-5m", "0", "1.5s", "99999d", ""} {
		p := b.click(clock, "", "", "advance-clock", url.Values{"by": {bad}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.field("error"), "did not move") {
			t.Errorf("advance %q: %d %q, want 400 with a message", bad, p.status, p.field("error"))
		}
	}
	if now, _ := h.fake.Now(t.Context(), &paymock.Merchant{ID: "acme"}); !now.Equal(start) {
		t.Fatalf("bad input moved the clock to %v", now)
	}
	tests := []struct{ by, want string }{
		{"30m", "1 Mar 2026, 12:30:00 UTC"},
		{"1800", "1 Mar 2026, 13:00:00 UTC"},
		{"1d", "2 Mar 2026, 13:00:00 UTC"},
	}
	for _, tt := range tests {
		p := b.follow(b.click(b.get("/dashboard/clock"), "", "", "advance-clock", url.Values{"by": {tt.by}}))
		if got := p.field("now"); got != tt.want {
			t.Errorf("advance %s: now %q, want %q", tt.by, got, tt.want)
		}
	}
	if got := b.get("/dashboard/payments/" + pay.ID).field("status"); got != "expired" {
		t.Errorf("payment past its expiry after advancing: %q, want expired", got)
	}
	if globex, _ := h.fake.Now(t.Context(), &paymock.Merchant{ID: "globex"}); !globex.Equal(start) {
		t.Errorf("globex's clock moved with acme's: %v", globex)
	}
}

func TestCSRF_EveryFormRefusedWhenTokenMissingOrForged(t *testing.T) {
	h := newHarness(t, nil)
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	ep, _ := h.fake.AddEndpoint(context.Background(), &paymock.Merchant{ID: "acme"}, "https://hooks.example/in")
	evt, _ := h.fake.SendTest(context.Background(), &paymock.Merchant{ID: "acme"}, ep.ID)
	b := h.browser()
	b.signIn(acmeKey)
	other := h.browser()
	otherToken := other.signIn(acmeKey).csrf() // same merchant, another session
	forms := []struct {
		path string
		form url.Values
	}{
		{"/dashboard/payments/" + pay.ID, url.Values{"action": {"complete"}}},
		{"/dashboard/api-keys", nil},
		{"/dashboard/api-keys/ak_acme/revoke", nil},
		{"/dashboard/webhooks", url.Values{"url": {"https://new.example/in"}}},
		{"/dashboard/webhooks/" + ep.ID + "/reveal", nil},
		{"/dashboard/webhooks/" + ep.ID + "/disable", nil},
		{"/dashboard/webhooks/" + ep.ID + "/delete", nil},
		{"/dashboard/webhooks/" + ep.ID + "/test", nil},
		{"/dashboard/events/" + evt + "/redeliver", nil},
		{"/dashboard/clock/advance", url.Values{"by": {"1h"}}},
		{"/dashboard/sign-out", nil},
	}
	for _, token := range []string{"", "forged-token-forged-token-forged-token-xx", otherToken} {
		for _, f := range forms {
			form := url.Values{}
			for k, v := range f.form {
				form[k] = v
			}
			if token != "" {
				form.Set("csrf", token)
			}
			p := b.post(f.path, form)
			if p.status != http.StatusForbidden || !strings.Contains(p.field("message"), "nothing was changed") {
				t.Errorf("POST %s with token %.10q: %d %q, want 403 saying nothing changed", f.path, token, p.status, p.field("message"))
			}
		}
	}
	ctx := context.Background()
	m := &paymock.Merchant{ID: "acme"}
	if got, _ := h.fake.store.Get(ctx, "acme", pay.ID); got.Status != paymock.StatusPending {
		t.Errorf("payment is %s", got.Status)
	}
	if keys, _ := h.fake.ListKeys(ctx, m); len(keys) != 1 {
		t.Errorf("%d keys, want the 1 configured", len(keys))
	}
	if eps, _ := h.fake.ListEndpoints(ctx, m); len(eps) != 1 || eps[0].Disabled {
		t.Errorf("endpoints %+v, want the one, enabled", eps)
	}
	if evs := h.fake.events; len(evs) != 1 || len(evs[0].Deliveries) != 1 {
		t.Errorf("events changed: %d events", len(evs))
	}
	if now, _ := h.fake.Now(t.Context(), m); !now.Equal(start) {
		t.Errorf("clock moved to %v", now)
	}
	if got := b.get("/dashboard/payments"); got.status != http.StatusOK {
		t.Errorf("the forged sign-out ended the session: %d", got.status)
	}
}

func TestMerchants_AnotherMerchantsIDsAre404OnEveryPageAndForm(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	globex := &paymock.Merchant{ID: "globex"}
	pay := h.fake.addPayment(t, "globex", "ada@example.com", 1050, 0)
	ep, _ := h.fake.AddEndpoint(ctx, globex, "https://globex.example/in")
	if _, err := h.fake.Act(ctx, globex, h.fake.addPayment(t, "globex", "b@example.com", 1, 0).ID, paymock.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	evt := h.fake.events[0].ID
	key, _ := h.fake.ListKeys(ctx, globex)

	b := h.browser()
	token := b.signIn(acmeKey).csrf()
	gets := []string{"/dashboard/payments/" + pay.ID, "/dashboard/webhooks/" + ep.ID}
	for _, path := range gets {
		if p := b.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, "globex.example") || strings.Contains(p.body, "ada@example.com") {
			t.Errorf("GET %s: %d, want 404 with nothing of globex's", path, p.status)
		}
	}
	posts := []struct {
		path string
		form url.Values
	}{
		{"/dashboard/payments/" + pay.ID, url.Values{"action": {"complete"}}},
		{"/dashboard/api-keys/" + key[0].ID + "/revoke", nil},
		{"/dashboard/webhooks/" + ep.ID + "/reveal", nil},
		{"/dashboard/webhooks/" + ep.ID + "/disable", nil},
		{"/dashboard/webhooks/" + ep.ID + "/enable", nil},
		{"/dashboard/webhooks/" + ep.ID + "/delete", nil},
		{"/dashboard/webhooks/" + ep.ID + "/test", nil},
		{"/dashboard/events/" + evt + "/redeliver", nil},
	}
	for _, f := range posts {
		form := url.Values{"csrf": {token}}
		for k, v := range f.form {
			form[k] = v
		}
		p := b.post(f.path, form)
		if p.status != http.StatusNotFound || strings.Contains(p.body, "whsec_") {
			t.Errorf("POST %s: %d, want 404", f.path, p.status)
		}
	}
	// Nothing of globex's changed, and nothing leaked to acme's pages.
	if got, _ := h.fake.store.Get(ctx, "globex", pay.ID); got.Status != paymock.StatusPending {
		t.Errorf("globex's payment is %s", got.Status)
	}
	if _, err := h.fake.Authenticate(context.Background(), globexKey); err != nil {
		t.Errorf("globex's key was revoked: %v", err)
	}
	if eps, _ := h.fake.ListEndpoints(ctx, globex); len(eps) != 1 || eps[0].Disabled {
		t.Errorf("globex's endpoints: %+v", eps)
	}
	if evs, _ := h.fake.PaymentEvents(ctx, globex, h.fake.events[0].PaymentID); len(evs[0].Deliveries) != 1 {
		t.Errorf("globex's event was redelivered")
	}
	for _, path := range []string{"/dashboard/payments", "/dashboard/webhooks", "/dashboard/api-keys", "/dashboard/payments?q=ada@example.com"} {
		if p := b.get(path); strings.Contains(p.body, pay.ID) || strings.Contains(p.body, "globex.example") || strings.Contains(p.body, key[0].ID) {
			t.Errorf("GET %s shows globex's data", path)
		}
	}
}

func TestLogs_NeverHoldKeysOrSecrets(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	created := b.follow(b.click(b.get("/dashboard/api-keys"), "", "", "create-key", nil))
	newKey := created.field("new-key")
	added := b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
	revealed := b.follow(b.click(added, "", "", "reveal-secret", nil))
	secret := revealed.field("secret")
	h.browser().click(h.browser().get("/dashboard/sign-in"), "", "", "sign-in", url.Values{"api_key": {"sk_test_wrong_0123456789"}})
	logs := h.logs.String()
	if !strings.Contains(logs, "dashboard sign-in") {
		t.Fatalf("nothing was logged: %q", logs)
	}
	for _, s := range []string{acmeKey, newKey, secret, "sk_test_wrong_0123456789"} {
		if s == "" || strings.Contains(logs, s) {
			t.Errorf("the log holds %q (or it is empty)", s)
		}
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

func TestNew_RefusesAnIncompleteConfig(t *testing.T) {
	f := newFakeSandbox()
	full := dashboard.Config{Auth: f, Payments: f, Lifecycle: f, Clock: f, Events: f, Keys: f, Endpoints: f, Journal: f, StylesheetURL: "/assets/page.css"}
	tests := []struct {
		name string
		edit func(*dashboard.Config)
		want string
	}{
		{"no journal", func(c *dashboard.Config) { c.Journal = nil }, "Config.Journal"},
		{"no stylesheet", func(c *dashboard.Config) { c.StylesheetURL = "" }, "StylesheetURL"},
		{"a relative public URL", func(c *dashboard.Config) { c.PublicURL = "sandbox.example" }, "PublicURL"},
		{"a negative idle time", func(c *dashboard.Config) { c.SessionIdle = -time.Second }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := full
			tt.edit(&cfg)
			if _, err := dashboard.New(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error naming %s", err, tt.want)
			}
		})
	}
	if _, err := dashboard.New(full); err != nil {
		t.Errorf("New with every field: %v", err)
	}
}

func TestRequests_InjectedAnswersSayWhatInjectedThem(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_3", At: "2026-03-01T12:00:03Z", Method: "POST", Path: "/api/v1/payments", Operation: "createPayment", Status: 0,
			InjectedBy: "faults file faults.yaml:3: reset"},
		{ID: "req_2", At: "2026-03-01T12:00:02Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 429,
			InjectedBy: "control API rule flt_abc: status=429; retry_after=3"},
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 503,
			InjectedBy: "Paymock-Fault header: status=503"},
		{ID: "req_0", At: "2026-03-01T12:00:00Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 503},
	}
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/requests")
	want := map[string]string{
		"req_3": "Injected on purpose by the faults file faults.yaml:3: reset",
		"req_2": "Injected on purpose by the control API rule flt_abc: status=429; retry_after=3",
		"req_1": "Injected on purpose by the Paymock-Fault header: status=503",
		"req_0": "",
	}
	for id, note := range want {
		row := find(p.doc, "data-request-id", id)
		if row == nil {
			t.Fatalf("no row of %s", id)
		}
		got := textOf(find(row, "data-field", "injected-by"))
		if got != note {
			t.Errorf("%s says %q, want %q", id, got, note)
		}
		marked := attrOf(row, "class") == "injected" && strings.Contains(textOf(row), "injected")
		if marked != (note != "") {
			t.Errorf("%s: marked injected %v, want %v", id, marked, note != "")
		}
	}
	if !strings.Contains(textOf(find(p.doc, "data-request-id", "req_3")), "reset") {
		t.Error("a reset answer (status 0) does not say reset")
	}
}

func TestRequests_RoutesBreakOnlyAfterASlash(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments/{id}<b>x", Query: "page=2&per_page=1", Status: 404},
	}
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/requests")
	code := find(p.doc, "data-field", "route")
	if code == nil {
		t.Fatal("no route on the page")
	}
	// The pieces a line may end after, in order: each kept whole.
	var pieces []string
	walk(code, func(n *htmlNode) {
		if n.Data == "span" && attrOf(n, "class") == "nowrap" {
			pieces = append(pieces, textOf(n))
		}
		if n.Data == "b" {
			t.Error("the path's markup was not escaped")
		}
	})
	want := []string{"GET /", "api/", "v1/", "payments/", "{id}<b>x", "?page=2&", "per_page=1"}
	if !slices.Equal(pieces, want) {
		t.Errorf("pieces %q, want %q", pieces, want)
	}
	if textOf(code) != "GET /api/v1/payments/{id}<b>x?page=2&per_page=1" {
		t.Errorf("the route reads %q", textOf(code))
	}
}
