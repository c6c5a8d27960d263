// Tests that one merchant's outbox book, held by a long walk over its
// journal, holds up no other merchant's events, sends or pages.

package memory

import (
	"context"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/outboxtest"
)

func TestOutbox_OneMerchantsHeldBookLeavesOthersFree(t *testing.T) {
	o := NewOutbox(NewPayments())
	ctx := t.Context()
	if _, err := o.AddEvent(ctx, outboxtest.Event("busy", 1, "pay_1", "http://a.test/")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.AddEvent(ctx, outboxtest.Event("calm", 1, "pay_1", "http://b.test/")); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour) // after outboxtest's events fall due
	ops := map[string]func(context.Context) error{
		"AddEvent": func(ctx context.Context) error {
			_, err := o.AddEvent(ctx, outboxtest.Event("calm", 2, "pay_2", "http://b.test/"))
			return err
		},
		"Claim and Attempted": func(ctx context.Context) error {
			dels, err := o.Claim(ctx, paymock.Claim{MerchantID: "calm", Now: at, Until: at, Lease: time.Minute, Limit: 1})
			if err != nil || len(dels) == 0 {
				return err
			}
			return o.Attempted(ctx, dels[0], paymock.Outcome{Sends: 1, State: paymock.DeliveryDelivered})
		},
		"Events": func(ctx context.Context) error {
			_, _, err := o.Events(ctx, "calm", 0, 10)
			return err
		},
		"EndpointDeliveries": func(ctx context.Context) error {
			_, _, err := o.EndpointDeliveries(ctx, "calm", "we_0", 0, 10)
			return err
		},
		"Claimed": func(ctx context.Context) error {
			_, err := o.Claimed(ctx, "calm", at)
			return err
		},
		"TrimEvents": func(ctx context.Context) error {
			return o.TrimEvents(ctx, "calm", paymock.KeepEvents{Events: 1, Deliveries: 1})
		},
	}
	held := o.book("busy", false)
	defer held.mu.Unlock()
	othersGoOn(t, ctx, ops)
}

func TestOutbox_AnAddWaitingOnADroppedBookLandsInTheNewOne(t *testing.T) {
	o := NewOutbox(NewPayments())
	ctx := t.Context()
	if _, err := o.AddEvent(ctx, outboxtest.Event("acme", 1, "pay_1", "http://a.test/")); err != nil {
		t.Fatal(err)
	}
	// What ResetEvents does, with the add waiting in between: the add
	// finds the book, waits for its lock, and gets it once the book is
	// out of the outbox. (Were it slower, it finds no book and makes one.)
	old := o.book("acme", false)
	added := make(chan error, 1)
	go func() {
		_, err := o.AddEvent(ctx, outboxtest.Event("acme", 2, "pay_2", "http://a.test/"))
		added <- err
	}()
	time.Sleep(50 * time.Millisecond) // for the add to be waiting on old's lock
	o.mu.Lock()
	delete(o.books, "acme")
	o.mu.Unlock()
	old.dead = true
	old.mu.Unlock()
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	recs, total, err := o.Events(ctx, "acme", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || recs[0].ID != "evt_acme_002" {
		t.Errorf("the add waiting on a dropped book: %d events %v, want evt_acme_002 alone", total, recs)
	}
}
