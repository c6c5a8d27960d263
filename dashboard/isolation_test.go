// Tests that keep merchants apart: CSRF on every form, others' IDs answered 404, no secrets in logs.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

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
