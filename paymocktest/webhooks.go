// The built-in webhook receiver: every delivery verified with the
// Standard Webhooks reference library and queued for Next, in order.

package paymocktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/sandbox"
	"github.com/paymock/paymock/webhooks"
)

// Delivery is one webhook POST the receiver got.
type Delivery struct {
	// ID is the webhook-id header: the event id, the same on every
	// attempt and redelivery, so a receiver can drop duplicates by it.
	ID string
	// Type is the event type, e.g. "payment.completed".
	Type string
	// Body is the body exactly as signed and sent.
	Body []byte
	// Header is the request's headers, webhook-signature included: hand
	// Body and Header to a webhook handler under test as they are.
	Header http.Header
}

// Payment decodes the payment the event carries under "data", in any of
// the wire forms.
func (d Delivery) Payment() (paymock.Payment, error) {
	var ev struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(d.Body, &ev); err != nil {
		return paymock.Payment{}, fmt.Errorf("delivery %s: %w", d.ID, err)
	}
	return sandbox.DecodePayment(ev.Data)
}

// ErrSignature is wrapped by Next's error for a delivery whose signature
// does not verify (a bad_signature or timestamp_skew_s fault, say).
var ErrSignature = errors.New("the webhook signature does not verify")

// DefaultWait is how long Next waits for a delivery when its context has
// no deadline, so a missing webhook fails the test instead of hanging it.
const DefaultWait = 10 * time.Second

// maxDeliveryBody is far above any event paymock sends.
const maxDeliveryBody = 4 << 20

// Webhooks receives the merchant's webhook deliveries. It answers 204 to
// a delivery that verifies and 400 to one that does not, as a strict
// merchant endpoint would (the sandbox then retries on its schedule).
type Webhooks struct {
	srv    *httptest.Server
	secret string
	verify *standardwebhooks.Webhook

	mu    sync.Mutex
	queue []received
	// arrived is closed, and replaced, whenever a delivery is queued.
	arrived chan struct{}
}

type received struct {
	d   Delivery
	err error
}

func newWebhooks() (*Webhooks, error) {
	secret, err := webhooks.GenerateSecret()
	if err != nil {
		return nil, err
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	w := &Webhooks{secret: secret, verify: wh, arrived: make(chan struct{})}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	return w, nil
}

func (w *Webhooks) close() { w.srv.Close() }

// URL is where the sandbox sends the deliveries.
func (w *Webhooks) URL() string { return w.srv.URL }

// Secret is the whsec_ secret the deliveries are signed with: give it to
// the webhook handler under test.
func (w *Webhooks) Secret() string { return w.secret }

func (w *Webhooks) serve(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxDeliveryBody))
	if err != nil {
		http.Error(rw, "read the body", http.StatusBadRequest)
		return
	}
	d := Delivery{ID: r.Header.Get("webhook-id"), Body: body, Header: r.Header.Clone()}
	var ev struct {
		Type string `json:"type"`
	}
	err = w.verify.Verify(body, r.Header)
	if err != nil {
		err = fmt.Errorf("delivery %s: %w: %w", d.ID, ErrSignature, err)
	} else if jerr := json.Unmarshal(body, &ev); jerr != nil {
		err = fmt.Errorf("delivery %s: the body is not a JSON event: %w", d.ID, jerr)
	}
	d.Type = ev.Type
	w.mu.Lock()
	w.queue = append(w.queue, received{d: d, err: err})
	close(w.arrived)
	w.arrived = make(chan struct{})
	w.mu.Unlock()
	if err != nil {
		http.Error(rw, "signature does not verify", http.StatusBadRequest)
		return
	}
	rw.WriteHeader(http.StatusNoContent)
}

// Next returns the next delivery, in the order they arrived, waiting for
// one until ctx is done (DefaultWait when ctx has no deadline). A
// delivery that does not verify is returned with an error wrapping
// ErrSignature.
func (w *Webhooks) Next(ctx context.Context) (Delivery, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWait)
		defer cancel()
	}
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			r := w.queue[0]
			w.queue = w.queue[1:]
			w.mu.Unlock()
			return r.d, r.err
		}
		arrived := w.arrived
		w.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return Delivery{}, fmt.Errorf("no webhook delivery arrived (did a payment reach an outcome?): %w", context.Cause(ctx))
		}
	}
}
