// Tests of webhook faults as a receiver sees them, verified with the
// Standard Webhooks reference library, and as the journal shows them.

package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
)

// scriptedFaults answers the n-th ask (from 1) with plan(n, eventType) and
// remembers every ask.
type scriptedFaults struct {
	plan func(n int, t paymock.EventType) (paymock.WebhookFault, bool)

	mu   sync.Mutex
	asks []string // merchant/eventType, in order
}

func (f *scriptedFaults) WebhookFault(_ context.Context, merchantID string, t paymock.EventType) (paymock.WebhookFault, bool) {
	f.mu.Lock()
	f.asks = append(f.asks, merchantID+"/"+string(t))
	n := len(f.asks)
	f.mu.Unlock()
	return f.plan(n, t)
}

func (f *scriptedFaults) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asks)
}

// neverFaults is a rule book with no rule for any delivery.
type neverFaults struct{}

func (neverFaults) WebhookFault(context.Context, string, paymock.EventType) (paymock.WebhookFault, bool) {
	return paymock.WebhookFault{}, false
}

// firstAsk shapes the first delivery made with fault and no other.
func firstAsk(fault paymock.WebhookFault) *scriptedFaults {
	return &scriptedFaults{plan: func(n int, _ paymock.EventType) (paymock.WebhookFault, bool) { return fault, n == 1 }}
}

func TestFaults_DuplicateSendsCopiesWithOneIDThatEachVerify(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n == 1 {
			return http.StatusInternalServerError // a receiver that chokes on the first copy
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Faults: firstAsk(paymock.WebhookFault{RuleID: "flt_dup", Duplicate: 3})})
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_dup", "pay_1"))
	publish(t, d, m, event(t, "acme", "evt_plain", "pay_2"))
	idle(t, d, "acme")

	hits := rcv.got(t) // fails the test on any copy that does not verify
	var dup []hit
	for _, h := range hits {
		if h.id == "evt_dup" {
			dup = append(dup, h)
		}
	}
	if len(dup) != 3 || len(hits) != 4 {
		t.Fatalf("receiver got %v, want evt_dup three times and evt_plain once", ids(hits))
	}
	if dup[0].header.Get(HeaderSignature) == "" || !slices.EqualFunc(dup[1:], dup[:2], func(a, b hit) bool { return string(a.body) == string(b.body) }) {
		t.Error("the copies do not carry the same body")
	}

	del := only(t, record(t, d, "acme", "evt_dup"))
	if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 3 {
		t.Fatalf("delivery = %+v, want delivered with one record per copy", del)
	}
	for i, a := range del.Attempts {
		f := a.Fault
		if a.Attempt != 1 || f == nil || f.RuleID != "flt_dup" || f.Duplicate != 3 || f.Copy != i+1 || !strings.Contains(f.Effect, "same webhook-id") {
			t.Errorf("copy %d = %+v (fault %+v), want attempt 1, copy %d of 3 by flt_dup", i+1, a, f, i+1)
		}
	}
	if del.Attempts[0].StatusCode != 500 || del.Attempts[1].StatusCode != 200 {
		t.Errorf("copies answered %d, %d: want the receiver's 500 then 200", del.Attempts[0].StatusCode, del.Attempts[1].StatusCode)
	}
	if plain := only(t, record(t, d, "acme", "evt_plain")); len(plain.Attempts) != 1 || plain.Attempts[0].Fault != nil {
		t.Errorf("an unmatched delivery = %+v, want one plain attempt", plain)
	}
}

func TestFaults_BadSignatureFailsVerificationAndTheRetryIsClean(t *testing.T) {
	// A careful receiver turns down what does not verify.
	rcv := newReceiver(t, func(h hit, _ int) int {
		if h.verifyErr != nil {
			return http.StatusBadRequest
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second},
		Faults: firstAsk(paymock.WebhookFault{RuleID: "flt_sig", BadSignature: true})})
	publish(t, d, merchant("acme", rcv.endpoint()), event(t, "acme", "evt_sig", "pay_1"))
	idle(t, d, "acme")

	first := rcv.all()
	if len(first) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(first))
	}
	if err := first[0].verifyErr; !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("reference library said %v, want ErrNoMatchingSignature", err)
	}
	if err := first[0].sigErr; err == nil {
		t.Error("the bad signature verifies when the timestamp is ignored")
	}
	del := only(t, record(t, d, "acme", "evt_sig"))
	if a := del.Attempts[0]; a.StatusCode != 400 || a.Fault == nil || !a.Fault.BadSignature || a.Fault.RuleID != "flt_sig" {
		t.Errorf("attempt = %+v (fault %+v), want the receiver's 400 and the bad_signature fault", a, a.Fault)
	}

	clock.Advance("acme", 5*time.Second)
	idle(t, d, "acme")
	all := rcv.all()
	if len(all) != 2 || all[1].verifyErr != nil {
		t.Fatalf("retry: %d requests, last verify error %v; want a retry that verifies", len(all), all[len(all)-1].verifyErr)
	}
	del = only(t, record(t, d, "acme", "evt_sig"))
	if del.State != paymock.DeliveryDelivered || del.Attempts[1].Fault != nil {
		t.Errorf("after the retry: %+v, want delivered by a plain second attempt", del)
	}
}

