// Each merchant's journal is trimmed every trimEvery of its own stores,
// whatever other merchants store in between.

package webhooks

import (
	"fmt"
	"testing"

	"github.com/paymock/paymock/memory"
)

func TestTrim_EachMerchantIsTrimmedEveryTrimEveryOfItsOwnStores(t *testing.T) {
	for _, tc := range []struct {
		name string
		// others is how many events another merchant publishes after each
		// trimEvery-1 of acme's, so that acme's stores land anywhere in
		// a count the merchants would share.
		others int
	}{
		{name: "alone", others: 0},
		{name: "another merchant takes every hundredth store", others: 1},
		{name: "another merchant stores as much", others: trimEvery - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, nil)
			d := newDispatcher(t, newFakeClock(), Config{MaxEvents: 10})
			acme, other := merchant("acme", rcv.endpoint()), merchant("other", rcv.endpoint())
			n := 0
			for range 3 {
				for range trimEvery - 1 {
					publish(t, d, acme, event(t, "acme", fmt.Sprintf("evt_a%d", n), fmt.Sprintf("pay_a%d", n)))
					n++
				}
				for k := range tc.others {
					publish(t, d, other, event(t, "other", fmt.Sprintf("evt_o%d_%d", n, k), fmt.Sprintf("pay_o%d_%d", n, k)))
				}
				idle(t, d, "acme")
				idle(t, d, "other")
			}
			// Trimmed at least once per trimEvery of its stores: at most
			// MaxEvents plus trimEvery-1 events are held.
			if _, total := events(t, d, "acme", 0, 1); total > 10+trimEvery-1 {
				t.Errorf("acme holds %d events after %d published with MaxEvents 10, want at most %d", total, n, 10+trimEvery-1)
			}
		})
	}
}

func TestRedeliver_TheJournalIsTrimmedToMaxDeliveries(t *testing.T) {
	const (
		maxDeliveries = 100
		endpoints     = 2
		rounds        = 20 // each event's, its first included
	)
	rcv := newReceiver(t, nil) // answers 2xx at once: no round stays pending
	d := newDispatcher(t, newFakeClock(), Config{MaxDeliveries: maxDeliveries})
	m := merchant("acme", rcv.endpoint(), rcv.endpoint())
	// 20 events of 20 rounds, then one more event: 401 stores, so the
	// last is the merchant's fifth trim (its first store trims).
	for i := range 20 {
		ev := event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i))
		publish(t, d, m, ev)
		for range rounds - 1 {
			if _, err := d.Redeliver(t.Context(), "acme", ev.ID); err != nil {
				t.Fatal(err)
			}
		}
		idle(t, d, "acme")
	}
	publish(t, d, m, event(t, "acme", evID(20), "pay_20"))
	idle(t, d, "acme")

	recs, total := events(t, d, "acme", 0, 0)
	held := 0
	for _, r := range recs {
		held += len(r.Deliveries)
	}
	// Trimmed at that store: the newest events whose deliveries fit.
	if held > maxDeliveries || total >= 21 {
		t.Errorf("the journal holds %d events and %d deliveries after 21 events of up to %d rounds to %d endpoints, want at most %d deliveries",
			total, held, rounds, endpoints, maxDeliveries)
	}
	if len(recs) == 0 || recs[0].ID != evID(20) || len(recs) > 1 && recs[1].ID != evID(19) {
		t.Errorf("the newest events were not kept: %v", recs)
	}
}

func TestNew_RefusesANegativeMaxDeliveries(t *testing.T) {
	if _, err := New(Config{Outbox: memory.NewOutbox(memory.NewPayments()), MaxDeliveries: -1}); err == nil {
		t.Error("New took a negative MaxDeliveries")
	}
}
