package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

func TestDeliveryIsSignedPerStandardWebhooks(t *testing.T) {
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	realNow := time.Now()
	d := newDispatcher(t, clock, Config{Now: func() time.Time { return realNow }})
	m := merchant("acme", rcv.endpoint())
	ev := event(t, "acme", "evt_signed", "pay_1")
	publish(t, d, m, ev)
	idle(t, d, "acme")

	hits := rcv.got(t)
	if len(hits) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(hits))
	}
	h := hits[0]
	for _, tc := range []struct{ header, want string }{
		{"webhook-id", ev.ID},
		{"webhook-timestamp", strconv.FormatInt(realNow.Unix(), 10)}, // real time, not the merchant's 2030
		{"Content-Type", "application/json"},
		{"User-Agent", "paymock-webhooks/1"},
	} {
		if got := h.header.Get(tc.header); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.header, got, tc.want)
		}
	}
	if !bytes.Equal(h.body, ev.Body) {
		t.Errorf("body = %s, want the event body %s", h.body, ev.Body)
	}
	want, _ := Sign(testSecret, ev.ID, realNow, ev.Body)
	if got := h.header.Get("webhook-signature"); got != want {
		t.Errorf("webhook-signature = %q, want %q", got, want)
	}

	// The same request does not verify under another secret.
	other, _ := GenerateSecret()
	if err := verifyWith(t, other, h); err == nil {
		t.Error("delivery verifies with a wrong secret")
	}

	r := record(t, d, "acme", ev.ID)
	del := only(t, r)
	if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 1 || del.Attempts[0].StatusCode != http.StatusNoContent {
		t.Errorf("delivery = %+v, want delivered after one 204", del)
	}
	if at := del.Attempts[0].At; at != paymock.FormatTime(clockStart) {
		t.Errorf("attempt at %s, want the merchant clock %s", at, paymock.FormatTime(clockStart))
	}
}

func TestFailingTwiceThenSucceedingTakesThreeAttemptsOnTheRetrySchedule(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	retry := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute}
	d := newDispatcher(t, clock, Config{Retry: retry})
	ev := event(t, "acme", "evt_retry", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryPending || del.NextAttemptAt != paymock.FormatTime(clockStart.Add(5*time.Second)) {
		t.Fatalf("after the first 500: %+v, want pending with the next attempt at +5s", del)
	}
	for _, step := range retry[:2] {
		clock.Advance("acme", step)
		idle(t, d, "acme")
	}

	hits := rcv.got(t)
	if got := ids(hits); !slices.Equal(got, []string{ev.ID, ev.ID, ev.ID}) {
		t.Errorf("receiver got ids %v, want %s three times", got, ev.ID)
	}
	del = only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryDelivered || del.NextAttemptAt != "" {
		t.Errorf("state %s, next %q, want delivered with nothing scheduled", del.State, del.NextAttemptAt)
	}
	wantAt := []time.Time{clockStart, clockStart.Add(5 * time.Second), clockStart.Add(35 * time.Second)}
	wantStatus := []int{500, 500, 200}
	if len(del.Attempts) != 3 {
		t.Fatalf("attempts = %+v, want 3", del.Attempts)
	}
	for i, a := range del.Attempts {
		if a.Attempt != i+1 || a.At != paymock.FormatTime(wantAt[i]) || a.StatusCode != wantStatus[i] {
			t.Errorf("attempt %d = %+v, want number %d at %s with %d", i, a, i+1, paymock.FormatTime(wantAt[i]), wantStatus[i])
		}
		if (a.Error != "") != (wantStatus[i] != 200) {
			t.Errorf("attempt %d error = %q", i+1, a.Error)
		}
	}
	if n := clock.Pending("acme"); n != 0 {
		t.Errorf("%d retries still scheduled after delivery", n)
	}
}

