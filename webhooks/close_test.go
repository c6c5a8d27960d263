// Tests of Close: the send under way, the work left pending for the next start, and work refused after.

package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

func TestClose_LetsTheSendUnderWayFinishAndLeavesTheRestPendingForTheNextStart(t *testing.T) {
	rcv, arrived, release := blockingReceiver(t)
	clock := newFakeClock()
	box := memory.NewOutbox(memory.NewPayments())
	d := newDispatcher(t, clock, Config{Outbox: box, MerchantSenders: 1})
	m := merchant("acme", rcv.endpoint())
	for i := range 3 {
		publish(t, d, m, event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i)))
	}
	if id := <-arrived; id != evID(0) {
		t.Fatalf("first arrival %s", id)
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close(context.Background()) }()
	waitFor(t, "Close to begin", func() bool { return d.isClosed() })
	release()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if del := only(t, record(t, d, "acme", evID(0))); del.State != paymock.DeliveryDelivered {
		t.Errorf("the delivery under way = %+v, want it to finish as delivered", del)
	}
	for _, id := range []string{evID(1), evID(2)} {
		if del := only(t, record(t, d, "acme", id)); del.State != paymock.DeliveryPending || len(del.Attempts) != 0 {
			t.Errorf("unsent %s = %+v, want pending with no attempt", id, del)
		}
	}
	if got := len(rcv.got(t)); got != 1 {
		t.Errorf("receiver got %d requests, want only the one under way", got)
	}

	// The next start on the same outbox sends them.
	next := newDispatcher(t, clock, Config{Outbox: box})
	next.RunDue("acme")
	for _, id := range []string{evID(1), evID(2)} {
		if del := only(t, record(t, next, "acme", id)); del.State != paymock.DeliveryDelivered {
			t.Errorf("after the next start %s = %+v, want delivered", id, del)
		}
	}
}

func TestClose_PastItsDeadlineCutsTheSendShortAndLeavesItPendingUnrecorded(t *testing.T) {
	rcv, arrived, _ := blockingReceiver(t)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{MerchantSenders: 1})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_inflight", "pay_1"))
	publish(t, d, m, event(t, "acme", "evt_queued", "pay_2"))
	<-arrived

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want the context's error", err)
	}
	for _, id := range []string{"evt_inflight", "evt_queued"} {
		if del := only(t, record(t, d, "acme", id)); del.State != paymock.DeliveryPending || len(del.Attempts) != 0 {
			t.Errorf("%s = %+v, want pending with no attempt recorded", id, del)
		}
	}
}

func TestClose_LeavesScheduledRetriesPendingAndRefusesLaterWork(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusInternalServerError })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{time.Minute}})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_waiting", "pay_1"))
	idle(t, d, "acme")
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	del := only(t, record(t, d, "acme", "evt_waiting"))
	if del.State != paymock.DeliveryPending || del.NextAttemptAt == "" || len(del.Attempts) != 1 {
		t.Errorf("waiting delivery = %+v, want still pending with its retry's time", del)
	}
	clock.Advance("acme", time.Hour) // the retry fires into a closed dispatcher
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 1 {
		t.Errorf("receiver got %d requests after Close, want 1", n)
	}

	err := d.Publish(context.Background(), m, event(t, "acme", "evt_late", "pay_2"))
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if del := only(t, record(t, d, "acme", "evt_late")); del.State != paymock.DeliveryPending {
		t.Errorf("late event = %+v, want stored pending for the next start", del)
	}
	if _, err := d.Redeliver(context.Background(), "acme", "evt_late"); !errors.Is(err, ErrClosed) {
		t.Errorf("Redeliver after Close = %v, want ErrClosed", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
