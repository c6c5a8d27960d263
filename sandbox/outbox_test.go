// Webhook deliveries and their journal shared by replicas over PostgreSQL:
// any replica attempts what is due, once, and every replica sees the
// same events.

package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/postgres"
)

// replicaEnvs builds n sandboxes on one fresh database, each behind its
// own server, with the same options.
func replicaEnvs(t *testing.T, n int, opts ...envOption) []*testEnv {
	t.Helper()
	return replicaEnvsOn(t, pgtest.URL(t), n, opts...)
}

// replicaEnvsOn is replicaEnvs on the database at url.
func replicaEnvsOn(t *testing.T, url string, n int, opts ...envOption) []*testEnv {
	t.Helper()
	envs := make([]*testEnv, n)
	for i := range envs {
		st, err := postgres.Open(context.Background(), postgres.Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		envs[i] = newEnv(t, append(opts, onBackend(st.Backend()))...)
	}
	return envs
}

// deliveriesOf is the deliveries of the event of one payment in a
// journal, or nil when it has none yet.
func deliveriesOf(events []map[string]any, paymentID string) []any {
	for _, ev := range events {
		if ev["payment_id"] == paymentID {
			return ev["deliveries"].([]any)
		}
	}
	return nil
}

func TestOutbox_AnEventFiredOnOneReplicaIsInEveryReplicasJournal(t *testing.T) {
	rcv := newReceiver(t, nil)
	envs := replicaEnvs(t, 2, withWebhooks(nil, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	if st, body, _ := b.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
		t.Fatalf("complete on B: %d %v", st, body)
	}
	d := <-rcv.notify
	if d.Type != "payment.completed" || d.Payment["id"] != id {
		t.Fatalf("delivered %s of %v", d.Type, d.Payment["id"])
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		dels := deliveriesOf(a.events(keyA), id)
		if len(dels) == 1 && dels[0].(map[string]any)["state"] == "delivered" {
			atts := dels[0].(map[string]any)["attempts"].([]any)
			if len(atts) != 1 || atts[0].(map[string]any)["status_code"] != float64(204) {
				t.Errorf("attempts on A's journal: %v", atts)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's journal never showed B's delivery: %v", a.events(keyA))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := len(b.events(keyA)); got != 1 {
		t.Errorf("B lists %d events, want 1", got)
	}
	if n := rcv.attemptCount(); n != 1 {
		t.Errorf("the endpoint got %d attempts, want 1", n)
	}
}

// mustMerchant is the merchant a key belongs to on env's sandbox.
func mustMerchant(t *testing.T, env *testEnv, key string) *paymock.Merchant {
	t.Helper()
	m, err := env.sb.Merchants().Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOutbox_ARetryScheduledByAStoppedReplicaIsSentByAnotherReplicasAdvance(t *testing.T) {
	var calls atomic.Int32
	rcv := newReceiver(t, func(n int) int {
		calls.Add(1)
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	envs := replicaEnvs(t, 2, withWebhooks([]time.Duration{5 * time.Second}, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	waitFor(t, func() bool { return calls.Load() == 1 }, "the first attempt")
	if err := a.sb.Webhooks().Idle(context.Background(), mustMerchant(t, a, keyA).ID); err != nil {
		t.Fatal(err)
	}
	if err := a.sb.Close(context.Background()); err != nil { // A is gone: its timer with it
		t.Fatal(err)
	}
	dels := deliveriesOf(b.events(keyA), id)
	if len(dels) != 1 || dels[0].(map[string]any)["next_attempt_at"] == nil {
		t.Fatalf("B's journal before the advance: %v", dels)
	}
	b.advance(keyA, 4)
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d attempts before the retry was due, want 1", n)
	}
	b.advance(keyA, 1)
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d attempts once the retry was due, want 2", n)
	}
	del := deliveriesOf(b.events(keyA), id)[0].(map[string]any)
	if del["state"] != "delivered" || len(del["attempts"].([]any)) != 2 {
		t.Errorf("after the advance: %v", del)
	}
}

func TestOutbox_TwoReplicasOnRealClocksSendEachScheduledAttemptOnce(t *testing.T) {
	var calls atomic.Int32
	rcv := newReceiver(t, func(n int) int {
		calls.Add(1)
		if n < 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	retry := []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, time.Hour}
	envs := replicaEnvs(t, 2, withRealClock(), withWebhooks(retry, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	const payments = 5
	ids := make([]string, payments)
	for i := range ids {
		env := envs[i%2]
		ids[i] = env.create(keyA, nil)
		env.do("POST", "/_sandbox/payments/"+ids[i]+"/complete", keyA, nil)
	}
	// The receiver fails every delivery's first two sends: 5 deliveries,
	// 3 sends each, whoever sends them.
	waitFor(t, func() bool {
		n := 0
		for _, ev := range b.events(keyA) {
			for _, d := range ev["deliveries"].([]any) {
				if d.(map[string]any)["state"] == "delivered" {
					n++
				}
			}
		}
		return n == payments
	}, "every delivery delivered")
	time.Sleep(1500 * time.Millisecond) // a second sweep on both replicas: nothing more goes
	if got := calls.Load(); got != payments+2 {
		t.Errorf("the receiver counted %d sends; want %d (its first two fail, then each delivery goes once)", got, payments+2)
	}
	sends := 0
	for _, ev := range a.events(keyA) {
		for _, d := range ev["deliveries"].([]any) {
			sends += len(d.(map[string]any)["attempts"].([]any))
		}
	}
	if sends != payments+2 {
		t.Errorf("the journal records %d sends, want %d", sends, payments+2)
	}
}

func TestOutbox_RedeliverAndResetOnAnotherReplica(t *testing.T) {
	rcv := newReceiver(t, nil)
	envs := replicaEnvs(t, 2, withWebhooks(nil, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	first := <-rcv.notify
	st, rec, _ := b.do("POST", "/_sandbox/events/"+first.EventID+"/redeliver", keyA, nil)
	if st != http.StatusOK && st != http.StatusAccepted {
		t.Fatalf("redeliver on B: %d %v", st, rec)
	}
	again := <-rcv.notify
	if again.ID != first.ID || string(again.Body) != string(first.Body) {
		t.Errorf("redelivered %s %s, want the same id and body as %s", again.ID, again.Body, first.ID)
	}
	waitFor(t, func() bool {
		dels := deliveriesOf(a.events(keyA), id)
		return len(dels) == 2 && dels[1].(map[string]any)["round"] == float64(2) &&
			dels[1].(map[string]any)["state"] == "delivered"
	}, "round 2 in A's journal")
	if st, body, _ := b.do("POST", "/_sandbox/reset", keyA, nil); st != http.StatusOK && st != http.StatusNoContent {
		t.Fatalf("reset on B: %d %v", st, body)
	}
	if evs := a.events(keyA); len(evs) != 0 {
		t.Errorf("A still lists %d events after B's reset", len(evs))
	}
}

func TestReplicas_SeededAlikeNeverDrawTheSameID(t *testing.T) {
	rcv := newReceiver(t, nil)
	envs := replicaEnvs(t, 2, withSeed(5), withWebhooks(nil, webhookEndpoint(rcv)))
	seen := map[string]bool{}
	for i := range 6 {
		env := envs[i%2]
		// A customer of its own each, so that both replicas draw alike.
		id := env.create(keyA, func(b map[string]any) {
			b["customer"] = map[string]any{"email": fmt.Sprintf("c%d@example.com", i), "name": "C"}
		}) // a collision would be a 500
		if seen[id] {
			t.Fatalf("payment id %s drawn twice", id)
		}
		seen[id] = true
		if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
			t.Fatalf("complete: %d %v", st, body)
		}
	}
	events := map[string]bool{}
	for range 6 {
		d := <-rcv.notify
		events[d.EventID] = true
	}
	if len(events) != 6 {
		t.Errorf("%d distinct event ids for 6 completions", len(events))
	}
}

func TestOutbox_AClockWithNanosecondsReachesWhatItScheduled(t *testing.T) {
	// A frozen clock started at "now" has nanoseconds; the database keeps
	// microseconds, so instants are told apart to the microsecond.
	rcv := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	envs := replicaEnvs(t, 1, withStart(testStart.Add(123456789*time.Nanosecond)),
		withWebhooks([]time.Duration{5*time.Second + time.Microsecond}, webhookEndpoint(rcv)))
	env := envs[0]
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	waitFor(t, func() bool { return rcv.attemptCount() == 1 }, "the first send")
	env.advance(keyA, 5)
	if n := rcv.attemptCount(); n != 1 {
		t.Fatalf("%d sends a microsecond before the retry was due, want 1", n)
	}
	env.advance(keyA, 1)
	if n := rcv.attemptCount(); n != 2 {
		t.Fatalf("%d sends once the retry was due, want 2", n)
	}
}

func TestOutbox_AnAdvanceWaitsForASendUnderWayOnAnotherReplica(t *testing.T) {
	rcv := newReceiver(t, func(n int) int {
		if n == 1 {
			time.Sleep(300 * time.Millisecond) // still in flight when B advances
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	envs := replicaEnvs(t, 2, withWebhooks([]time.Duration{5 * time.Second}, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	waitFor(t, func() bool {
		dels := deliveriesOf(b.events(keyA), id)
		return len(dels) == 1 && dels[0].(map[string]any)["state"] == "pending"
	}, "the event on B")
	time.Sleep(100 * time.Millisecond) // A has claimed its first send and is waiting on the receiver
	b.advance(keyA, 60)
	if n := rcv.attemptCount(); n != 2 {
		t.Fatalf("%d sends when B's advance of 60 s returned, want 2 (the first, on A, and its retry 5 s later)", n)
	}
	del := deliveriesOf(b.events(keyA), id)[0].(map[string]any)
	atts := del["attempts"].([]any)
	if del["state"] != "delivered" || len(atts) != 2 {
		t.Fatalf("after the advance: %v", del)
	}
	first, _ := time.Parse(time.RFC3339, atts[0].(map[string]any)["at"].(string))
	second, _ := time.Parse(time.RFC3339, atts[1].(map[string]any)["at"].(string))
	if second.Sub(first) != 5*time.Second {
		t.Errorf("the retry went %s after the first send, want 5s: the advance fires it in time order", second.Sub(first))
	}
}
