// Each merchant's journal is trimmed every trimEvery of its own stores,
// whatever other merchants store in between.

package webhooks

import (
	"fmt"
	"testing"
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