func TestFaults_TimestampSkewFailsOnlyTheToleranceCheck(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusOK })
	clock := newFakeClock()
	realNow := time.Now()
	d := newDispatcher(t, clock, Config{Now: func() time.Time { return realNow },
		Faults: firstAsk(paymock.WebhookFault{RuleID: "flt_skew", TimestampSkew: -600 * time.Second})})
	ev := event(t, "acme", "evt_skew", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	hits := rcv.all()
	if len(hits) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(hits))
	}
	h := hits[0]
	if err := h.verifyErr; !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("reference library Verify = %v, want ErrMessageTooOld", err)
	}
	if h.sigErr != nil {
		t.Errorf("the signature over the skewed timestamp does not verify: %v", h.sigErr)
	}
	ts, err := strconv.ParseInt(h.header.Get(HeaderTimestamp), 10, 64)
	if err != nil || ts != realNow.Unix()-600 {
		t.Errorf("webhook-timestamp = %q, want %d", h.header.Get(HeaderTimestamp), realNow.Unix()-600)
	}
	if want, _ := Sign(testSecret, ev.ID, time.Unix(ts, 0), ev.Body); h.header.Get(HeaderSignature) != want {
		t.Errorf("signature %q, want the HMAC over the skewed timestamp %q", h.header.Get(HeaderSignature), want)
	}
	f := only(t, record(t, d, "acme", ev.ID)).Attempts[0].Fault
	if f == nil || f.TimestampSkewS != -600 || !strings.Contains(f.Effect, "-600 s") {
		t.Errorf("attempt fault = %+v, want timestamp_skew_s -600", f)
	}
}

func TestFaults_DelayHoldsTheFirstSendOnTheMerchantClock(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second},
		Faults: firstAsk(paymock.WebhookFault{RuleID: "flt_late", Delay: 3 * time.Second})})
	publish(t, d, merchant("acme", rcv.endpoint()), event(t, "acme", "evt_late", "pay_1"))
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", "evt_late"))
	if len(rcv.all()) != 0 || del.State != paymock.DeliveryPending || del.NextAttemptAt != paymock.FormatTime(clockStart.Add(3*time.Second)) {
		t.Fatalf("before the delay: %d requests, delivery %+v; want none, pending until +3s", len(rcv.all()), del)
	}
	if !d.Busy("acme") {
		t.Error("Busy is false while a delayed delivery waits")
	}
	clock.Advance("acme", 2*time.Second)
	idle(t, d, "acme")
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("%d requests 2 s in, want none before the 3 s delay", n)
	}
	clock.Advance("acme", time.Second)
	idle(t, d, "acme")
	if n := len(rcv.got(t)); n != 1 {
		t.Fatalf("%d requests once the delay is over, want 1", n)
	}
	del = only(t, record(t, d, "acme", "evt_late"))
	a := del.Attempts[0]
	if a.At != paymock.FormatTime(clockStart.Add(3*time.Second)) || a.Fault == nil || a.Fault.DelayMS != 3000 {
		t.Errorf("attempt = %+v (fault %+v), want it at +3s shaped by a 3000 ms delay", a, a.Fault)
	}
	// The retry is measured from the delayed attempt, and is not delayed.
	if del.NextAttemptAt != paymock.FormatTime(clockStart.Add(8*time.Second)) {
		t.Errorf("next attempt at %s, want +8s", del.NextAttemptAt)
	}
	clock.Advance("acme", 5*time.Second)
	idle(t, d, "acme")
	del = only(t, record(t, d, "acme", "evt_late"))
	if del.State != paymock.DeliveryDelivered || del.Attempts[1].Fault != nil {
		t.Errorf("after the retry: %+v, want delivered by a plain attempt", del)
	}
}

