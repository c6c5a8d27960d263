// Tests of the send slots and of shaped sends against a receiver that
// never answers: outbound requests stay within Senders whatever makes
// them, and a duplicated send ends within its lease and is recorded.

package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

// hangingReceiver answers nothing until the sender gives up on the
// request (its timeout), except where fail says to answer 500 at once. It
// counts requests; its client counts those in flight, and the most at
// once, on the sender's side, where a request ends the moment the sender
// gives up (the server notices a closed connection only later).
type hangingReceiver struct {
	srv    *httptest.Server
	fail   func(path string, n int) bool // n: requests to path so far, this one included
	client *http.Client

	mu           sync.Mutex
	active, most int
	byPath       map[string]int
	total        int
	released     chan struct{}
}

func newHangingReceiver(t *testing.T, fail func(path string, n int) bool) *hangingReceiver {
	t.Helper()
	r := &hangingReceiver{fail: fail, byPath: make(map[string]int), released: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.byPath[req.URL.Path]++
		r.total++
		n := r.byPath[req.URL.Path]
		r.mu.Unlock()
		if r.fail != nil && r.fail(req.URL.Path, n) {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		select {
		case <-req.Context().Done():
		case <-r.released:
		}
	}))
	r.client = &http.Client{Transport: countingTransport{r: r, next: http.DefaultTransport.(*http.Transport).Clone()}}
	// Before the dispatcher's Close (cleanups run last first), so that
	// Close does not wait out the sends under way.
	t.Cleanup(func() { close(r.released); r.srv.Close() })
	return r
}

// countingTransport counts a hangingReceiver's requests in flight.
type countingTransport struct {
	r    *hangingReceiver
	next http.RoundTripper
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.r.mu.Lock()
	c.r.active++
	c.r.most = max(c.r.most, c.r.active)
	c.r.mu.Unlock()
	defer func() {
		c.r.mu.Lock()
		c.r.active--
		c.r.mu.Unlock()
	}()
	// Ends with the answer's headers: an answered request is not what
	// the tests bound (each answers at once or never).
	return c.next.RoundTrip(req)
}

func (r *hangingReceiver) counts() (active, most, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active, r.most, r.total
}

func (r *hangingReceiver) endpoint(path string) paymock.WebhookEndpoint {
	return paymock.WebhookEndpoint{URL: r.srv.URL + path, Secret: testSecret}
}

func TestSendSlots_TimersAndSendersTogetherStayWithinSenders(t *testing.T) {
	// B's first send fails at once, so its retry is a timer: an advance
	// of B's clock sends it in the advance's goroutine while both of the
	// process's senders hang on A's endpoint. It must wait for one of
	// them rather than open a third request.
	rcv := newHangingReceiver(t, func(path string, n int) bool { return path == "/b" && n == 1 })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Client: rcv.client, Senders: 2, MerchantSenders: 2, Timeout: 2 * time.Second,
		Retry: []time.Duration{time.Second}})
	b := merchant("b", rcv.endpoint("/b"))
	publish(t, d, b, event(t, "b", "evt_b", "pay_b"))
	idle(t, d, "b")
	if del := only(t, record(t, d, "b", "evt_b")); del.State != paymock.DeliveryPending || len(del.Attempts) != 1 {
		t.Fatalf("B's delivery = %+v, want pending after one failed attempt", del)
	}

	a := merchant("a", rcv.endpoint("/a"))
	publish(t, d, a, event(t, "a", "evt_a1", "pay_a1"))
	publish(t, d, a, event(t, "a", "evt_a2", "pay_a2"))
	waitFor(t, "both senders to hang on A's endpoint", func() bool { active, _, _ := rcv.counts(); return active == 2 })

	clock.Advance("b", time.Second) // returns once B's retry is sent
	if _, most, _ := rcv.counts(); most > 2 {
		t.Errorf("the receiver held %d requests at once, want at most Senders = 2", most)
	}
	if del := only(t, record(t, d, "b", "evt_b")); len(del.Attempts) != 2 {
		t.Errorf("B's delivery = %+v, want its retry recorded by the time the advance returned", del)
	}
}

