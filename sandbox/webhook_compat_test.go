// Webhook faults that rehearse forward compatibility, over real HTTP: a
// message of an unknown type and fields nobody knows, each signed so the
// reference Standard Webhooks library accepts it.

package sandbox

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paymock/paymock"
)

// newAnsweringReceiver is a raw receiver whose answer to each delivery is
// answer's.
func newAnsweringReceiver(t *testing.T, answer func(d rawDelivery) int) *rawReceiver {
	t.Helper()
	r := &rawReceiver{notify: make(chan rawDelivery, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("read delivery: %v", err)
		}
		d := rawDelivery{Body: body, Header: req.Header.Clone()}
		w.WriteHeader(answer(d))
		r.notify <- d
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// firstAttempts returns the attempts of the merchant's only event's first
// delivery, with the delivery's state.
func firstAttempts(t *testing.T, env *testEnv, key string) ([]map[string]any, string) {
	t.Helper()
	env.advance(key, 0) // waits for the sends under way to be recorded
	evs := env.events(key)
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	del := evs[0]["deliveries"].([]any)[0].(map[string]any)
	var out []map[string]any
	for _, a := range del["attempts"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out, del["state"].(string)
}

func TestWebhookFaults_UnknownTypeGoesFirstWithItsOwnIDAndVerifies(t *testing.T) {
	// The receiver refuses what it does not know, as a receiver should
	// not: the journal shows its 400, and the real event still arrives.
	rcv := newAnsweringReceiver(t, func(d rawDelivery) int {
		if strings.Contains(string(d.Body), `"type":"payment.completed"`) {
			return http.StatusNoContent
		}
		return http.StatusBadRequest
	})
	env := newEnv(t, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	rule := env.addFault(keyA, map[string]any{"target": "webhooks", "unknown_type": true, "times": 1})
	if rule["unknown_type"] != true {
		t.Errorf("rule as stored: %v", rule)
	}
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)

	unknown, real := rcv.next(t), rcv.next(t)
	var u, e struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(unknown.Body, &u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(real.Body, &e); err != nil {
		t.Fatal(err)
	}
	if u.Type != "payment.paymock_unknown" || u.Data.ID != id || !strings.HasPrefix(u.ID, "evt_") || len(u.ID) != 4+paymock.IDLength {
		t.Errorf("first message %s, want type payment.paymock_unknown about %s with an evt_ id", unknown.Body, id)
	}
	if e.Type != "payment.completed" || e.Data.ID != id {
		t.Errorf("second message %s, want the payment.completed event", real.Body)
	}
	if uid := unknown.Header.Get("webhook-id"); uid != u.ID || uid == real.Header.Get("webhook-id") {
		t.Errorf("webhook-ids %q then %q: want the unknown message's own id, then the event's", uid, real.Header.Get("webhook-id"))
	}
	for _, d := range []rawDelivery{unknown, real} {
		if err := verify(t, testSecret, d); err != nil {
			t.Errorf("%s does not verify: %v", d.Body, err)
		}
	}

	atts, state := firstAttempts(t, env, keyA)
	if state != "delivered" || len(atts) != 2 {
		t.Fatalf("delivery %s with attempts %v, want delivered after 2", state, atts)
	}
	f, _ := atts[0]["fault"].(map[string]any)
	if f == nil || f["rule_id"] != rule["id"] || f["unknown_type"] != true || f["webhook_id"] != u.ID ||
		!strings.Contains(f["effect"].(string), "payment.paymock_unknown") {
		t.Errorf("first attempt's fault %v, want rule %v, unknown_type and webhook_id %s", f, rule["id"], u.ID)
	}
	if atts[0]["status_code"] != 400.0 || atts[1]["status_code"] != 204.0 || atts[1]["fault"] != nil {
		t.Errorf("attempts %v, want the unknown message refused and the event taken plainly", atts)
	}

	// The dashboard's timeline says so on the attempt, too.
	page := signIn(t, env, keyA).get("/dashboard/payments/" + id)
	if !strings.Contains(page, "injected by fault rule "+rule["id"].(string)+": a message of type payment.paymock_unknown") {
		t.Errorf("the payment page does not show the fault on the attempt:\n%s", page)
	}

	// times: 1 — the next event goes out alone.
	id2 := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id2+"/complete", keyA, nil)
	if d := rcv.next(t); !strings.Contains(string(d.Body), id2) || !strings.Contains(string(d.Body), `"payment.completed"`) {
		t.Errorf("next delivery %s", d.Body)
	}
	rcv.none(t)
}

func TestWebhookFaults_ExtraFieldsAreSignedAndTheRetryIsPlain(t *testing.T) {
	// The receiver fails the first send, so the retry shows that the fault
	// shaped that send only.
	var sends atomic.Int32
	rcv := newAnsweringReceiver(t, func(rawDelivery) int {
		if sends.Add(1) == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	env := newEnv(t, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	rule := env.addFault(keyA, map[string]any{"target": "webhooks", "extra_fields": true, "event_type": "payment.failed"})
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/fail", keyA, nil)

	first := rcv.next(t)
	if err := verify(t, testSecret, first); err != nil {
		t.Errorf("the payload with extra fields does not verify: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(first.Body, &got); err != nil {
		t.Fatal(err)
	}
	data, _ := got["data"].(map[string]any)
	if _, ok := got["paymock_extra"].(string); !ok {
		t.Errorf("no top-level paymock_extra in %s", first.Body)
	}
	if _, ok := data["paymock_extra"].(map[string]any); !ok {
		t.Errorf("no object data.paymock_extra in %s", first.Body)
	}

	// Without the two fields, the payload is the event's, field for field.
	env.advance(keyA, 0)
	var stored map[string]any
	if err := json.Unmarshal(mustJSON(t, env.events(keyA)[0]["payload"]), &stored); err != nil {
		t.Fatal(err)
	}
	delete(got, "paymock_extra")
	delete(data, "paymock_extra")
	if env.normalize { // the journal's answer was turned back into the default form
		defaultForm(got, env.URL+"/checkout/")
	}
	if !reflect.DeepEqual(got, stored) {
		t.Errorf("payload less the extra fields:\n%v\nwant the event's:\n%v", got, stored)
	}
	if keys := slices.Sorted(maps.Keys(stored)); strings.Join(keys, ",") != "created_at,data,id,type" {
		t.Errorf("event keys %v", keys)
	}

	env.advance(keyA, 5) // the first retry is due 5 s later
	retry := rcv.next(t)
	if err := verify(t, testSecret, retry); err != nil {
		t.Errorf("retry does not verify: %v", err)
	}
	if strings.Contains(string(retry.Body), "paymock_extra") {
		t.Errorf("the retry carries the extra fields: %s", retry.Body)
	}
	atts, state := firstAttempts(t, env, keyA)
	if state != "delivered" || len(atts) != 2 {
		t.Fatalf("delivery %s with attempts %v, want delivered on the retry", state, atts)
	}
	f, _ := atts[0]["fault"].(map[string]any)
	if f == nil || f["rule_id"] != rule["id"] || f["extra_fields"] != true || !strings.Contains(f["effect"].(string), "data.paymock_extra") {
		t.Errorf("first attempt's fault %v, want rule %v with extra_fields", f, rule["id"])
	}
	if atts[1]["fault"] != nil {
		t.Errorf("the retry's record carries a fault: %v", atts[1])
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
