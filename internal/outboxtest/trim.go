// The conformance cases of the bound on the deliveries a trim keeps, so
// that redelivering in a loop cannot grow a merchant's journal without
// bound even when every round ends at once.

package outboxtest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/paymock/paymock"
)

// trimKeepsDeliveries: a trim keeps the newest events while they hold at
// most keep.Deliveries deliveries between them (a redelivery's round
// counts), and at most keep.Events of them; the newest whatever it holds;
// and an older event with a delivery pending or in flight. Another
// merchant's journal is left alone.
func trimKeepsDeliveries(t *testing.T, o paymock.Outbox) {
	for i, tc := range []struct {
		name string
		keep paymock.KeepEvents
		want []int // the events left, newest first
	}{
		{name: "the deliveries bound keeps the newest that fit", keep: paymock.KeepEvents{Events: 10, Deliveries: 3},
			want: []int{4, 3, 1}},
		{name: "an event that fits the bound exactly is kept", keep: paymock.KeepEvents{Events: 10, Deliveries: 6},
			want: []int{4, 3, 2, 1}},
		{name: "the newest event is kept past the bound", keep: paymock.KeepEvents{Events: 10, Deliveries: 1},
			want: []int{4, 1}},
		{name: "the events bound still holds", keep: paymock.KeepEvents{Events: 2, Deliveries: 100},
			want: []int{4, 3, 1}},
		{name: "within both bounds nothing goes", keep: paymock.KeepEvents{Events: 5, Deliveries: 9},
			want: []int{4, 3, 2, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			m := fmt.Sprintf("acme%d", i) // a merchant per case
			// Oldest first: event 1's delivery is in flight, every other
			// finished; event 4 holds a redelivery's round.
			sizes := []int{2, 1, 3, 1, 1}
			for k, n := range sizes {
				out := Event(m, k, fmt.Sprintf("pay_%d", k), urls(n)...)
				if k != 1 {
					for j := range out.Deliveries {
						out.Deliveries[j].State = paymock.DeliveryDelivered
					}
				}
				add(t, o, out)
				add(t, o, Event("other_"+m, k, fmt.Sprintf("pay_%d", k), urls(n)...))
			}
			if dels := claim(t, o, paymock.Claim{MerchantID: m}); len(dels) != 1 {
				t.Fatalf("claimed %d deliveries, want event 1's", len(dels))
			}
			last := Event(m, 4, "pay_4", urls(1)...)
			last.Deliveries[0].State = paymock.DeliveryDelivered
			if _, err := o.AddRound(ctx, m, last.Event.ID, last.Deliveries, 0); err != nil {
				t.Fatal(err)
			}

			if err := o.TrimEvents(ctx, m, tc.keep); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, k := range tc.want {
				want = append(want, fmt.Sprintf("evt_%s_%03d", m, k))
			}
			recs, total, err := o.Events(ctx, m, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if total != len(want) || !reflect.DeepEqual(got, want) {
				t.Errorf("after a trim keeping %+v: %d events %v, want %v", tc.keep, total, got, want)
			}
			if _, total, _ := o.Events(ctx, "other_"+m, 0, 0); total != len(sizes) {
				t.Errorf("another merchant's journal holds %d events after the trim, want %d", total, len(sizes))
			}
		})
	}
}
