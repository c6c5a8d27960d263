// The developer section over the control API: API keys and webhook
// endpoints made at run time, over real HTTP, answers validated.

package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// rawReceiver keeps every request it gets, unverified, so a test can
// verify with a secret it learns later, or see a signature fail.
type rawReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []rawDelivery
	notify chan rawDelivery
}

type rawDelivery struct {
	Body   []byte
	Header http.Header
}

func newRawReceiver(t *testing.T) *rawReceiver {
	r := &rawReceiver{notify: make(chan rawDelivery, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := rawDelivery{Body: body, Header: req.Header.Clone()}
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		r.notify <- d
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// next waits for the next delivery.
func (r *rawReceiver) next(t *testing.T) rawDelivery {
	t.Helper()
	select {
	case d := <-r.notify:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery came")
		return rawDelivery{}
	}
}

// none checks that nothing more came.
func (r *rawReceiver) none(t *testing.T) {
	t.Helper()
	select {
	case d := <-r.notify:
		t.Errorf("an unexpected delivery came: %s", d.Body)
	case <-time.After(200 * time.Millisecond):
	}
}

func verify(t *testing.T, secret string, d rawDelivery) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(d.Body, d.Header)
}

func TestAPIKeys_CreateUseListRevoke(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	st, k, h := env.do("POST", "/_sandbox/api-keys", keyA, nil)
	if st != http.StatusCreated {
		t.Fatalf("create key: %d %v", st, k)
	}
	key := k["key"].(string)
	if !strings.HasPrefix(key, "sk_test_") || !strings.HasSuffix(k["masked"].(string), key[len(key)-4:]) || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("new key %v, Cache-Control %q", k, h.Get("Cache-Control"))
	}
	// The new key is the same merchant's.
	if p := env.get(key, id); p["id"] != id {
		t.Fatalf("the new key does not see the merchant's payment: %v", p)
	}
	_, list, _ := env.do("GET", "/_sandbox/api-keys", keyA, nil)
	found := false
	for _, it := range list["items"].([]any) {
		item := it.(map[string]any)
		if _, whole := item["key"]; whole {
			t.Errorf("a listed key shows the whole key: %v", item)
		}
		found = found || item["id"] == k["id"]
	}
	if !found {
		t.Errorf("the new key is not listed: %v", list)
	}
	// Another merchant cannot revoke it; its owner can, and it is refused at once.
	if st, _, _ := env.do("DELETE", "/_sandbox/api-keys/"+k["id"].(string), keyB, nil); st != http.StatusNotFound {
		t.Errorf("revoked by another merchant: %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/api-keys/"+k["id"].(string), keyA, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	if st, _, _ := env.do("GET", "/api/v1/payments/"+id, key, nil); st != http.StatusUnauthorized {
		t.Errorf("a revoked key answered %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/api-keys/ak_nope", keyA, nil); st != http.StatusNotFound {
		t.Errorf("unknown key id: %d", st)
	}
	if strings.Contains(env.logs.String(), key) {
		t.Error("a created key was logged")
	}
}

func TestAPIKeys_ConfiguredKeysAreListedAndRevocable(t *testing.T) {
	env := newEnv(t, withMerchants(paymock.Merchant{Name: "acme", APIKeys: []string{"sk_test_acme_first_1111", "sk_test_acme_second_2222"}}))
	_, list, _ := env.do("GET", "/_sandbox/api-keys", "sk_test_acme_first_1111", nil)
	items := list["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["source"] != "config" {
		t.Fatalf("keys %v", items)
	}
	var other string
	for _, it := range items {
		if m := it.(map[string]any); strings.HasSuffix(m["masked"].(string), "2222") {
			other = m["id"].(string)
		}
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/api-keys/"+other, "sk_test_acme_first_1111", nil); st != http.StatusNoContent {
		t.Fatalf("revoke a configured key: %d", st)
	}
	if st, _, _ := env.do("GET", "/api/v1/payments", "sk_test_acme_second_2222", nil); st != http.StatusUnauthorized {
		t.Errorf("a revoked configured key answered %d", st)
	}
}

func TestWebhookEndpoints_AddedOnesReceiveLikeConfiguredOnes(t *testing.T) {
	env := newEnv(t)
	rcv := newRawReceiver(t)
	st, ep, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": rcv.srv.URL + "/hooks"})
	if st != http.StatusCreated || !strings.HasPrefix(ep["secret"].(string), "whsec_") || ep["read_only"] != false {
		t.Fatalf("add endpoint: %d %v", st, ep)
	}
	secret := ep["secret"].(string)
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	d := rcv.next(t)
	if err := verify(t, secret, d); err != nil {
		t.Fatalf("the delivery does not verify with the endpoint's secret: %v", err)
	}
	if !bytes.Contains(d.Body, []byte(id)) {
		t.Errorf("delivery for another payment: %s", d.Body)
	}
	evs := env.events(keyA)
	if dels := evs[0]["deliveries"].([]any); dels[0].(map[string]any)["endpoint_id"] != ep["id"] {
		t.Errorf("delivery names endpoint %v, want %v", dels[0], ep["id"])
	}
	// Another merchant neither sees nor deletes it; once deleted, nothing more comes.
	if _, l, _ := env.do("GET", "/_sandbox/webhook-endpoints", keyB, nil); len(l["items"].([]any)) != 0 {
		t.Errorf("another merchant sees %v", l)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/webhook-endpoints/"+ep["id"].(string), keyB, nil); st != http.StatusNotFound {
		t.Errorf("deleted by another merchant: %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/webhook-endpoints/"+ep["id"].(string), keyA, nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d", st)
	}
	id2 := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id2+"/fail", keyA, nil)
	rcv.none(t)
}

func TestWebhookEndpoints_BadInputChangesNothing(t *testing.T) {
	env := newEnv(t)
	for _, u := range []string{"ftp://example.com/hooks", "/hooks", "http://", "https://user:pw@example.com/h", "not a url"} {
		st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": u})
		if st != http.StatusBadRequest || errorOf(t, body)["param"] != "url" {
			t.Errorf("%q: %d %v", u, st, body)
		}
	}
	if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": "https://a.example/h", "secret": "x"}); st != http.StatusBadRequest {
		t.Errorf("unknown field: %d %v", st, body)
	}
	if _, l, _ := env.do("GET", "/_sandbox/webhook-endpoints", keyA, nil); len(l["items"].([]any)) != 0 {
		t.Errorf("refused endpoints were kept: %v", l)
	}
}

func TestWebhookEndpoints_ConfiguredOnesAreReadOnly(t *testing.T) {
	rcv := newReceiver(t, nil)
	env := newEnv(t, withWebhooks(nil, webhookEndpoint(rcv)))
	_, l, _ := env.do("GET", "/_sandbox/webhook-endpoints", keyA, nil)
	items := l["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["read_only"] != true || items[0].(map[string]any)["secret"] != paymock.MaskKey(testSecret) {
		t.Fatalf("endpoints %v", items)
	}
	st, body, _ := env.do("DELETE", "/_sandbox/webhook-endpoints/"+items[0].(map[string]any)["id"].(string), keyA, nil)
	if st != http.StatusBadRequest || errorOf(t, body)["code"] != "endpoint_read_only" {
		t.Errorf("delete a configured endpoint: %d %v", st, body)
	}
}

func TestWebhookEndpoints_TestEventVerifiesWithTheEndpointsSecret(t *testing.T) {
	env := newEnv(t)
	rcv := newRawReceiver(t)
	_, ep, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": rcv.srv.URL})
	st, ev, _ := env.do("POST", "/_sandbox/webhook-endpoints/"+ep["id"].(string)+"/test", keyA, nil)
	if st != http.StatusAccepted || ev["type"] != "webhook.test" {
		t.Fatalf("test event: %d %v", st, ev)
	}
	d := rcv.next(t)
	if err := verify(t, ep["secret"].(string), d); err != nil {
		t.Fatalf("the test event does not verify: %v", err)
	}
	if !bytes.Contains(d.Body, []byte(`"type":"webhook.test"`)) || !bytes.Contains(d.Body, []byte(ep["id"].(string))) {
		t.Errorf("test event body %s", d.Body)
	}
	if st, _, _ := env.do("POST", "/_sandbox/webhook-endpoints/"+ep["id"].(string)+"/test", keyB, nil); st != http.StatusNotFound {
		t.Errorf("another merchant's endpoint: %d", st)
	}
}
