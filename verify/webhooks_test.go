// Tests of the webhook part: a paymock sender verifies clean, a sender
// signing another way is a signature drift.

package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/webhooks"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// webhookTarget is a paymock on a real clock (the payment verify makes
// expire does), with opts, whose merchant sends its webhooks to
// endpointURL, and the endpoint's secret.
func webhookTarget(t *testing.T, endpointURL func(ln net.Listener) string, opts ...paymocktest.Option) (*paymocktest.Server, net.Listener, string) {
	t.Helper()
	s := deployment(t, append([]paymocktest.Option{paymocktest.WithClock(lifecycle.ClockReal, time.Time{})}, opts...)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := controlClient(t, s).AddWebhookEndpoint(t.Context(), endpointURL(ln))
	if err != nil {
		t.Fatal(err)
	}
	return s, ln, ep.Secret
}

func unobserved(rep *Report) []string {
	var out []string
	for _, u := range rep.Unobserved {
		out = append(out, u.Point)
	}
	return out
}

func TestRun_APaymockSendingWebhooksVerifiesClean(t *testing.T) {
	s, ln, secret := webhookTarget(t, func(ln net.Listener) string { return "http://" + ln.Addr().String() + "/hooks" })
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Webhooks: &WebhookConfig{Listener: ln, Secret: secret, Wait: time.Minute}})
	out := text(t, rep)
	if rep.Failed() {
		t.Fatalf("a paymock sending webhooks fails verify:\n%s", out)
	}
	for _, p := range []string{"webhook.signature", "webhook.event_type", "webhook.payload", "webhook.headers.paymock_only", "webhook.unknown_types"} {
		if slices.Contains(unobserved(rep), p) {
			t.Errorf("%s was not compared:\n%s", p, out)
		}
	}
	if len(rep.Checks) != 15 {
		t.Errorf("%d checks, want 15 (create.expiring added):\n%s", len(rep.Checks), out)
	}
}

func TestRun_ASenderSigningAnotherWayIsASignatureDrift(t *testing.T) {
	// The deployment signs with a hex HMAC of the body in X-Signature:
	// a relay re-signs paymock's deliveries that way.
	var verifyURL atomic.Pointer[string] // set once the listener is known
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte("another-secret"))
		mac.Write(body)
		req, _ := http.NewRequest(http.MethodPost, *verifyURL.Load(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}))
	defer relay.Close()
	s, ln, secret := webhookTarget(t, func(ln net.Listener) string {
		u := "http://" + ln.Addr().String() + "/hooks"
		verifyURL.Store(&u)
		return relay.URL
	})
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Webhooks: &WebhookConfig{Listener: ln, Secret: secret, Wait: time.Minute}})
	out := text(t, rep)
	drift := driftOf(rep)
	if d := drift["webhook.signature"]; d.Paymock != "Standard Webhooks (webhook-signature v1 verifies)" ||
		d.Deployment != "not Standard Webhooks: no webhook-id, webhook-timestamp and webhook-signature headers" {
		t.Errorf("signature drift %+v:\n%s", d, out)
	}
	if d := drift["webhook.headers.deployment_only"]; d.Deployment != "X-Signature" {
		t.Errorf("header drift %+v:\n%s", d, out)
	}
	if d := drift["webhook.headers.paymock_only"]; d.Paymock != "Webhook-Id, Webhook-Signature, Webhook-Timestamp" {
		t.Errorf("header drift %+v:\n%s", d, out)
	}
	if _, ok := drift["webhook.payload"]; ok || len(rep.Violations) > 0 {
		t.Errorf("drift on the payload, or violations, from a relay that keeps the body:\n%s", out)
	}
}

func TestPoints_AFlagAPointSaysItNeedsLetsAFreshRunCompareIt(t *testing.T) {
	s, ln, secret := webhookTarget(t, func(ln net.Listener) string { return "http://" + ln.Addr().String() + "/hooks" })
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Card: true,
		Webhooks: &WebhookConfig{Listener: ln, Secret: secret, Wait: time.Minute}})
	for _, p := range Points() {
		for _, flag := range []string{"--listen", "--card"} {
			if strings.Contains(p.Needs, flag) && slices.Contains(unobserved(rep), p.ID) {
				t.Errorf("%s says it is compared when the run saw %q, yet a run with --listen --card did not compare it", p.ID, p.Needs)
			}
		}
	}
}