func TestUnreachableEndpointFailsAfterEveryAttempt(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL + "/hooks"
	down.Close() // connection refused from now on

	clock := newFakeClock()
	retry := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	d := newDispatcher(t, clock, Config{Retry: retry})
	ev := event(t, "acme", "evt_down", "pay_1")
	publish(t, d, merchant("acme", paymock.WebhookEndpoint{URL: url, Secret: testSecret}), ev)
	idle(t, d, "acme")
	for _, step := range retry {
		clock.Advance("acme", step)
		idle(t, d, "acme")
	}

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryFailed || len(del.Attempts) != 1+len(retry) {
		t.Fatalf("delivery = %+v, want failed after %d attempts", del, 1+len(retry))
	}
	for _, a := range del.Attempts {
		if a.Error == "" || a.StatusCode != 0 {
			t.Errorf("attempt %+v: want an error and no status", a)
		}
	}
	if !strings.Contains(del.Error, "4 attempts") {
		t.Errorf("delivery error = %q, want it to count the attempts", del.Error)
	}
	if clock.Pending("acme") != 0 {
		t.Error("a retry is still scheduled after the last attempt")
	}
	// Advancing further changes nothing: the failure stays visible.
	clock.Advance("acme", time.Hour)
	idle(t, d, "acme")
	if again := only(t, record(t, d, "acme", ev.ID)); again.State != paymock.DeliveryFailed || len(again.Attempts) != 4 {
		t.Errorf("after more time: %+v", again)
	}
}

func TestTimeoutCountsAsFailedAttempt(t *testing.T) {
	// The handler holds the request until the sender gives up, or until the
	// test ends: a server never notices a dropped connection on its own if
	// it reads nothing more from it, and Close would wait forever.
	release := make(chan struct{})
	rcv := newReceiver(t, func(h hit, _ int) int {
		select {
		case <-h.ctx.Done():
		case <-release:
		}
		return http.StatusOK
	})
	t.Cleanup(func() { close(release) }) // runs before the receiver's Close
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Timeout: 20 * time.Millisecond, Retry: []time.Duration{time.Minute}})
	ev := event(t, "acme", "evt_slow", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryPending || len(del.Attempts) != 1 || del.NextAttemptAt == "" {
		t.Fatalf("delivery = %+v, want a retry scheduled after the timeout", del)
	}
	if a := del.Attempts[0]; !strings.Contains(a.Error, "timeout") || a.StatusCode != 0 {
		t.Errorf("attempt = %+v, want a timeout error", a)
	}
}

func TestGoneStopsRetrying(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusGone })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ev := event(t, "acme", "evt_gone", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryFailed || len(del.Attempts) != 1 || del.Attempts[0].StatusCode != http.StatusGone {
		t.Fatalf("delivery = %+v, want failed after one 410", del)
	}
	if want := "endpoint answered 410 Gone: retries stopped"; del.Error != want || del.Attempts[0].Error != want {
		t.Errorf("errors %q / %q, want %q", del.Error, del.Attempts[0].Error, want)
	}
	if clock.Pending("acme") != 0 || del.NextAttemptAt != "" {
		t.Error("a retry was scheduled after 410")
	}
}

func TestNon2xxAnswersAreRetried(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusBadRequest, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			rcv := newReceiver(t, func(_ hit, n int) int {
				if n == 1 {
					return code
				}
				return http.StatusAccepted
			})
			clock := newFakeClock()
			d := newDispatcher(t, clock, Config{Retry: []time.Duration{time.Second}})
			ev := event(t, "acme", "evt_1", "pay_1")
			publish(t, d, merchant("acme", rcv.endpoint()), ev)
			idle(t, d, "acme")
			clock.Advance("acme", time.Second)
			idle(t, d, "acme")
			del := only(t, record(t, d, "acme", ev.ID))
			if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 2 || del.Attempts[0].StatusCode != code || del.Attempts[0].Error == "" {
				t.Errorf("delivery = %+v, want a failed %d then delivered", del, code)
			}
		})
	}
}

