// Redeliver stops adding rounds at the merchant's pending limit, so that
// a merchant looping on it cannot grow the outbox without bound.

package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

// fillPending stores n events of merchant acme with one delivery each to
// ep, due far ahead so that none is sent: n deliveries pending.
func fillPending(t *testing.T, box paymock.Outbox, ep paymock.WebhookEndpoint, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("evt_%05d", i)
		out := paymock.Outgoing{
			Event: paymock.Event{ID: id, Type: paymock.EventCompleted, MerchantID: "acme", CreatedAt: clockStart,
				Body: []byte(`{"id":"` + id + `"}`)},
			Deliveries: []paymock.Delivery{{URL: ep.URL, Secret: ep.Secret, State: paymock.DeliveryPending,
				NextAt: clockStart.Add(100 * 24 * time.Hour), Round: 1}},
		}
		if _, err := box.AddEvent(context.Background(), out); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRedeliver_StopsAtTheMerchantsPendingLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		config  int // Config.MaxPendingForRedeliver
		pending int
		limit   int // the limit in force; 0: none refuses
	}{
		{name: "the default refuses at its limit", config: 0, pending: DefaultMaxPendingForRedeliver, limit: DefaultMaxPendingForRedeliver},
		{name: "the default lets a round in below it", config: 0, pending: DefaultMaxPendingForRedeliver - 1},
		{name: "a configured limit refuses at it", config: 3, pending: 3, limit: 3},
		{name: "a configured limit lets a round in below it", config: 3, pending: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, nil)
			box := memory.NewOutbox(memory.NewPayments())
			fillPending(t, box, rcv.endpoint(), tc.pending)
			d := newDispatcher(t, newFakeClock(), Config{Outbox: box, MaxPendingForRedeliver: tc.config})

			rec, err := d.Redeliver(t.Context(), "acme", "evt_00000")
			if tc.limit == 0 {
				if err != nil || len(rec.Deliveries) != 2 || rec.Deliveries[1].Round != 2 {
					t.Fatalf("Redeliver = %+v, %v; want a second round", rec.Deliveries, err)
				}
				return
			}
			if !errors.Is(err, paymock.ErrLimitReached) {
				t.Fatalf("Redeliver = %v, want ErrLimitReached", err)
			}
			de, ok := paymock.AsError(err)
			if !ok || de.Type != paymock.InvalidRequest || de.Code != "delivery_limit" {
				t.Fatalf("Redeliver = %#v, want the invalid_request_error delivery_limit to show", err)
			}
			for _, want := range []string{fmt.Sprint(tc.limit), "POST /_sandbox/reset"} {
				if !strings.Contains(de.Message, want) {
					t.Errorf("message %q does not say %q", de.Message, want)
				}
			}
			if r := record(t, d, "acme", "evt_00000"); len(r.Deliveries) != 1 {
				t.Errorf("a refused redelivery stored a round: %+v", r.Deliveries)
			}
		})
	}
}

func TestNew_RefusesANegativeMaxPendingForRedeliver(t *testing.T) {
	_, err := New(Config{Outbox: memory.NewOutbox(memory.NewPayments()), MaxPendingForRedeliver: -1})
	if err == nil {
		t.Error("New took a negative MaxPendingForRedeliver")
	}
}

func TestRedeliver_StopsAtMaxRoundsPerEvent(t *testing.T) {
	rcv := newReceiver(t, nil) // answers 2xx: no delivery stays pending
	box := memory.NewOutbox(memory.NewPayments())
	d := newDispatcher(t, newFakeClock(), Config{Outbox: box})
	ev := event(t, "acme", "evt_rounds", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")
	for n := 2; n <= MaxRoundsPerEvent; n++ {
		if _, err := d.Redeliver(t.Context(), "acme", ev.ID); err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		idle(t, d, "acme")
	}
	_, err := d.Redeliver(t.Context(), "acme", ev.ID)
	de, ok := paymock.AsError(err)
	if !errors.Is(err, paymock.ErrLimitReached) || !ok || de.Code != "delivery_limit" || !strings.Contains(de.Message, fmt.Sprint(MaxRoundsPerEvent)) {
		t.Fatalf("round %d: %v, want delivery_limit naming %d", MaxRoundsPerEvent+1, err, MaxRoundsPerEvent)
	}
	if r := record(t, d, "acme", ev.ID); rounds(r) != MaxRoundsPerEvent || len(r.Deliveries) != MaxRoundsPerEvent {
		t.Errorf("%d rounds, %d deliveries stored, want %d each", rounds(r), len(r.Deliveries), MaxRoundsPerEvent)
	}
}
