// Tests of refused forms: post, redirect, get, as the hosted pages do, so
// that a reload shows the page instead of posting the form again.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

func TestActions_ARefusedFormRedirectsToItsPageWithTheReason(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	acme := &paymock.Merchant{ID: "acme"}
	if _, err := h.fake.AddEndpoint(ctx, acme, "https://hooks.example/in"); err != nil {
		t.Fatal(err)
	}
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	if _, err := h.fake.Act(ctx, acme, pay.ID, paymock.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	h.fake.mu.Lock()
	eventID := h.fake.events[len(h.fake.events)-1].ID
	h.fake.mu.Unlock()
	configured := h.fake.addReadOnly("acme", "https://config.example/hooks")
	limit := &paymock.Error{Type: paymock.InvalidRequest, Code: "limit_reached", Message: "the sandbox's limit is reached"}
	for _, method := range []string{"CreateKey", "RevokeKey", "Redeliver", "Advance"} {
		h.fake.refuse(method, limit)
	}
	b := h.browser()
	csrf := b.signIn(acmeKey).csrf()
	paymentPage := "/dashboard/payments/" + pay.ID
	tests := []struct {
		name   string
		path   string
		form   url.Values
		to     string // where the refusal is shown
		reason string // part of the error shown there
		input  string // the form field shown again with what was typed
		typed  string
	}{
		{"complete a completed payment", paymentPage, url.Values{"action": {"complete"}},
			paymentPage, "Nothing was changed", "", ""},
		{"no such payment action", paymentPage, url.Values{"action": {"refund"}},
			paymentPage, "There is no such action", "", ""},
		{"add a URL that is not http", "/dashboard/webhooks", url.Values{"url": {"ftp://hooks.example/in"}},
			"/dashboard/webhooks", "Nothing was added", "url", "ftp://hooks.example/in"},
		{"delete a configured endpoint from its page", "/dashboard/webhooks/" + configured + "/delete", url.Values{"next": {"/dashboard/webhooks/" + configured}},
			"/dashboard/webhooks/" + configured, "cannot be changed", "", ""},
		{"disable a configured endpoint", "/dashboard/webhooks/" + configured + "/disable", nil,
			"/dashboard/webhooks", "cannot be changed", "", ""},
		{"advance by nonsense", "/dashboard/clock/advance", url.Values{"by": {"soon"}},
			"/dashboard/clock", "did not move", "by", "soon"},
		{"advance past the sandbox's limit", "/dashboard/clock/advance", url.Values{"by": {"1h"}},
			"/dashboard/clock", "limit is reached", "by", "1h"},
		{"create a key past the limit", "/dashboard/api-keys", nil,
			"/dashboard/api-keys", "No key was created", "", ""},
		{"revoke a key the sandbox keeps", "/dashboard/api-keys/ak_acme/revoke", nil,
			"/dashboard/api-keys", "Nothing was revoked", "", ""},
		{"redeliver past the limit", "/dashboard/events/" + eventID + "/redeliver", url.Values{"next": {paymentPage}},
			paymentPage, "Nothing was sent", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{"csrf": {csrf}}
			for k, v := range tt.form {
				form[k] = v
			}
			p := b.post(tt.path, form)
			if want := tt.to + "?refused=1"; p.status != http.StatusSeeOther || p.header.Get("Location") != want {
				t.Fatalf("%d to %q, want 303 to %s; page says %q", p.status, p.header.Get("Location"), want, p.text())
			}
			shown := b.follow(p)
			if shown.status != http.StatusOK || !strings.Contains(shown.field("error"), tt.reason) {
				t.Errorf("the page shows %d %q, want 200 with %q", shown.status, shown.field("error"), tt.reason)
			}
			if tt.input != "" {
				if got := attrOf(find(shown.doc, "name", tt.input), "value"); got != tt.typed {
					t.Errorf("the form's %s is %q again, want %q", tt.input, got, tt.typed)
				}
			}
			if again := b.get(p.header.Get("Location")); again.status != http.StatusOK || again.field("error") != "" {
				t.Errorf("reloaded: %d %q, want the page without the refusal", again.status, again.field("error"))
			}
		})
	}
}
