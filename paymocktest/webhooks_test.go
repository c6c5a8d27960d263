// Tests of the built-in webhook receiver.

package paymocktest_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/sandbox"
)

func TestWebhooks_NextReturnsVerifiedDeliveriesInOrder(t *testing.T) {
	s := paymocktest.New(t)
	ctx := t.Context()
	ids := []string{create(t, s, createBody), create(t, s, createBody), create(t, s, createBody)}
	outcomes := []struct {
		do   func(context.Context, string) error
		want string
	}{
		{func(ctx context.Context, id string) error { _, err := s.Complete(ctx, id); return err }, "payment.completed"},
		{func(ctx context.Context, id string) error { _, err := s.Fail(ctx, id); return err }, "payment.failed"},
		{func(ctx context.Context, id string) error { _, err := s.Expire(ctx, id); return err }, "payment.expired"},
	}
	verifier, err := standardwebhooks.NewWebhook(s.Webhooks().Secret())
	if err != nil {
		t.Fatal(err)
	}
	var eventIDs []string
	for i, o := range outcomes {
		if err := o.do(ctx, ids[i]); err != nil {
			t.Fatal(err)
		}
		d, err := s.Webhooks().Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.Type != o.want {
			t.Errorf("delivery %d: %s, want %s", i, d.Type, o.want)
		}
		if p, err := d.Payment(); err != nil || p.ID != ids[i] {
			t.Errorf("delivery %d carries %s (%v), want %s", i, p.ID, err, ids[i])
		}
		// What Next hands out verifies on its own: Body and Header are the
		// bytes and headers that were signed.
		if err := verifier.Verify(d.Body, d.Header); err != nil {
			t.Errorf("delivery %d does not verify again: %v", i, err)
		}
		if !strings.HasPrefix(d.ID, "evt_") {
			t.Errorf("webhook-id %q", d.ID)
		}
		eventIDs = append(eventIDs, d.ID)
	}

	// Redeliveries of one event come in the order they were asked for,
	// with the event's own webhook-id: the duplicate a receiver must drop.
	c, err := sandbox.NewClient(sandbox.ClientConfig{URL: s.URL, APIKey: s.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{eventIDs[2], eventIDs[0]} {
		if _, err := c.Redeliver(ctx, id); err != nil {
			t.Fatal(err)
		}
		d, err := s.Webhooks().Next(ctx)
		if err != nil || d.ID != id {
			t.Errorf("redelivery: %s %v, want %s", d.ID, err, id)
		}
	}
}

func TestWebhooks_NextReportsADeliveryThatDoesNotVerify(t *testing.T) {
	s := paymocktest.New(t)
	body := []byte(`{"id":"evt_forged","type":"payment.completed","created_at":"2026-01-01T00:00:00Z","data":{}}`)
	wrong, err := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wrong.Sign("evt_forged", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.Webhooks().URL(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("webhook-id", "evt_forged")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the receiver answered %d to a forged delivery, want 400", resp.StatusCode)
	}
	d, err := s.Webhooks().Next(t.Context())
	if !errors.Is(err, paymocktest.ErrSignature) || d.ID != "evt_forged" || !bytes.Equal(d.Body, body) {
		t.Errorf("got %+v, %v; want the forged delivery with ErrSignature", d, err)
	}
}

func TestWebhooks_NextGivesUpWhenNothingComes(t *testing.T) {
	s := paymocktest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Webhooks().Next(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no webhook delivery arrived") {
		t.Errorf("got %v", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("waited %v", waited)
	}
}

func TestServer_InjectShapesAnswersAndDeliveries(t *testing.T) {
	s := paymocktest.New(t)
	if st, b := call(t, s.URL, s.APIKey, http.MethodGet, "/_sandbox/faults", ""); st == http.StatusNotFound && strings.Contains(string(b), "route_not_found") {
		t.Skip("this sandbox does not serve /_sandbox/faults yet")
	}
	ctx := t.Context()
	if err := s.Inject(ctx, paymocktest.Fault{Operation: "listPayments", Status: 503, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if st, _ := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", ""); st != 503 {
		t.Errorf("list under the fault: %d", st)
	}
	if st, _ := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", ""); st != 200 {
		t.Errorf("list after the fault ran out: %d", st)
	}
	if err := s.Inject(ctx, paymocktest.Fault{Delay: 1500 * time.Microsecond}); err == nil || !strings.Contains(err.Error(), "whole milliseconds") {
		t.Errorf("a sub-millisecond delay: %v", err)
	}
	if err := s.Inject(ctx, paymocktest.Fault{Operation: "createPayment"}); err == nil {
		t.Error("a fault without an effect was accepted")
	}
	if err := s.Inject(ctx, paymocktest.Fault{Target: "webhooks", Duplicate: 2, Times: 1}); err != nil {
		t.Fatal(err)
	}
	id := create(t, s, createBody)
	if _, err := s.Complete(ctx, id); err != nil {
		t.Fatal(err)
	}
	first, err := s.Webhooks().Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	second, err := s.Webhooks().Next(wait)
	if err != nil || first.ID != second.ID {
		t.Errorf("duplicate: %s, then %s %v; want the same webhook-id twice", first.ID, second.ID, err)
	}
}

func TestWithFaults_AppliesTheFile(t *testing.T) {
	s := paymocktest.New(t, paymocktest.WithFaults("testdata/faults.yaml"))
	st, b := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", "")
	if st == http.StatusOK {
		t.Skipf("this sandbox does not apply Config.FaultsFile yet: %s", b)
	}
	if st != http.StatusServiceUnavailable {
		t.Errorf("first list: %d %s, want 503", st, b)
	}
}