func TestFaults_ReorderSendsDeliveriesDueTogetherNewestFirst(t *testing.T) {
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	// Many senders: the order must not depend on which one is free.
	d := newDispatcher(t, clock, Config{MerchantSenders: 8,
		Faults: firstAsk(paymock.WebhookFault{RuleID: "flt_order", Reorder: true})}) // default window, 1 s
	m := merchant("acme", rcv.endpoint())
	publish(t, d, m, event(t, "acme", "evt_a", "pay_a")) // opens the window
	publish(t, d, m, event(t, "acme", "evt_b", "pay_b"))
	publish(t, d, m, event(t, "acme", "evt_a2", "pay_a")) // waits behind evt_a: one payment keeps its order
	publish(t, d, m, event(t, "acme", "evt_c", "pay_c"))
	idle(t, d, "acme")
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("%d requests while the window is open, want none", n)
	}
	if del := only(t, record(t, d, "acme", "evt_b")); del.NextAttemptAt != paymock.FormatTime(clockStart.Add(time.Second)) {
		t.Errorf("held delivery = %+v, want its next attempt when the window closes", del)
	}
	clock.Advance("acme", 500*time.Millisecond)
	idle(t, d, "acme")
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("%d requests half way through the window, want none", n)
	}
	clock.Advance("acme", 500*time.Millisecond)
	idle(t, d, "acme")

	if got, want := ids(rcv.got(t)), []string{"evt_c", "evt_b", "evt_a", "evt_a2"}; !slices.Equal(got, want) {
		t.Errorf("arrival order %v, want %v", got, want)
	}
	// evt_a2 was held by the window too, and went once evt_a had.
	for _, id := range []string{"evt_c", "evt_b", "evt_a", "evt_a2"} {
		a := only(t, record(t, d, "acme", id)).Attempts[0]
		if f := a.Fault; f == nil || f.RuleID != "flt_order" || !f.Reorder || f.WindowMS != 1000 ||
			!strings.Contains(f.Effect, "newest first") {
			t.Errorf("%s attempt fault = %+v, want flt_order's window", id, f)
		}
	}

	// Once the window has closed, deliveries go at once.
	publish(t, d, m, event(t, "acme", "evt_d", "pay_d"))
	idle(t, d, "acme")
	if got := ids(rcv.got(t)); got[len(got)-1] != "evt_d" {
		t.Errorf("after the window: %v, want evt_d delivered at once", got)
	}
}

func TestFaults_AskedOncePerDeliveryInTheOrderDeliveriesAreMade(t *testing.T) {
	failing := newReceiver(t, func(hit, int) int { return http.StatusInternalServerError })
	ok := newReceiver(t, nil)
	faults := &scriptedFaults{plan: func(int, paymock.EventType) (paymock.WebhookFault, bool) { return paymock.WebhookFault{}, false }}
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Retry: []time.Duration{time.Second, time.Second}, Faults: faults})
	bad := paymock.WebhookEndpoint{URL: "ftp://nowhere", Secret: testSecret} // invalid: never asked about
	m := merchant("acme", failing.endpoint(), bad, ok.endpoint())
	publish(t, d, m, event(t, "acme", "evt_1", "pay_1"))
	idle(t, d, "acme")
	// Both retries of the failing endpoint, one step each: a retry is due
	// a second after the attempt before it, which runs on a worker.
	for range 2 {
		clock.Advance("acme", time.Second)
		idle(t, d, "acme")
	}
	if got := faults.asked(); !slices.Equal(got, []string{"acme/payment.completed", "acme/payment.completed"}) {
		t.Errorf("asks after publish and retries = %v, want one per valid endpoint", got)
	}
	if _, err := d.Redeliver(t.Context(), "acme", "evt_1"); err != nil {
		t.Fatal(err)
	}
	idle(t, d, "acme")
	if n := len(faults.asked()); n != 4 {
		t.Errorf("%d asks after a redelivery, want 4: a new round asks again", n)
	}
	if n := len(failing.got(t)); n != 4 {
		t.Errorf("failing endpoint got %d requests, want 3 attempts then 1 of the new round", n)
	}
}

