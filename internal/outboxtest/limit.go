// The conformance cases of the per-merchant limit on pending deliveries
// that AddRound holds, so that redelivering in a loop cannot grow an
// outbox without bound.

package outboxtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/paymock/paymock"
)

// addRoundStopsAtLimit: a round is refused when the merchant already has
// limit deliveries pending or more, whatever their events and rounds; the
// refusal wraps ErrLimitReached, stores nothing and takes no round number.
// Below the limit, with a limit of 0, or when only finished deliveries or
// another merchant's make up the number, the round is stored.
func addRoundStopsAtLimit(t *testing.T, o paymock.Outbox) {
	for i, tc := range []struct {
		name     string
		pending  int // the merchant's pending deliveries (at least 1), over two events
		finished int // of those, how many are then delivered
		others   int // pending deliveries of another merchant
		limit    int
		refused  bool
	}{
		{name: "at the limit is refused", pending: 3, limit: 3, refused: true},
		{name: "past the limit is refused", pending: 3, limit: 2, refused: true},
		{name: "below the limit is stored", pending: 3, limit: 4},
		{name: "a limit of 0 is none", pending: 3, limit: 0},
		{name: "finished deliveries do not count", pending: 3, finished: 2, limit: 2},
		{name: "another merchant's pending deliveries do not count", pending: 1, others: 5, limit: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			// A merchant of its own per case, so that cases do not add up.
			m := fmt.Sprintf("acme%d", i)
			first := Event(m, 1, "pay_1", "http://a.test/0")
			add(t, o, first)
			add(t, o, Event(m, 2, "pay_2", urls(tc.pending-1)...))
			if tc.others > 0 {
				add(t, o, Event("other_"+m, 1, "pay_1", urls(tc.others)...))
			}
			if tc.finished > 0 {
				for _, d := range claim(t, o, paymock.Claim{MerchantID: m, Limit: tc.finished}) {
					attempted(t, o, d, paymock.DeliveryDelivered, t0)
				}
			}
			before := event(t, o, m, first.Event.ID)

			ids, err := o.AddRound(ctx, m, first.Event.ID, first.Deliveries, tc.limit)
			if tc.refused {
				if !errors.Is(err, paymock.ErrLimitReached) || ids != nil {
					t.Fatalf("AddRound = %v, %v; want nothing and ErrLimitReached", ids, err)
				}
				if after := event(t, o, m, first.Event.ID); len(after.Deliveries) != len(before.Deliveries) {
					t.Errorf("a refused round stored deliveries: %d, were %d", len(after.Deliveries), len(before.Deliveries))
				}
				// Without a limit, the next round is still round 2: the
				// refusal took no number.
				if ids, err = o.AddRound(ctx, m, first.Event.ID, first.Deliveries, 0); err != nil {
					t.Fatalf("AddRound without a limit after a refusal: %v", err)
				}
			} else if err != nil {
				t.Fatalf("AddRound: %v", err)
			}
			round, err := o.Round(ctx, m, first.Event.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := claimedIDs(round); len(ids) != len(first.Deliveries) || fmt.Sprint(got) != fmt.Sprint(ids) {
				t.Errorf("round 2 is %v, want the round stored: %v", got, ids)
			}
			if r3, _ := o.Round(ctx, m, first.Event.ID, 3); len(r3) != 0 {
				t.Errorf("a round 3 was stored: %v", claimedIDs(r3))
			}
		})
	}
}

// urls names n endpoints.
func urls(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("http://a.test/%d", i)
	}
	return out
}
