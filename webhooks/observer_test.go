// Tests of what the dispatcher tells its observer, and of Busy and Forget,
// which decide when a merchant can be forgotten.

package webhooks

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// countingObserver counts what an Observer hears.
type countingObserver struct {
	mu       sync.Mutex
	created  int
	finished map[string]int
	attempts map[string]int
}

func newCountingObserver() *countingObserver {
	return &countingObserver{finished: map[string]int{}, attempts: map[string]int{}}
}

func (o *countingObserver) WebhookAttempt(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts[outcome]++
}

func (o *countingObserver) EventCreated() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.created++
}

func (o *countingObserver) EventFinished(state string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished[state]++
}

// check compares the counts with want and checks that every delivery made
// is accounted for: created = delivered + failed + interrupted + pending,
// pending being what the journals hold now.
func (o *countingObserver) check(t *testing.T, d *Dispatcher, step string, wantFinished, wantAttempts map[string]int, merchants ...string) {
	t.Helper()
	pending := 0
	for _, m := range merchants {
		recs, _ := events(t, d, m, 0, 0)
		for _, r := range recs {
			for _, del := range r.Deliveries {
				if del.State == paymock.DeliveryPending {
					pending++
				}
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	sum := 0
	for _, n := range o.finished {
		sum += n
	}
	if o.created != sum+pending {
		t.Errorf("%s: created %d, finished %v and %d pending: %d unaccounted for", step, o.created, o.finished, pending, o.created-sum-pending)
	}
	if !maps.Equal(o.finished, wantFinished) || !maps.Equal(o.attempts, wantAttempts) {
		t.Errorf("%s: finished %v, attempts %v; want %v, %v", step, o.finished, o.attempts, wantFinished, wantAttempts)
	}
}

func TestObserver_CountsAddUpThroughRetriesFaultsResetsAndClose(t *testing.T) {
	rcv := newReceiver(t, func(h hit, n int) int {
		switch {
		case h.id == "evt_gone":
			return http.StatusGone
		case h.id == "evt_flaky" && n == 1, h.id == "evt_down", h.id == "evt_reset", h.id == "evt_closed":
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	obs := newCountingObserver()
	clock := newFakeClock()
	faults := &scriptedFaults{plan: func(n int, _ paymock.EventType) (paymock.WebhookFault, bool) {
		return paymock.WebhookFault{RuleID: "flt_dup", Duplicate: 2}, n == 1 // evt_ok is sent twice: one attempt all the same
	}}
	d := newDispatcher(t, clock, Config{Observer: obs, Faults: faults, Retry: []time.Duration{time.Second}})
	m := merchant("acme", rcv.endpoint())
	bad := merchant("initech", paymock.WebhookEndpoint{URL: "ftp://nowhere", Secret: testSecret})

	for _, id := range []string{"evt_ok", "evt_flaky", "evt_down", "evt_gone"} {
		publish(t, d, m, event(t, "acme", id, "pay_"+id))
	}
	publish(t, d, bad, event(t, "initech", "evt_invalid", "pay_x")) // fails at once, no attempt
	idle(t, d, "acme")
	obs.check(t, d, "after the first attempts",
		map[string]int{"delivered": 1, "failed": 2},
		map[string]int{"delivered": 1, "retrying": 2, "failed": 1}, "acme", "initech")

	clock.Advance("acme", time.Second)
	idle(t, d, "acme")
	obs.check(t, d, "after the retries",
		map[string]int{"delivered": 2, "failed": 3},
		map[string]int{"delivered": 2, "retrying": 2, "failed": 2}, "acme", "initech")

	publish(t, d, m, event(t, "acme", "evt_reset", "pay_r"))
	idle(t, d, "acme")
	d.Reset(context.Background(), "acme") // its retry is dropped: counted as interrupted
	obs.check(t, d, "after a reset",
		map[string]int{"delivered": 2, "failed": 3, "interrupted": 1},
		map[string]int{"delivered": 2, "retrying": 3, "failed": 2}, "acme", "initech")

	publish(t, d, m, event(t, "acme", "evt_closed", "pay_c"))
	idle(t, d, "acme")
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Close leaves the retry pending, for the next start.
	obs.check(t, d, "after close",
		map[string]int{"delivered": 2, "failed": 3, "interrupted": 1},
		map[string]int{"delivered": 2, "retrying": 4, "failed": 2}, "acme", "initech")
}

func TestBusy_CoversEverythingStillToSend(t *testing.T) {
	rcv, arrived, release := blockingReceiver(t)
	failing := newReceiver(t, func(_ hit, n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{time.Minute}})

	if d.Busy("acme") {
		t.Error("an unknown merchant is busy")
	}
	publish(t, d, merchant("acme", rcv.endpoint()), event(t, "acme", "evt_inflight", "pay_1"))
	<-arrived
	if !d.Busy("acme") {
		t.Error("not busy with an attempt in flight")
	}
	release()
	idle(t, d, "acme")
	if d.Busy("acme") {
		t.Error("busy once everything is delivered")
	}

	publish(t, d, merchant("acme", failing.endpoint()), event(t, "acme", "evt_retry", "pay_2"))
	idle(t, d, "acme")
	if !d.Busy("acme") {
		t.Error("not busy while a retry is scheduled")
	}
	clock.Advance("acme", time.Minute)
	idle(t, d, "acme")
	if d.Busy("acme") {
		t.Error("busy once the retry delivered")
	}
}

func TestObserver_ConcurrentPublishesAreAllAccountedFor(t *testing.T) {
	rcv := newReceiver(t, func(h hit, _ int) int {
		if h.id[len(h.id)-1]%3 == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	obs := newCountingObserver()
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Observer: obs, Retry: []time.Duration{}})
	m := merchant("acme", rcv.endpoint(), rcv.endpoint())
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if err := d.Publish(context.Background(), m, event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i))); err != nil {
				t.Errorf("Publish: %v", err)
			}
		})
	}
	wg.Wait()
	idle(t, d, "acme")
	obs.mu.Lock()
	created, finished := obs.created, obs.finished["delivered"]+obs.finished["failed"]
	obs.mu.Unlock()
	if created != 80 || finished != 80 {
		t.Errorf("created %d, finished %d; want 80 of each (40 events, 2 endpoints)", created, finished)
	}
}