func TestConcurrentPublishesAreEachDeliveredOnce(t *testing.T) {
	const n = 50
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	m := merchant("acme", rcv.endpoint())
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := d.Publish(context.Background(), m, event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i))); err != nil {
				t.Errorf("Publish %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	idle(t, d, "acme")

	hits := rcv.got(t) // fails on any that does not verify
	seen := make(map[string]int)
	for _, h := range hits {
		seen[h.id]++
	}
	if len(hits) != n || len(seen) != n {
		t.Errorf("receiver got %d requests with %d distinct ids, want %d of each", len(hits), len(seen), n)
	}
	recs, total := events(t, d, "acme", 0, 0)
	if total != n || len(recs) != n {
		t.Fatalf("journal has %d (total %d), want %d", len(recs), total, n)
	}
	for _, r := range recs {
		if del := only(t, r); del.State != paymock.DeliveryDelivered || len(del.Attempts) != 1 {
			t.Errorf("%s: %+v", r.ID, del)
		}
	}
}

func TestDeliveriesOfOnePaymentToOneEndpointStayInOrder(t *testing.T) {
	t.Run("a later event waits for the earlier one's retry", func(t *testing.T) {
		rcv := newReceiver(t, func(h hit, n int) int {
			if h.id == "evt_a1" && n == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		clock := newFakeClock()
		d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second}})
		m := merchant("acme", rcv.endpoint())
		publish(t, d, m, event(t, "acme", "evt_a1", "pay_a"))
		publish(t, d, m, event(t, "acme", "evt_a2", "pay_a"))
		publish(t, d, m, event(t, "acme", "evt_b1", "pay_b"))
		idle(t, d, "acme")

		if got := ids(rcv.got(t)); !slices.Contains(got, "evt_b1") || slices.Contains(got, "evt_a2") {
			t.Errorf("before the retry the receiver got %v: want evt_b1 (another payment) and not evt_a2", got)
		}
		if del := only(t, record(t, d, "acme", "evt_a2")); del.State != paymock.DeliveryPending || len(del.Attempts) != 0 {
			t.Errorf("evt_a2 = %+v, want pending and not attempted", del)
		}

		clock.Advance("acme", 5*time.Second)
		idle(t, d, "acme")
		var payA []string
		for _, id := range ids(rcv.got(t)) {
			if strings.HasPrefix(id, "evt_a") {
				payA = append(payA, id)
			}
		}
		if want := []string{"evt_a1", "evt_a1", "evt_a2"}; !slices.Equal(payA, want) {
			t.Errorf("pay_a deliveries arrived as %v, want %v", payA, want)
		}
		for _, id := range []string{"evt_a1", "evt_a2", "evt_b1"} {
			if del := only(t, record(t, d, "acme", id)); del.State != paymock.DeliveryDelivered {
				t.Errorf("%s is %s, want delivered", id, del.State)
			}
		}
	})

	t.Run("a later event goes once the earlier one has finally failed", func(t *testing.T) {
		rcv := newReceiver(t, func(h hit, _ int) int {
			if h.id == "evt_a1" {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		clock := newFakeClock()
		d := newDispatcher(t, clock, Config{Retry: []time.Duration{}}) // a single attempt
		m := merchant("acme", rcv.endpoint())
		publish(t, d, m, event(t, "acme", "evt_a1", "pay_a"))
		publish(t, d, m, event(t, "acme", "evt_a2", "pay_a"))
		idle(t, d, "acme")
		if got := ids(rcv.got(t)); !slices.Equal(got, []string{"evt_a1", "evt_a2"}) {
			t.Errorf("receiver got %v, want evt_a1 then evt_a2", got)
		}
		if s := only(t, record(t, d, "acme", "evt_a1")).State; s != paymock.DeliveryFailed {
			t.Errorf("evt_a1 is %s, want failed", s)
		}
		if s := only(t, record(t, d, "acme", "evt_a2")).State; s != paymock.DeliveryDelivered {
			t.Errorf("evt_a2 is %s, want delivered", s)
		}
	})

	t.Run("many events of one payment with many senders arrive in publish order", func(t *testing.T) {
		rcv := newReceiver(t, nil)
		clock := newFakeClock()
		d := newDispatcher(t, clock, Config{MerchantSenders: 8})
		m := merchant("acme", rcv.endpoint())
		var want []string
		for i := range 30 {
			publish(t, d, m, event(t, "acme", evID(i), "pay_a"))
			want = append(want, evID(i))
		}
		idle(t, d, "acme")
		if got := ids(rcv.got(t)); !slices.Equal(got, want) {
			t.Errorf("arrival order %v, want %v", got, want)
		}
	})
}

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

// blockingReceiver holds every request until release is called (or the
// client gives up), and reports each arrival. release may be called more
// than once.
func blockingReceiver(t *testing.T) (rcv *receiver, arrived chan string, release func()) {
	arrived = make(chan string, 100)
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	rcv = newReceiver(t, func(h hit, _ int) int {
		arrived <- h.id
		select {
		case <-released:
		case <-h.ctx.Done():
		}
		return http.StatusOK
	})
	t.Cleanup(release) // runs before the server's Close
	return rcv, arrived, release
}

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

func TestEventsAreNewestFirstPagedAndPerMerchant(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	for i := range 5 {
		publish(t, d, merchant("acme"), event(t, "acme", evID(i), fmt.Sprintf("pay_%d", i)))
	}
	publish(t, d, merchant("globex"), event(t, "globex", "evt_globex", "pay_g"))

	for _, tc := range []struct {
		name          string
		merchant      string
		offset, limit int
		want          []string
		wantTotal     int
	}{
		{"first page", "acme", 0, 2, []string{evID(4), evID(3)}, 5},
		{"second page", "acme", 2, 2, []string{evID(2), evID(1)}, 5},
		{"last partial page", "acme", 4, 2, []string{evID(0)}, 5},
		{"past the end", "acme", 10, 2, []string{}, 5},
		{"no limit", "acme", 0, 0, []string{evID(4), evID(3), evID(2), evID(1), evID(0)}, 5},
		{"other merchant sees only its own", "globex", 0, 10, []string{"evt_globex"}, 1},
		{"unknown merchant sees nothing", "initech", 0, 10, []string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, total := events(t, d, tc.merchant, tc.offset, tc.limit)
			got := []string{}
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) || total != tc.wantTotal {
				t.Errorf("Events = %v (total %d), want %v (total %d)", got, total, tc.want, tc.wantTotal)
			}
		})
	}
	if _, ok, _ := d.Event(context.Background(), "globex", evID(0)); ok {
		t.Error("globex can read acme's event")
	}
}

func TestResetForgetsEventsAndDropsRetries(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusInternalServerError })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second}})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_old", "pay_1"))
	publish(t, d, merchant("globex"), event(t, "globex", "evt_kept", "pay_g"))
	idle(t, d, "acme")

	d.Reset(context.Background(), "acme")
	if recs, total := events(t, d, "acme", 0, 10); total != 0 || len(recs) != 0 {
		t.Errorf("after Reset: %d events (total %d)", len(recs), total)
	}
	if _, ok, _ := d.Event(context.Background(), "acme", "evt_old"); ok {
		t.Error("Event still finds a reset event")
	}
	if _, err := d.Redeliver(context.Background(), "acme", "evt_old"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("Redeliver of a reset event = %v, want ErrNotFound", err)
	}
	if _, total := events(t, d, "globex", 0, 10); total != 1 {
		t.Error("Reset of acme touched globex")
	}
	clock.Advance("acme", time.Minute)
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 1 {
		t.Errorf("receiver got %d requests, want the dropped retry not to be sent", n)
	}
	// The id is free again, and a new event of the same payment is not held
	// back by the forgotten one.
	publish(t, d, m, event(t, "acme", "evt_old", "pay_1"))
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
}

