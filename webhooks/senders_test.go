// Tests of the senders: Publish never waits for one, and merchants waiting for one are served in turn.

package webhooks

import (
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestPublish_NeverWaitsForASender(t *testing.T) {
	rcv, arrived, release := blockingReceiver(t)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Senders: 1, MerchantSenders: 1})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_0", "pay_0")) // holds the only sender
	<-arrived
	// Every publish returns while the only sender is held: nothing waits
	// for room.
	var want []string
	for i := range 20 {
		publish(t, d, m, event(t, "acme", fmt.Sprintf("evt_%d", i+1), fmt.Sprintf("pay_%d", i+1)))
		want = append(want, fmt.Sprintf("evt_%d", i+1))
	}
	if n := len(rcv.all()); n != 1 {
		t.Fatalf("%d requests before the release, want the one held", n)
	}
	release()
	idle(t, d, "acme")
	if got := ids(rcv.got(t)); !slices.Equal(got, append([]string{"evt_0"}, want...)) {
		t.Errorf("receiver got %v, want evt_0 then the others in publish order", got)
	}
}

func TestSenders_MerchantsWaitingForASenderAreServedInTurn(t *testing.T) {
	slow, arrived, release := blockingReceiver(t)
	var seenBeforeB atomic.Int64
	fine := newReceiver(t, func(hit, int) int {
		seenBeforeB.Store(int64(len(slow.all())))
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Senders: 1, MerchantSenders: 1})
	a := merchant("acme", slow.endpoint())
	for i := range 5 {
		publish(t, d, a, event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i)))
	}
	<-arrived // acme holds the only sender
	publish(t, d, merchant("globex", fine.endpoint()), event(t, "globex", "evt_globex", "pay_g"))
	release()
	idle(t, d, "globex")
	idle(t, d, "acme")
	if n := seenBeforeB.Load(); n != 1 {
		t.Errorf("acme had %d sends before globex's, want 1: the sender goes to globex once acme's send ends", n)
	}
	if n := len(slow.all()); n != 5 {
		t.Errorf("acme got %d of its 5 deliveries", n)
	}
}

func TestSenders_AMerchantWhoseEndpointNeverAnswersCannotDelayAnother(t *testing.T) {
	hung, _, release := blockingReceiver(t)
	fine := newReceiver(t, nil)
	clock := newFakeClock()
	// No send times out within the test: acme's hang until released.
	d := newDispatcher(t, clock, Config{Senders: 4, MerchantSenders: 2, Timeout: time.Minute})
	defer release()
	a := merchant("acme", hung.endpoint(), hung.endpoint(), hung.endpoint())
	for i := range 10 {
		publish(t, d, a, event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i)))
	}
	waitFor(t, "acme's senders to hang", func() bool { return len(hung.all()) == 2 })
	publish(t, d, merchant("globex", fine.endpoint()), event(t, "globex", "evt_globex", "pay_g"))
	idle(t, d, "globex") // returns while acme's sends still hang
	if del := only(t, record(t, d, "globex", "evt_globex")); del.State != paymock.DeliveryDelivered {
		t.Errorf("globex's delivery = %+v, want delivered while acme's endpoints hang", del)
	}
	if n := len(hung.all()); n != 2 {
		t.Errorf("acme has %d sends under way, want its share of 2", n)
	}
}
