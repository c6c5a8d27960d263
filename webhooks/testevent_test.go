// Tests of the test event: its body, its signature, its single attempt and
// its place in the journal.

package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
)

func TestSendTest_SignedTestEventVerifiesAtTheReceiver(t *testing.T) {
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ep := rcv.endpoint()
	ep.ID = "we_test"
	rec, err := d.SendTest(context.Background(), merchant("acme"), ep)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^evt_[0-9A-Za-z]{24}$`).MatchString(rec.ID) || rec.Type != EventTest || rec.PaymentID != "" {
		t.Errorf("record = %+v, want an evt_ id, type webhook.test and no payment", rec)
	}
	del := only(t, rec)
	if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 1 || del.EndpointID != "we_test" {
		t.Errorf("SendTest returned %+v, want the attempt made and delivered to we_test", del)
	}

	hits := rcv.got(t) // fails unless the reference library verifies it
	if len(hits) != 1 || hits[0].id != rec.ID {
		t.Fatalf("receiver got %v, want %s once", ids(hits), rec.ID)
	}
	var body struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CreatedAt string `json:"created_at"`
		Data      struct {
			EndpointID string `json:"endpoint_id"`
			Message    string `json:"message"`
		} `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(hits[0].body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("test event body %s: %v", hits[0].body, err)
	}
	if body.ID != rec.ID || body.Type != "webhook.test" || body.CreatedAt != paymock.FormatTime(clockStart) ||
		body.Data.EndpointID != "we_test" || body.Data.Message == "" {
		t.Errorf("test event body = %s", hits[0].body)
	}
	if string(rec.Payload) != string(hits[0].body) {
		t.Errorf("journal payload %s, want the body sent %s", rec.Payload, hits[0].body)
	}

	if evs, total := events(t, d, "acme", 0, 0); total != 1 || evs[0].ID != rec.ID {
		t.Errorf("journal = %+v, want the test event in it", evs)
	}
	if list, total := endpointDeliveries(t, d, "acme", "we_test", 0, 0); total != 1 || list[0].EventType != EventTest {
		t.Errorf("endpoint deliveries = %+v, want the test event", list)
	}
}

func TestSendTest_GetsOneAttemptAndNoRetry(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusInternalServerError })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{}) // the default schedule has five retries
	rec, err := d.SendTest(context.Background(), merchant("acme"), rcv.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	del := only(t, rec)
	if del.State != paymock.DeliveryFailed || len(del.Attempts) != 1 || del.NextAttemptAt != "" || !strings.Contains(del.Error, "single attempt") {
		t.Errorf("delivery = %+v, want failed after its single attempt", del)
	}
	if n := clock.Pending("acme"); n != 0 {
		t.Errorf("%d retries scheduled for a test event", n)
	}

	// Sending it again from the journal is one more single attempt.
	if _, err := d.Redeliver(context.Background(), "acme", rec.ID); err != nil {
		t.Fatal(err)
	}
	idle(t, d, "acme")
	r := record(t, d, "acme", rec.ID)
	if len(r.Deliveries) != 2 || r.Deliveries[1].State != paymock.DeliveryFailed || len(r.Deliveries[1].Attempts) != 1 || clock.Pending("acme") != 0 {
		t.Errorf("after redeliver: %+v, want a second round of one failed attempt", r.Deliveries)
	}
	if n := len(rcv.got(t)); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
}

func TestSendTest_FaultsForAnyEventShapeIt(t *testing.T) {
	rcv := newReceiver(t, nil)
	clock := newFakeClock()
	faults := firstAsk(paymock.WebhookFault{RuleID: "flt_sig", BadSignature: true})
	d := newDispatcher(t, clock, Config{Faults: faults})
	rec, err := d.SendTest(context.Background(), merchant("acme"), rcv.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	hits := rcv.all()
	if len(hits) != 1 || !errors.Is(hits[0].verifyErr, standardwebhooks.ErrNoMatchingSignature) {
		t.Fatalf("receiver got %d requests, verify error %v; want one that does not verify", len(hits), hits[0].verifyErr)
	}
	if got := faults.asked(); len(got) != 1 || got[0] != "acme/webhook.test" {
		t.Errorf("faults asked %v, want once for webhook.test", got)
	}
	if f := only(t, rec).Attempts[0].Fault; f == nil || f.RuleID != "flt_sig" {
		t.Errorf("attempt fault = %+v, want flt_sig", f)
	}
}

func TestSendTest_RefusesABadEndpointAndRecordsNothing(t *testing.T) {
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	for _, tc := range []struct {
		name string
		m    *paymock.Merchant
		ep   paymock.WebhookEndpoint
	}{
		{"not http", merchant("acme"), paymock.WebhookEndpoint{URL: "ftp://hooks.example", Secret: testSecret}},
		{"secret without whsec_", merchant("acme"), paymock.WebhookEndpoint{URL: "http://hooks.example", Secret: "s3cr3t"}},
		{"no merchant", nil, paymock.WebhookEndpoint{URL: "http://hooks.example", Secret: testSecret}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := d.SendTest(context.Background(), tc.m, tc.ep); err == nil {
				t.Error("SendTest accepted it")
			} else if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error repeats the secret: %v", err)
			}
		})
	}
	if _, total := events(t, d, "acme", 0, 0); total != 0 {
		t.Errorf("%d events recorded, want none", total)
	}
}

func TestSendTest_ReturnsWhenTheContextEndsFirst(t *testing.T) {
	rcv, arrived, release := blockingReceiver(t)
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	rec, err := d.SendTest(ctx, merchant("acme"), rcv.endpoint())
	if err != nil {
		t.Fatalf("SendTest = %v, want no error: the event was sent", err)
	}
	if del := only(t, rec); del.State != paymock.DeliveryPending {
		t.Errorf("delivery = %+v, want pending while the receiver holds it", del)
	}
	release()
	idle(t, d, "acme")
	if del := only(t, record(t, d, "acme", rec.ID)); del.State != paymock.DeliveryDelivered {
		t.Errorf("after the receiver answered: %+v, want delivered", del)
	}
}
