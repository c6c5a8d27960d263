// Tests of the event journal: listing, reset, the record's JSON, copies, and its bound.

package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestEventsAreNewestFirstPagedAndPerMerchant(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	for i := range 5 {
		publish(t, d, merchant("acme"), event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i)))
	}
	publish(t, d, merchant("globex"), event(t, "globex", "evt_globex", "pay_g"))

	for _, tc := range []struct {
		name          string
		merchant      string
		offset, limit int
		want          []string
		wantTotal     int
	}{
		{"first page", "acme", 0, 2, []string{evID(4), evID(3)}, 5},
		{"second page", "acme", 2, 2, []string{evID(2), evID(1)}, 5},
		{"last partial page", "acme", 4, 2, []string{evID(0)}, 5},
		{"past the end", "acme", 10, 2, []string{}, 5},
		{"no limit", "acme", 0, 0, []string{evID(4), evID(3), evID(2), evID(1), evID(0)}, 5},
		{"other merchant sees only its own", "globex", 0, 10, []string{"evt_globex"}, 1},
		{"unknown merchant sees nothing", "initech", 0, 10, []string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, total := events(t, d, tc.merchant, tc.offset, tc.limit)
			got := []string{}
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) || total != tc.wantTotal {
				t.Errorf("Events = %v (total %d), want %v (total %d)", got, total, tc.want, tc.wantTotal)
			}
		})
	}
	if _, ok, _ := d.Event(context.Background(), "globex", evID(0)); ok {
		t.Error("globex can read acme's event")
	}
}

func TestResetForgetsEventsAndDropsRetries(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusInternalServerError })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second}})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_old", "pay_1"))
	publish(t, d, merchant("globex"), event(t, "globex", "evt_kept", "pay_g"))
	idle(t, d, "acme")

	d.Reset(context.Background(), "acme")
	if recs, total := events(t, d, "acme", 0, 10); total != 0 || len(recs) != 0 {
		t.Errorf("after Reset: %d events (total %d)", len(recs), total)
	}
	if _, ok, _ := d.Event(context.Background(), "acme", "evt_old"); ok {
		t.Error("Event still finds a reset event")
	}
	if _, err := d.Redeliver(context.Background(), "acme", "evt_old"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("Redeliver of a reset event = %v, want ErrNotFound", err)
	}
	if _, total := events(t, d, "globex", 0, 10); total != 1 {
		t.Error("Reset of acme touched globex")
	}
	clock.Advance("acme", time.Minute)
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 1 {
		t.Errorf("receiver got %d requests, want the dropped retry not to be sent", n)
	}
	// The id is free again, and a new event of the same payment is not held
	// back by the forgotten one.
	publish(t, d, m, event(t, "acme", "evt_old", "pay_1"))
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
}

func TestEventWithoutEndpointsIsRecorded(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ev := event(t, "acme", "evt_nowhere", "pay_1")
	publish(t, d, merchant("acme"), ev)
	idle(t, d, "acme")
	r := record(t, d, "acme", ev.ID)
	if r.Deliveries == nil || len(r.Deliveries) != 0 || r.PaymentID != "pay_1" || r.Type != paymock.EventCompleted {
		t.Errorf("record = %+v, want the event with an empty delivery list", r)
	}
	if err := d.Publish(context.Background(), merchant("acme"), ev); err == nil {
		t.Error("publishing the same event id twice succeeded")
	}
}

func TestEventRecordJSONShape(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{30 * time.Second}})
	ev := event(t, "acme", "evt_json", "pay_json")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	decode := func() map[string]any {
		t.Helper()
		b, err := json.Marshal(record(t, d, "acme", ev.ID))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", b)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := decode()
	if m["id"] != "evt_json" || m["type"] != "payment.completed" || m["created_at"] != "2030-01-01T00:00:00Z" || m["payment_id"] != "pay_json" {
		t.Errorf("event fields: %v", m)
	}
	payload, _ := json.Marshal(m["payload"])
	var body, sent any
	_ = json.Unmarshal(payload, &body)
	_ = json.Unmarshal(ev.Body, &sent)
	if fmt.Sprint(body) != fmt.Sprint(sent) {
		t.Errorf("payload %s, want the body sent", payload)
	}
	del := m["deliveries"].([]any)[0].(map[string]any)
	if del["url"] != rcv.srv.URL+"/hooks" || del["state"] != "pending" || del["round"] != 1.0 ||
		del["next_attempt_at"] != "2030-01-01T00:00:30Z" {
		t.Errorf("pending delivery: %v", del)
	}
	a := del["attempts"].([]any)[0].(map[string]any)
	if a["attempt"] != 1.0 || a["at"] != "2030-01-01T00:00:00Z" || a["status_code"] != 500.0 || a["error"] == nil {
		t.Errorf("failed attempt: %v", a)
	}
	if _, ok := a["duration_ms"].(float64); !ok {
		t.Errorf("duration_ms missing or not a number: %v", a)
	}

	clock.Advance("acme", 30*time.Second)
	idle(t, d, "acme")
	del = decode()["deliveries"].([]any)[0].(map[string]any)
	a = del["attempts"].([]any)[1].(map[string]any)
	for key, present := range map[string]bool{"next_attempt_at": false, "error": false} {
		if _, ok := del[key]; ok != present {
			t.Errorf("delivered delivery has %s: %v", key, ok)
		}
	}
	if _, ok := a["error"]; ok || a["status_code"] != 200.0 {
		t.Errorf("successful attempt: %v", a)
	}
}

func TestRecordsAreCopies(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	publish(t, d, merchant("acme"), event(t, "acme", "evt_1", "pay_1"))
	r := record(t, d, "acme", "evt_1")
	for i := range r.Payload {
		r.Payload[i] = 'x'
	}
	if again := record(t, d, "acme", "evt_1"); !json.Valid(again.Payload) {
		t.Error("changing a returned record changed the journal")
	}
}

func TestJournal_IsBoundedButKeepsPendingEvents(t *testing.T) {
	failing := true
	var mu sync.Mutex
	rcv := newReceiver(t, func(h hit, _ int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing && h.id == "evt_0" {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{MaxEvents: 3, Retry: []time.Duration{time.Hour}})
	m := merchant("acme", rcv.endpoint())
	// The journal is trimmed at the merchant's first store and every
	// trimEvery after it: at the first and the last of these.
	for i := range trimEvery + 1 {
		publish(t, d, m, event(t, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i)))
		idle(t, d, "acme")
	}
	recs, total := events(t, d, "acme", 0, 200)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	// The newest fill the bound; evt_0 waits for its retry, so it stays.
	if total != 4 || strings.Join(ids, ",") != "evt_100,evt_99,evt_98,evt_0" {
		t.Errorf("journal holds %d: %v", total, ids)
	}
	if _, ok, _ := d.Event(context.Background(), "acme", "evt_1"); ok {
		t.Error("a trimmed event is still found")
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	clock.Advance("acme", time.Hour)
	idle(t, d, "acme")
	if r, ok, _ := d.Event(context.Background(), "acme", "evt_0"); !ok || r.Deliveries[0].State != paymock.DeliveryDelivered {
		t.Errorf("the kept event did not finish: %+v", r)
	}
}