func TestSendSlots_ATestEventWaitsForItsMerchantsShare(t *testing.T) {
	// One merchant's senders hang on its endpoint; a test event of the
	// same merchant makes no request past its MerchantSenders, and one
	// whose caller gives up is sent by the merchant's senders later.
	rcv := newHangingReceiver(t, nil)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Client: rcv.client, Senders: 8, MerchantSenders: 1, Timeout: 2 * time.Second,
		Retry: []time.Duration{time.Hour}})
	m := merchant("m", rcv.endpoint("/hooks"))
	publish(t, d, m, event(t, "m", "evt_1", "pay_1"))
	waitFor(t, "the merchant's sender to hang", func() bool { active, _, _ := rcv.counts(); return active == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rec, err := d.SendTest(ctx, m, rcv.endpoint("/hooks"))
	if err != nil {
		t.Fatal(err)
	}
	if _, most, total := rcv.counts(); most != 1 || total != 1 {
		t.Fatalf("the receiver got %d requests, %d at once, while the sender hung: want the test event to wait", total, most)
	}
	waitFor(t, "the senders to send the test event the caller gave up on", func() bool {
		r := record(t, d, "m", rec.ID)
		return len(r.Deliveries) == 1 && len(r.Deliveries[0].Attempts) == 1
	})
	if _, most, _ := rcv.counts(); most != 1 {
		t.Errorf("the receiver held %d requests at once, want at most MerchantSenders = 1", most)
	}
}

func TestShapedSend_DuplicateToAReceiverThatNeverAnswersIsRecordedWithinItsLease(t *testing.T) {
	// Ten copies at a 1 s timeout each took 10 s, past the 6 s lease:
	// another sender claimed the delivery again and the first send was
	// never recorded. Now the copies share the timeout.
	for _, tc := range []struct {
		name  string
		fault paymock.WebhookFault
	}{
		{"duplicate", paymock.WebhookFault{RuleID: "flt_dup", Duplicate: 10}},
		{"duplicate after an unknown type", paymock.WebhookFault{RuleID: "flt_dup", Duplicate: 10, UnknownType: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newHangingReceiver(t, nil)
			clock := newFakeClock()
			box := memory.NewOutbox(memory.NewPayments())
			d := newDispatcher(t, clock, Config{Client: rcv.client, Outbox: box, Timeout: time.Second, Retry: []time.Duration{time.Minute},
				Faults: firstAsk(tc.fault)})
			m := merchant("m", rcv.endpoint("/hooks"))
			publish(t, d, m, event(t, "m", "evt_dup", "pay_1"))
			idle(t, d, "m")

			del := only(t, record(t, d, "m", "evt_dup"))
			if del.State != paymock.DeliveryPending || len(del.Attempts) == 0 || del.NextAttemptAt == "" {
				t.Fatalf("delivery = %+v, want its first send recorded and a retry scheduled", del)
			}
			_, _, total := rcv.counts()
			if total != len(del.Attempts) {
				t.Errorf("the receiver got %d requests for %d recorded: the delivery was sent past its records", total, len(del.Attempts))
			}
			last := del.Attempts[len(del.Attempts)-1]
			if last.Error == "" || !strings.Contains(last.Error, "timeout") {
				t.Errorf("last attempt = %+v, want a timeout", last)
			}
			if f := last.Fault; f != nil && f.Duplicate == 10 && !strings.Contains(f.Effect, "were not sent") {
				t.Errorf("the last copy's effect %q does not say the copies left were not sent", f.Effect)
			}
			// Claimable again only once due: nothing is claimed while the
			// retry waits, as a lapsed claim of a live send would be.
			dels, err := box.Claim(context.Background(), paymock.Claim{MerchantID: "m", Until: clock.Now(context.Background(), "m"),
				Now: time.Now().Add(time.Hour), Lease: time.Minute, Limit: 1})
			if err != nil || len(dels) != 0 {
				t.Errorf("Claim after the recorded send = %v, %v: want nothing due", dels, err)
			}
		})
	}
}