func TestRun_APayloadWithoutPaymentLinkNamesThePaymentLinkVariant(t *testing.T) {
	s, ln, secret := webhookTarget(t, func(ln net.Listener) string { return "http://" + ln.Addr().String() + "/hooks" },
		paymocktest.WithVariants("payment_link=omit"))
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Webhooks: &WebhookConfig{Listener: ln, Secret: secret, Wait: time.Minute}})
	out := text(t, rep)
	if d, ok := driftOf(rep)["webhook.payload"]; !ok || d.Variant != "payment_link=omit" {
		t.Errorf("payload drift %+v, want one --variants payment_link=omit gives:\n%s", d, out)
	}
	if rep.Settings.Variants != "payment_link=omit" || len(rep.Settings.Unmatched) > 0 {
		t.Errorf("closest paymock %q, no setting changes %q; want payment_link=omit and nothing else:\n%s",
			rep.Settings.Variants, rep.Settings.Unmatched, out)
	}
	// The row names the field, not two whole bodies side by side.
	if !regexp.MustCompile(`(?m)^  webhook\.payload +data\.payment_link +none$`).MatchString(out) {
		t.Errorf("no drift row webhook.payload data.payment_link none in:\n%s", out)
	}
}

func TestRun_AWrongWebhookSecretIsSaidToBeAnotherSecretNotAnotherScheme(t *testing.T) {
	s, ln, _ := webhookTarget(t, func(ln net.Listener) string { return "http://" + ln.Addr().String() + "/hooks" })
	wrong, err := webhooks.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Webhooks: &WebhookConfig{Listener: ln, Secret: wrong, Wait: time.Minute}})
	if d := driftOf(rep)["webhook.signature"]; d.Deployment != "Standard Webhooks, signed with another secret than the --webhook-secret given" {
		t.Errorf("signature drift %+v, want it to say the secret differs:\n%s", d, text(t, rep))
	}
}

func TestSignatureReason_ASignatureNotOfTheV1FormIsNotAnotherSecret(t *testing.T) {
	refused := fmt.Errorf("unable to verify payload, err: %w", standardwebhooks.ErrNoMatchingSignature)
	for sig, want := range map[string]string{
		"v1,abc":     "webhook-signature holds no v1,<base64 HMAC-SHA256>",
		"v2,AAAA":    "webhook-signature holds no v1,<base64 HMAC-SHA256>",
		"sha256=abc": "webhook-signature holds no v1,<base64 HMAC-SHA256>",
		"v1,abc v1,QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=": errOtherSecret.Error(),
	} {
		h := http.Header{}
		h.Set("webhook-signature", sig)
		if got := signatureReason(refused, h); got.Error() != want {
			t.Errorf("%q: %q, want %q", sig, got, want)
		}
	}
}

func TestRun_WithoutListenTheWebhookPartIsSkippedAndSaysSo(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey})
	if rep.Webhooks != "skipped: no --listen (the webhook points are not compared)" {
		t.Errorf("webhooks: %q", rep.Webhooks)
	}
	for _, p := range []string{"webhook.signature", "webhook.event_type", "webhook.payload"} {
		if !slices.Contains(unobserved(rep), p) {
			t.Errorf("%s compared without --listen", p)
		}
	}
}

func TestPayloadFields_EachSideNamesTheFieldsTheOtherLacksAtTheirTop(t *testing.T) {
	hook := func(body string) *observations {
		return &observations{expiringID: "pay_1", webhooks: []delivery{{paymentID: "pay_1", body: []byte(body)}}}
	}
	paymock := hook(`{"type":"payment.expired","data":{"id":"pay_1","payment_link":"u","customer":{"email":"e"},"items":[{"a":1}]}}`)
	for _, tc := range []struct {
		name, deployment, wantPM, wantDep string
	}{
		{"the same fields", `{"type":"x","data":{"id":"y","payment_link":"","customer":{"email":""},"items":[{"a":2}]}}`, "none", "none"},
		{"one field left out", `{"type":"x","data":{"id":"y","customer":{"email":""},"items":[{"a":2}]}}`, "data.payment_link", "none"},
		{"a field of its own in an array", `{"type":"x","data":{"id":"y","payment_link":"","customer":{"email":""},"items":[{"a":2,"b":3}]}}`, "none", "data.items.*.b"},
		{"another envelope", `{"event":"x","payload":{"id":"y"}}`, "data, type", "event, payload"},
		{"an object as a string", `{"type":"x","data":{"id":"y","payment_link":"","customer":"cus_1","items":[{"a":2}]}}`, "data.customer.email", "none"},
		{"not JSON", `type=x`, "JSON", "(not JSON)"},
	} {
		pm, dep := payloadFields(paymock, hook(tc.deployment))
		if pm != tc.wantPM || dep != tc.wantDep {
			t.Errorf("%s: paymock %q, deployment %q; want %q and %q", tc.name, pm, dep, tc.wantPM, tc.wantDep)
		}
	}
}