func TestEndpointsChosenPerMerchant(t *testing.T) {
	own := newReceiver(t, nil)
	shared := newReceiver(t, nil)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{DefaultEndpoints: []paymock.WebhookEndpoint{shared.endpoint()}})
	bad := paymock.WebhookEndpoint{URL: "http://hooks.example/x", Secret: "whsec_not base64!"}
	for _, tc := range []struct {
		name      string
		m         *paymock.Merchant
		wantOwn   int
		wantShare int
		wantState []paymock.DeliveryState
	}{
		{"own endpoints win", merchant("acme", own.endpoint()), 1, 0, []paymock.DeliveryState{paymock.DeliveryDelivered}},
		{"defaults when none", merchant("globex"), 0, 1, []paymock.DeliveryState{paymock.DeliveryDelivered}},
		{"invalid endpoint fails at once, the others go", merchant("initech", bad, own.endpoint()), 1, 0, []paymock.DeliveryState{paymock.DeliveryFailed, paymock.DeliveryDelivered}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			beforeOwn, beforeShared := len(own.got(t)), len(shared.got(t))
			publish(t, d, tc.m, event(t, tc.m.ID, "evt_"+tc.m.ID, "pay_1"))
			idle(t, d, tc.m.ID)
			if n := len(own.got(t)) - beforeOwn; n != tc.wantOwn {
				t.Errorf("own receiver got %d, want %d", n, tc.wantOwn)
			}
			if n := len(shared.got(t)) - beforeShared; n != tc.wantShare {
				t.Errorf("default receiver got %d, want %d", n, tc.wantShare)
			}
			r := record(t, d, tc.m.ID, "evt_"+tc.m.ID)
			var states []paymock.DeliveryState
			for _, del := range r.Deliveries {
				states = append(states, del.State)
				if del.State == paymock.DeliveryFailed && (del.Error == "" || strings.Contains(del.Error, "not base64!")) {
					t.Errorf("failed delivery error %q: want a reason without the secret", del.Error)
				}
			}
			if !slices.Equal(states, tc.wantState) {
				t.Errorf("states %v, want %v", states, tc.wantState)
			}
		})
	}
}

