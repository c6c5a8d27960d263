// Tests of the API keys, webhooks and clock pages and of the actions of their forms.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

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
		p := b.refused(b.click(page0, "", "", "add-endpoint", url.Values{"url": {bad}}))
		if !strings.Contains(p.field("error"), "Nothing was added") {
			t.Errorf("add %q: %q, want a message", bad, p.field("error"))
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
	forced := b.refused(b.post("/dashboard/webhooks/"+id+"/delete", url.Values{"csrf": {p.csrf()}}))
	if !strings.Contains(forced.field("error"), "cannot be changed") || find(forced.doc, "data-endpoint-id", id) == nil {
		t.Errorf("delete of a configured endpoint: %q, want the reason beside the endpoint", forced.field("error"))
	}
}

func TestWebhooks_RevealSaysWhetherTheSecretIsShownOrStaysMasked(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct {
		name, id   string
		flash      string // part of it
		notInFlash string
		masked     bool
	}{
		{"added", "", "Secret revealed below", "masked", false},
		{"configured", h.fake.addReadOnly("acme", "https://config.example/hooks"), "Secret revealed below", "masked", false},
	}
	b := h.browser()
	b.signIn(acmeKey)
	// The operator's secret, the same for every merchant, has no reveal:
	// the card says whose it is, and a post made anyway keeps it masked.
	operators := h.fake.addOperators("acme", "https://operator.example/hooks")
	list := b.get("/dashboard/webhooks")
	card := find(list.doc, "data-endpoint-id", operators)
	if find(card, "data-action", "reveal-secret") != nil || find(card, "data-field", "secret-shared") == nil {
		t.Errorf("the operator's endpoint offers a reveal or does not say its secret is shared: %q", textOf(card))
	}
	csrf := find(list.doc, "name", "csrf")
	p := b.follow(b.post("/dashboard/webhooks/"+operators+"/reveal", url.Values{"csrf": {attrOf(csrf, "value")}}))
	if flash := p.field("flash"); !strings.Contains(flash, "stays masked") {
		t.Errorf("a reveal of the operator's secret posted anyway: flash %q", flash)
	}
	if find(find(p.doc, "data-endpoint-id", operators), "data-field", "secret-masked") == nil {
		t.Error("the operator's secret, posted for anyway, is not marked masked")
	}
	added := b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.id
			for _, card := range findAll(added.doc, "class", "panel endpoint") {
				if id == "" && strings.Contains(textOf(card), "hooks.example/in") {
					id = attrOf(card, "data-endpoint-id")
				}
			}
			p := b.follow(b.click(b.get("/dashboard/webhooks"), "data-endpoint-id", id, "reveal-secret", nil))
			flash := p.field("flash")
			if !strings.Contains(flash, tt.flash) || strings.Contains(flash, tt.notInFlash) {
				t.Errorf("flash %q, want it to say %q", flash, tt.flash)
			}
			card := find(p.doc, "data-endpoint-id", id)
			if masked := find(card, "data-field", "secret-masked") != nil; masked != tt.masked || textOf(find(card, "data-field", "secret")) == "" {
				t.Errorf("secret %q, marked masked %v; want it shown, marked masked %v", textOf(find(card, "data-field", "secret")), masked, tt.masked)
			}
		})
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
		p := b.refused(b.click(clock, "", "", "advance-clock", url.Values{"by": {bad}}))
		if !strings.Contains(p.field("error"), "did not move") {
			t.Errorf("advance %q: %q, want a message", bad, p.field("error"))
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

func TestClock_FlashSaysHowFarInDaysHoursMinutesAndSeconds(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	tests := []struct{ by, want string }{
		{"2d", "Clock advanced by 2d to "},
		{"365d", "Clock advanced by 365d to "},
		{"1h30m", "Clock advanced by 1h30m to "},
		{"5400", "Clock advanced by 1h30m to "},
		{"90s", "Clock advanced by 1m30s to "},
		{"25h", "Clock advanced by 1d1h to "},
		{"86401", "Clock advanced by 1d1s to "},
		{"1s", "Clock advanced by 1s to "},
	}
	for _, tt := range tests {
		p := b.follow(b.click(b.get("/dashboard/clock"), "", "", "advance-clock", url.Values{"by": {tt.by}}))
		if got := p.field("flash"); !strings.HasPrefix(got, tt.want) {
			t.Errorf("advance %s: flash %q, want it to start %q", tt.by, got, tt.want)
		}
	}
}
