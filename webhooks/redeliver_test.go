// Tests of Redeliver: the same ID and body again, and only for the merchant's own events.

package webhooks

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/paymock/paymock"
)

func TestRedeliverSendsTheSameIDAndBodyAgain(t *testing.T) {
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ev := event(t, "acme", "evt_again", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	rec, err := d.Redeliver(context.Background(), "acme", ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Deliveries) != 2 || rec.Deliveries[1].Round != 2 {
		t.Errorf("Redeliver returned %+v, want a second round", rec.Deliveries)
	}
	idle(t, d, "acme")

	hits := rcv.got(t)
	if len(hits) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(hits))
	}
	for _, h := range hits {
		if h.id != ev.ID || !bytes.Equal(h.body, ev.Body) {
			t.Errorf("got id %s body %s, want the original id and body", h.id, h.body)
		}
	}
	r := record(t, d, "acme", ev.ID)
	for i, del := range r.Deliveries {
		if del.Round != i+1 || del.State != paymock.DeliveryDelivered || len(del.Attempts) != 1 {
			t.Errorf("delivery %d = %+v, want round %d delivered", i, del, i+1)
		}
	}
}

func TestRedeliverOfUnknownOrForeignEventIsNotFound(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	publish(t, d, merchant("acme"), event(t, "acme", "evt_acme", "pay_1"))
	for _, tc := range []struct{ name, merchant, id string }{
		{"unknown id", "acme", "evt_nope"},
		{"another merchant's id", "globex", "evt_acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Redeliver(context.Background(), tc.merchant, tc.id)
			if !errors.Is(err, paymock.ErrNotFound) {
				t.Errorf("Redeliver = %v, want ErrNotFound", err)
			}
		})
	}
}