func TestEventWithoutEndpointsIsRecorded(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ev := event(t, "acme", "evt_nowhere", "pay_1")
	publish(t, d, merchant("acme"), ev)
	idle(t, d, "acme")
	r := record(t, d, "acme", ev.ID)
	if r.Deliveries == nil || len(r.Deliveries) != 0 || r.PaymentID != "pay_1" || r.Type != paymock.EventCompleted {
		t.Errorf("record = %+v, want the event with an empty delivery list", r)
	}
	if err := d.Publish(context.Background(), merchant("acme"), ev); err == nil {
		t.Error("publishing the same event id twice succeeded")
	}
}

func TestEventRecordJSONShape(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{30 * time.Second}})
	ev := event(t, "acme", "evt_json", "pay_json")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	decode := func() map[string]any {
		t.Helper()
		b, err := json.Marshal(record(t, d, "acme", ev.ID))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", b)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := decode()
	if m["id"] != "evt_json" || m["type"] != "payment.completed" || m["created_at"] != "2030-01-01T00:00:00Z" || m["payment_id"] != "pay_json" {
		t.Errorf("event fields: %v", m)
	}
	payload, _ := json.Marshal(m["payload"])
	var body, sent any
	_ = json.Unmarshal(payload, &body)
	_ = json.Unmarshal(ev.Body, &sent)
	if fmt.Sprint(body) != fmt.Sprint(sent) {
		t.Errorf("payload %s, want the body sent", payload)
	}
	del := m["deliveries"].([]any)[0].(map[string]any)
	if del["url"] != rcv.srv.URL+"/hooks" || del["state"] != "pending" || del["round"] != 1.0 ||
		del["next_attempt_at"] != "2030-01-01T00:00:30Z" {
		t.Errorf("pending delivery: %v", del)
	}
	a := del["attempts"].([]any)[0].(map[string]any)
	if a["attempt"] != 1.0 || a["at"] != "2030-01-01T00:00:00Z" || a["status_code"] != 500.0 || a["error"] == nil {
		t.Errorf("failed attempt: %v", a)
	}
	if _, ok := a["duration_ms"].(float64); !ok {
		t.Errorf("duration_ms missing or not a number: %v", a)
	}

	clock.Advance("acme", 30*time.Second)
	idle(t, d, "acme")
	del = decode()["deliveries"].([]any)[0].(map[string]any)
	a = del["attempts"].([]any)[1].(map[string]any)
	for key, present := range map[string]bool{"next_attempt_at": false, "error": false} {
		if _, ok := del[key]; ok != present {
			t.Errorf("delivered delivery has %s: %v", key, ok)
		}
	}
	if _, ok := a["error"]; ok || a["status_code"] != 200.0 {
		t.Errorf("successful attempt: %v", a)
	}
}