func TestFaults_UnmatchedDeliveryIsExactlyAsWithoutFaults(t *testing.T) {
	never := &scriptedFaults{plan: func(int, paymock.EventType) (paymock.WebhookFault, bool) { return paymock.WebhookFault{}, false }}
	noEffect := &scriptedFaults{plan: func(int, paymock.EventType) (paymock.WebhookFault, bool) {
		return paymock.WebhookFault{RuleID: "flt_none"}, true
	}}
	for _, tc := range []struct {
		name   string
		faults Faults
	}{{"no faults configured", nil}, {"no rule matches", never}, {"a match with no effect", noEffect}} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, func(_ hit, n int) int {
				if n == 1 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			})
			clock := newFakeClock()
			d := newDispatcher(t, clock, Config{Retry: []time.Duration{5 * time.Second}, Faults: tc.faults})
			publish(t, d, merchant("acme", rcv.endpoint()), event(t, "acme", "evt_1", "pay_1"))
			idle(t, d, "acme")
			clock.Advance("acme", 5*time.Second)
			idle(t, d, "acme")
			if got := ids(rcv.got(t)); !slices.Equal(got, []string{"evt_1", "evt_1"}) {
				t.Errorf("receiver got %v, want evt_1 twice", got)
			}
			b, err := json.Marshal(record(t, d, "acme", "evt_1"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"fault"`) {
				t.Errorf("record shows a fault: %s", b)
			}
			del := only(t, record(t, d, "acme", "evt_1"))
			if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 2 || del.Attempts[1].At != paymock.FormatTime(clockStart.Add(5*time.Second)) {
				t.Errorf("delivery = %+v, want delivered by the retry at +5s", del)
			}
		})
	}
}

// BenchmarkDeliver_FaultsAskedNoneMatch is BenchmarkDeliver with a rule
// book that is asked about every delivery and never matches, and an
// observer: the price every sandbox with fault rules and metrics pays.
func BenchmarkDeliver_FaultsAskedNoneMatch(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	d := newDispatcher(b, newFakeClock(), Config{Faults: neverFaults{}, Observer: newCountingObserver()})
	m := merchant("acme", paymock.WebhookEndpoint{URL: srv.URL, Secret: testSecret})
	evs := make([]paymock.Event, b.N)
	for i := range evs {
		evs[i] = event(b, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for _, ev := range evs {
		if err := d.Publish(ctx, m, ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Idle(ctx, "acme"); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

func TestWithExtraFields_AddsOneFieldAtTopAndInDataKeepingTheRest(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"payment", `{"id":"evt_1","type":"payment.completed","created_at":"2026-01-01T00:00:00Z","data":{"id":"pay_1","amount":10.5}}`,
			`{"id":"evt_1","type":"payment.completed","created_at":"2026-01-01T00:00:00Z","data":{"id":"pay_1","amount":10.5,"paymock_extra":` +
				extraFieldsData + `},"paymock_extra":"added by a paymock extra_fields fault: ignore it"}`},
		{"empty data", `{"id":"evt_1","type":"webhook.test","created_at":"2026-01-01T00:00:00Z","data":{ }}`,
			`{"id":"evt_1","type":"webhook.test","created_at":"2026-01-01T00:00:00Z","data":{"paymock_extra":` +
				extraFieldsData + `},"paymock_extra":"added by a paymock extra_fields fault: ignore it"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := withExtraFields([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	for _, bad := range []string{`{"id":"evt_1","data":[1]}`, `{"id":"evt_1","data":null}`, `not json`} {
		if _, err := withExtraFields([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestUnknownTypeEvent_HasAnIDPerDeliveryAndTheEventsData(t *testing.T) {
	body := []byte(`{"id":"evt_a","type":"payment.failed","created_at":"2026-01-01T00:00:00Z","data":{"id":"pay_1"}}`)
	seen := map[string]bool{}
	for _, del := range []paymock.Delivery{
		{EventID: "evt_a", Round: 1, Position: 0, Body: body},
		{EventID: "evt_a", Round: 1, Position: 1, Body: body},
		{EventID: "evt_a", Round: 2, Position: 0, Body: body},
	} {
		ev, err := unknownTypeEvent(del)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"id":%q,"type":"payment.paymock_unknown","created_at":"2026-01-01T00:00:00Z","data":{"id":"pay_1"}}`, ev.ID)
		if string(ev.Body) != want || ev.Type != paymock.FaultUnknownEventType {
			t.Errorf("body %s, want %s", ev.Body, want)
		}
		if !regexp.MustCompile(`^evt_[0-9A-Za-z]{24}$`).MatchString(ev.ID) || seen[ev.ID] {
			t.Errorf("id %q: want a fresh evt_ id", ev.ID)
		}
		seen[ev.ID] = true
		if again, _ := unknownTypeEvent(del); again.ID != ev.ID {
			t.Errorf("ids %s and %s for one delivery: want one", ev.ID, again.ID)
		}
	}
}
