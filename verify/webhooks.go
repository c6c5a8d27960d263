// The webhook part: a receiver for the deliveries of each side, checking
// each with the Standard Webhooks reference library.

package verify

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// maxDelivery bounds what is read of one delivery.
const maxDelivery = 4 << 20

// delivery is one webhook POST a receiver got.
type delivery struct {
	header    http.Header
	body      []byte
	sigErr    error // nil: the Standard Webhooks signature verifies
	eventType string
	paymentID string // data.id of the event
}

// receiver takes the deliveries of one side. It answers 204 to every
// one, signed or not: it observes, and a refusal would only bring
// retries.
type receiver struct {
	verify *standardwebhooks.Webhook
	srv    *http.Server
	done   chan struct{}

	mu      sync.Mutex
	got     []delivery
	arrived chan struct{} // closed, and replaced, on each delivery
}

// newReceiver serves ln until close; secret is the whsec_ secret the
// deliveries should be signed with.
func newReceiver(ln net.Listener, secret string) (*receiver, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	r := &receiver{verify: wh, arrived: make(chan struct{}), done: make(chan struct{})}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln)
	}()
	return r, nil
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	<-r.done
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "webhook deliveries are POSTs", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxDelivery))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	d := delivery{header: req.Header.Clone(), body: body}
	if err := r.verify.Verify(body, req.Header); err != nil {
		d.sigErr = signatureReason(err, req.Header)
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) == nil {
		d.eventType, d.paymentID = ev.Type, ev.Data.ID
	}
	r.mu.Lock()
	r.got = append(r.got, d)
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// errOtherSecret is a refused delivery whose webhook-signature holds a
// v1 signature of the right form: signed as Standard Webhooks sign, with
// another secret than the one given (most often, --webhook-secret is not
// the secret of the endpoint the deployment sends to).
var errOtherSecret = errors.New("signed with another secret than the --webhook-secret given")

// signatureReason words the library's refusal of a delivery with header
// h without its internals.
func signatureReason(err error, h http.Header) error {
	switch {
	case errors.Is(err, standardwebhooks.ErrRequiredHeaders):
		return errors.New("no webhook-id, webhook-timestamp and webhook-signature headers")
	case errors.Is(err, standardwebhooks.ErrNoMatchingSignature):
		if hasV1Signature(h.Get("webhook-signature")) {
			return errOtherSecret
		}
		return errors.New("webhook-signature holds no v1,<base64 HMAC-SHA256>")
	case errors.Is(err, standardwebhooks.ErrMessageTooOld), errors.Is(err, standardwebhooks.ErrMessageTooNew):
		return errors.New("webhook-timestamp is more than 5 minutes off")
	}
	return err
}

// hasV1Signature reports whether a webhook-signature value holds a
// signature of the form Standard Webhooks v1 gives: "v1," and the base64
// of an HMAC-SHA256, among those its spaces separate.
func hasV1Signature(v string) bool {
	for _, sig := range strings.Fields(v) {
		b64, ok := strings.CutPrefix(sig, "v1,")
		if !ok {
			continue
		}
		if mac, err := base64.StdEncoding.DecodeString(b64); err == nil && len(mac) == sha256.Size {
			return true
		}
	}
	return false
}

// wait returns the deliveries so far once one is about a payment of ids
// (any delivery when ids is empty), or when ctx is done.
func (r *receiver) wait(ctx context.Context, ids []string) []delivery {
	for {
		r.mu.Lock()
		got := append([]delivery(nil), r.got...)
		arrived := r.arrived
		r.mu.Unlock()
		for _, d := range got {
			if len(ids) == 0 || contains(ids, d.paymentID) {
				return got
			}
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return got
		}
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id && id != "" {
			return true
		}
	}
	return false
}