func TestRecordsAreCopies(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	publish(t, d, merchant("acme"), event(t, "acme", "evt_1", "pay_1"))
	r := record(t, d, "acme", "evt_1")
	for i := range r.Payload {
		r.Payload[i] = 'x'
	}
	if again := record(t, d, "acme", "evt_1"); !json.Valid(again.Payload) {
		t.Error("changing a returned record changed the journal")
	}
}

func TestLogsNeverContainSecrets(t *testing.T) {
	var logs syncBuffer
	rcv := newReceiver(t, func(h hit, n int) int {
		if h.id == "evt_gone" {
			return http.StatusGone
		}
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	ep := rcv.endpoint()
	ep.URL = strings.Replace(ep.URL, "http://", "http://user:pa55word@", 1)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Logger: debugLogger(&logs), Retry: []time.Duration{time.Second}})
	m := merchant("acme", ep, paymock.WebhookEndpoint{URL: "http://h.example", Secret: "whsec_s3cr3t!!"})
	publish(t, d, m, event(t, "acme", "evt_retry", "pay_1"))
	publish(t, d, m, event(t, "acme", "evt_gone", "pay_2"))
	idle(t, d, "acme")
	clock.Advance("acme", time.Second)
	idle(t, d, "acme")
	_ = d.Close(context.Background())

	out := logs.String()
	if !strings.Contains(out, "webhook attempt") || !strings.Contains(out, "level=WARN") {
		t.Errorf("expected debug attempts and a warning in the logs:\n%s", out)
	}
	for _, secret := range []string{testSecret, strings.TrimPrefix(testSecret, "whsec_"), "s3cr3t", "pa55word"} {
		if strings.Contains(out, secret) {
			t.Errorf("logs contain the secret %q:\n%s", secret, out)
		}
	}
	for _, r := range []string{"evt_retry", "evt_gone"} {
		b, _ := json.Marshal(record(t, d, "acme", r))
		if bytes.Contains(b, []byte("pa55word")) || bytes.Contains(b, []byte(strings.TrimPrefix(testSecret, "whsec_"))) {
			t.Errorf("record %s contains a secret: %s", r, b)
		}
	}
}

func TestIdleRespectsContext(t *testing.T) {
	rcv, arrived, release := blockingReceiver(t)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	publish(t, d, merchant("acme", rcv.endpoint()), event(t, "acme", "evt_1", "pay_1"))
	<-arrived
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Idle(ctx, "acme"); !errors.Is(err, context.Canceled) {
		t.Errorf("Idle with a delivery in flight and a done context = %v", err)
	}
	if err := d.Idle(ctx, "globex"); err != nil {
		t.Errorf("Idle of a merchant with nothing to do = %v", err)
	}
	release()
	idle(t, d, "acme")
}

func TestJournal_IsBoundedButKeepsPendingEvents(t *testing.T) {
	failing := true
	var mu sync.Mutex
	rcv := newReceiver(t, func(h hit, _ int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing && h.id == "evt_0" {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{MaxEvents: 3, Retry: []time.Duration{time.Hour}})
	m := merchant("acme", rcv.endpoint())
	for i := range trimEvery { // the journal is trimmed every trimEvery events
		publish(t, d, m, event(t, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i)))
		idle(t, d, "acme")
	}
	recs, total := events(t, d, "acme", 0, 200)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	// The newest fill the bound; evt_0 waits for its retry, so it stays.
	if total != 4 || strings.Join(ids, ",") != "evt_99,evt_98,evt_97,evt_0" {
		t.Errorf("journal holds %d: %v", total, ids)
	}
	if _, ok, _ := d.Event(context.Background(), "acme", "evt_1"); ok {
		t.Error("a trimmed event is still found")
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	clock.Advance("acme", time.Hour)
	idle(t, d, "acme")
	if r, ok, _ := d.Event(context.Background(), "acme", "evt_0"); !ok || r.Deliveries[0].State != paymock.DeliveryDelivered {
		t.Errorf("the kept event did not finish: %+v", r)
	}
}
