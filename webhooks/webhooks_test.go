// Tests of delivery: signed per Standard Webhooks, once and in order, to the merchant's endpoints, no secret logged.

package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
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
