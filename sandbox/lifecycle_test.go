// Outcomes over HTTP: transitions, the merchant's clock, scenarios, reset and webhook retries.

package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/lifecycle"
)

// create makes a payment for key and returns its id.
func (e *testEnv) create(key string, edit func(map[string]any)) string {
	e.t.Helper()
	b := validCreate()
	if edit != nil {
		edit(b)
	}
	st, p, _ := e.do("POST", "/api/v1/payments", key, b)
	if st != http.StatusCreated {
		e.t.Fatalf("create: %d %v", st, p)
	}
	return p["id"].(string)
}

func (e *testEnv) get(key, id string) map[string]any {
	e.t.Helper()
	st, p, _ := e.do("GET", "/api/v1/payments/"+id, key, nil)
	if st != http.StatusOK {
		e.t.Fatalf("retrieve %s: %d %v", id, st, p)
	}
	return p
}

func (e *testEnv) advance(key string, seconds int) map[string]any {
	e.t.Helper()
	st, body, _ := e.do("POST", "/_sandbox/clock/advance", key, map[string]any{"seconds": seconds})
	if st != http.StatusOK {
		e.t.Fatalf("advance: %d %v", st, body)
	}
	return body
}

func (e *testEnv) events(key string) []map[string]any {
	e.t.Helper()
	st, body, _ := e.do("GET", "/_sandbox/events?per_page=100", key, nil)
	if st != http.StatusOK {
		e.t.Fatalf("events: %d %v", st, body)
	}
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// waitStatus polls retrieve until the payment has status want, for things
// the scheduler fires on its own goroutine.
func (e *testEnv) waitStatus(key, id, want string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := e.get(key, id)
		if p["status"] == want {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("payment %s stayed %v, want %s", id, p["status"], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTransitions_EachOutcomeOnceThenConflict(t *testing.T) {
	tests := []struct {
		call, status, event string
	}{
		{"complete", "completed", "payment.completed"},
		{"fail", "failed", "payment.failed"},
		{"expire", "expired", "payment.expired"},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			env := newEnv(t)
			id := env.create(keyA, nil)
			env.advance(keyA, 60)
			st, p, _ := env.do("POST", "/_sandbox/payments/"+id+"/"+tc.call, keyA, nil)
			if st != http.StatusOK || p["status"] != tc.status {
				t.Fatalf("%s: %d %v", tc.call, st, p)
			}
			if p["next_action"] != nil {
				t.Errorf("next_action %v after %s", p["next_action"], tc.call)
			}
			if p["updated_at"] != "2026-03-14T15:10:26Z" || p["created_at"] != "2026-03-14T15:09:26Z" {
				t.Errorf("timestamps created %v updated %v", p["created_at"], p["updated_at"])
			}
			wantCompleted := any(nil)
			if tc.status == "completed" {
				wantCompleted = "2026-03-14T15:10:26Z"
			}
			if p["completed_at"] != wantCompleted {
				t.Errorf("completed_at %v", p["completed_at"])
			}
			// Visible at once in retrieve and list.
			if got := env.get(keyA, id); fmt.Sprint(got) != fmt.Sprint(p) {
				t.Errorf("retrieve differs:\n%v\n%v", got, p)
			}
			_, list, _ := env.do("GET", "/api/v1/payments", keyA, nil)
			if s := list["items"].([]any)[0].(map[string]any)["status"]; s != tc.status {
				t.Errorf("list shows %v", s)
			}
			// Final is final: every further transition is a 409.
			for _, again := range []string{"complete", "fail", "expire"} {
				st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/"+again, keyA, nil)
				if st != http.StatusConflict || errorOf(t, body)["type"] != "conflict_error" {
					t.Errorf("%s after %s: %d %v", again, tc.call, st, body)
				}
			}
			if env.get(keyA, id)["status"] != tc.status {
				t.Error("a refused transition changed the payment")
			}
			// Exactly one event, of the right type, carrying the payment.
			evs := env.events(keyA)
			if len(evs) != 1 || evs[0]["type"] != tc.event || evs[0]["payment_id"] != id {
				t.Fatalf("events %v", evs)
			}
			// The payment's own expiry later does nothing more.
			env.advance(keyA, 7200)
			if n := len(env.events(keyA)); n != 1 {
				t.Errorf("%d events after the expiry time passed", n)
			}
		})
	}
}

func TestTransitions_UnknownAndForeignPaymentsAre404(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	for _, tc := range []struct{ key, id string }{{keyA, "pay_nope"}, {keyB, id}} {
		st, body, _ := env.do("POST", "/_sandbox/payments/"+tc.id+"/complete", tc.key, nil)
		if st != http.StatusNotFound || errorOf(t, body)["type"] != "not_found_error" {
			t.Errorf("%s: %d %v", tc.id, st, body)
		}
	}
	if st, _, h := env.do("POST", "/_sandbox/payments/"+id+"/complete", "", nil); st != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" {
		t.Errorf("no key: %d", st)
	}
	if env.get(keyA, id)["status"] != "pending" {
		t.Error("a refused call changed the payment")
	}
	if st, body, _ := env.do("GET", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusMethodNotAllowed {
		t.Errorf("GET on an outcome: %d %v", st, body)
	}
}

func TestExpiry_FrozenClockExpiresWhenAdvancedPast(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, func(b map[string]any) { b["expires_in"] = 3600 })
	env.advance(keyA, 3599)
	if s := env.get(keyA, id)["status"]; s != "pending" {
		t.Fatalf("status %v before expires_at", s)
	}
	body := env.advance(keyA, 1)
	if body["fired"] != 1.0 || body["now"] != "2026-03-14T16:09:26Z" {
		t.Errorf("advance answered %v", body)
	}
	p := env.get(keyA, id)
	if p["status"] != "expired" || p["updated_at"] != p["expires_at"] {
		t.Errorf("after expires_at: %v", p)
	}
	if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != "payment.expired" {
		t.Errorf("events %v", evs)
	}
}

func TestExpiry_RealClockExpiresByItself(t *testing.T) {
	env := newEnv(t, withRealClock())
	id := env.create(keyA, func(b map[string]any) { b["expires_in"] = 1 })
	p := env.waitStatus(keyA, id, "expired")
	if p["next_action"] != nil {
		t.Errorf("expired payment has next_action %v", p["next_action"])
	}
	if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != "payment.expired" {
		t.Errorf("events %v", evs)
	}
}

func TestClock_MerchantsAreIsolated(t *testing.T) {
	env := newEnv(t)
	idA := env.create(keyA, func(b map[string]any) { b["expires_in"] = 60 })
	idB := env.create(keyB, func(b map[string]any) { b["expires_in"] = 60 })
	env.advance(keyA, 120)
	_, ca, _ := env.do("GET", "/_sandbox/clock", keyA, nil)
	_, cb, _ := env.do("GET", "/_sandbox/clock", keyB, nil)
	if ca["now"] != "2026-03-14T15:11:26Z" || cb["now"] != "2026-03-14T15:09:26Z" || ca["mode"] != "frozen" {
		t.Errorf("clocks A %v B %v", ca, cb)
	}
	if env.get(keyA, idA)["status"] != "expired" || env.get(keyB, idB)["status"] != "pending" {
		t.Error("advancing A's clock moved B's payments")
	}
	// B's new payments are stamped with B's own time.
	_, p, _ := env.do("POST", "/api/v1/payments", keyB, validCreate())
	if p["created_at"] != "2026-03-14T15:09:26Z" {
		t.Errorf("B's payment created at %v", p["created_at"])
	}
}

func TestAdvance_RejectsBadBodies(t *testing.T) {
	env := newEnv(t)
	for _, body := range []any{map[string]any{}, map[string]any{"seconds": -1}, map[string]any{"seconds": 1.5},
		map[string]any{"seconds": "10"}, map[string]any{"seconds": 1, "minutes": 2}} {
		if st, resp, _ := env.do("POST", "/_sandbox/clock/advance", keyA, body); st != http.StatusBadRequest {
			t.Errorf("%v: %d %v", body, st, resp)
		}
	}
}

func TestScenarios_TriggersAtCreation(t *testing.T) {
	set, err := lifecycle.ParseScenarios("test.yaml", []byte(`scenarios:
  - name: euro-fail
    match: {amount: 13.37, currency: EUR}
    steps: [{after: 10s, do: fail}]
  - name: vip
    match: {email: vip@example.com}
    steps: [{after: 20s, do: complete}]
  - name: card-expire
    match: {card: "4000000000000077"}
    steps: [{after: 30s, do: expire}]
  - name: by-name
    steps: [{after: 40s, do: complete}]
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(b map[string]any)
		after   int
		want    string
		waitFor bool // fires at once on its own, no advance needed
	}{
		{"metadata built-in complete", func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "complete"} }, 0, "completed", true},
		{"metadata built-in fail", func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "fail"} }, 0, "failed", true},
		{"metadata built-in expire", func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "expire"} }, 0, "expired", true},
		{"metadata delayed built-in", func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "complete_after_5s"} }, 5, "completed", false},
		{"metadata file scenario", func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "by-name"} }, 40, "completed", false},
		{"amount and currency", func(b map[string]any) { b["amount"] = 13.37; b["currency"] = "EUR" }, 10, "failed", false},
		{"customer email", func(b map[string]any) { b["customer"].(map[string]any)["email"] = "vip@example.com" }, 20, "completed", false},
		{"card number", func(b map[string]any) { card(withCard(b))["number"] = "4000000000000077" }, 30, "expired", false},
		{"declining test card", func(b map[string]any) { card(withCard(b))["number"] = lifecycle.CardDeclinedAtOnce }, 0, "failed", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, withScenarios(set))
			id := env.create(keyA, tc.edit)
			if tc.waitFor {
				env.waitStatus(keyA, id, tc.want)
				return
			}
			env.advance(keyA, tc.after-1)
			if s := env.get(keyA, id)["status"]; s != "pending" {
				t.Fatalf("status %v a second early", s)
			}
			env.advance(keyA, 1)
			if s := env.get(keyA, id)["status"]; s != tc.want {
				t.Fatalf("status %v, want %s", s, tc.want)
			}
		})
	}
}

func TestReset_ForgetsPaymentsEventsScheduleAndClock(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, func(b map[string]any) { b["metadata"] = map[string]any{"scenario": "complete_after_5s"} })
	other := env.create(keyB, nil)
	done := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+done+"/complete", keyA, nil)
	env.advance(keyA, 1)
	if st, _, _ := env.do("POST", "/_sandbox/reset", keyA, nil); st != http.StatusNoContent {
		t.Fatalf("reset: %d", st)
	}
	if st, _, _ := env.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusNotFound {
		t.Errorf("payment survived reset: %d", st)
	}
	_, list, _ := env.do("GET", "/api/v1/payments", keyA, nil)
	if n := list["pagination"].(map[string]any)["total_items"]; n != 0.0 {
		t.Errorf("%v payments after reset", n)
	}
	if evs := env.events(keyA); len(evs) != 0 {
		t.Errorf("events after reset: %v", evs)
	}
	if body := env.advance(keyA, 10); body["fired"] != 0.0 || body["now"] != "2026-03-14T15:09:36Z" {
		t.Errorf("after reset the schedule or clock survived: %v", body)
	}
	if env.get(keyB, other)["status"] != "pending" {
		t.Error("reset touched another merchant")
	}
}

func TestWebhooks_RetriesUntilDeliveredWithOneID(t *testing.T) {
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	env := newEnv(t, withWebhooks([]time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute},
		paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	id := env.create(keyA, func(b map[string]any) { b["success_url"] = "https://shop.example.com/ok?a=1&b=%3C2%3E&c='3'" })
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	env.advance(keyA, 0) // waits for the first attempt
	if n := rcv.attemptCount(); n != 1 {
		t.Fatalf("%d attempts before any retry is due", n)
	}
	env.advance(keyA, 5) // second attempt, fails
	env.advance(keyA, 30)
	if n := rcv.attemptCount(); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	got := rcv.deliveries()
	if len(got) != 1 || got[0].Type != "payment.completed" || got[0].Payment["id"] != id || got[0].Payment["status"] != "completed" {
		t.Fatalf("deliveries %+v", got)
	}
	evs := env.events(keyA)
	if len(evs) != 1 || evs[0]["id"] != got[0].ID || got[0].EventID != got[0].ID {
		t.Fatalf("event ids: %v vs %s", evs, got[0].ID)
	}
	// The journal shows the payload exactly as delivered, so a receiver's
	// signature can be recomputed from it (no HTML escaping of "&").
	req, _ := http.NewRequest("GET", env.URL+"/_sandbox/events", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if raw := readAll(t, resp); !strings.Contains(raw, `"payload":`+string(got[0].Body)) {
		t.Errorf("payload differs from the delivered body:\n%s\n%s", raw, got[0].Body)
	}
	d := evs[0]["deliveries"].([]any)[0].(map[string]any)
	attempts := d["attempts"].([]any)
	if d["state"] != "delivered" || len(attempts) != 3 {
		t.Fatalf("delivery %v", d)
	}
	wantAt := []string{"2026-03-14T15:09:26Z", "2026-03-14T15:09:31Z", "2026-03-14T15:10:01Z"}
	for i, a := range attempts {
		a := a.(map[string]any)
		if a["at"] != wantAt[i] {
			t.Errorf("attempt %d at %v, want %s (merchant clock)", i+1, a["at"], wantAt[i])
		}
	}
	if attempts[0].(map[string]any)["status_code"] != 500.0 || attempts[2].(map[string]any)["status_code"] != 200.0 {
		t.Errorf("attempt statuses %v", attempts)
	}
}

func TestWebhooks_EndpointDownForTheWholeScheduleLeavesAFailedEvent(t *testing.T) {
	down := newReceiver(t, nil)
	url := down.srv.URL
	down.srv.Close() // connection refused from now on
	env := newEnv(t, withWebhooks([]time.Duration{5 * time.Second, 30 * time.Second},
		paymock.WebhookEndpoint{URL: url, Secret: testSecret}))
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/fail", keyA, nil)
	env.advance(keyA, 3600)
	evs := env.events(keyA)
	if len(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
	d := evs[0]["deliveries"].([]any)[0].(map[string]any)
	attempts := d["attempts"].([]any)
	if d["state"] != "failed" || len(attempts) != 3 {
		t.Fatalf("delivery %v", d)
	}
	for _, a := range attempts {
		if e, _ := a.(map[string]any)["error"].(string); e == "" {
			t.Errorf("attempt without an error: %v", a)
		}
	}
}

func TestWebhooks_RedeliverSendsTheSameEventAgain(t *testing.T) {
	var mu sync.Mutex
	up := false
	rcv := newReceiver(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		if up {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	env := newEnv(t, withWebhooks([]time.Duration{time.Second}, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/expire", keyA, nil)
	env.advance(keyA, 10)
	evID := env.events(keyA)[0]["id"].(string)
	mu.Lock()
	up = true
	mu.Unlock()
	st, body, _ := env.do("POST", "/_sandbox/events/"+evID+"/redeliver", keyA, nil)
	if st != http.StatusAccepted || body["id"] != evID {
		t.Fatalf("redeliver: %d %v", st, body)
	}
	env.advance(keyA, 0)
	got := rcv.deliveries()
	if len(got) != 1 || got[0].ID != evID || got[0].Type != "payment.expired" {
		t.Fatalf("deliveries %+v", got)
	}
	if st, body, _ := env.do("POST", "/_sandbox/events/evt_nope/redeliver", keyA, nil); st != http.StatusNotFound {
		t.Errorf("unknown event: %d %v", st, body)
	}
	if st, _, _ := env.do("POST", "/_sandbox/events/"+evID+"/redeliver", keyB, nil); st != http.StatusNotFound {
		t.Errorf("another merchant's event: %d", st)
	}
}

func TestWebhooks_ConcurrentCompletionsDeliverEachExactlyOnce(t *testing.T) {
	rcv := newReceiver(t, nil)
	env := newEnv(t, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	const n = 50
	ids := make([]string, n)
	for i := range ids {
		ids[i] = env.create(keyA, nil)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
				t.Errorf("complete %s: %d %v", id, st, body)
			}
		})
	}
	wg.Wait()
	env.advance(keyA, 0)
	got := rcv.deliveries()
	if len(got) != n {
		t.Fatalf("%d deliveries, want %d", len(got), n)
	}
	seen := map[string]bool{}
	paid := map[string]bool{}
	for _, d := range got {
		if seen[d.ID] {
			t.Errorf("event %s delivered twice", d.ID)
		}
		seen[d.ID] = true
		paid[d.Payment["id"].(string)] = true
	}
	for _, id := range ids {
		if !paid[id] {
			t.Errorf("no delivery for %s", id)
		}
	}
	if strings.Count(fmt.Sprint(env.events(keyA)), "delivered") != n {
		t.Errorf("events do not all show delivered")
	}
}
