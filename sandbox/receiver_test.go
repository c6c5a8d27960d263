// A webhook receiver for the tests, verifying each delivery with the reference Standard Webhooks library.

package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// testSecret is a whsec_ secret for test endpoints.
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// delivery is one verified webhook a receiver got.
type delivery struct {
	ID      string // webhook-id header
	Type    string
	EventID string
	Payment map[string]any
	Body    []byte
	// Verified is when the signature had been checked: the end of the
	// delivery's latency, before the receiver's own bookkeeping.
	Verified time.Time
}

// receiver is a webhook endpoint that verifies every delivery with the
// Standard Webhooks reference library and answers per a script.
type receiver struct {
	t   testing.TB
	srv *httptest.Server
	wh  *standardwebhooks.Webhook

	mu       sync.Mutex
	attempts int
	got      []delivery
	answer   func(attempt int) int // status to answer; nil: 204
	notify   chan delivery
}

func newReceiver(t testing.TB, answer func(attempt int) int) *receiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, wh: wh, answer: answer, notify: make(chan delivery, 1000)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	err = r.wh.Verify(body, req.Header)
	verified := time.Now()
	if err != nil {
		r.t.Errorf("delivery does not verify: %v", err)
		http.Error(w, "bad signature", 400)
		return
	}
	var ev struct {
		ID   string         `json:"id"`
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		r.t.Errorf("delivery is not JSON: %v", err)
	}
	r.mu.Lock()
	r.attempts++
	n := r.attempts
	status := http.StatusNoContent
	if r.answer != nil {
		status = r.answer(n)
	}
	defaultForm(ev.Data, "") // deliveries under PAYMOCK_TEST_VARIANTS
	d := delivery{ID: req.Header.Get("webhook-id"), Type: ev.Type, EventID: ev.ID, Payment: ev.Data, Body: body, Verified: verified}
	if status < 300 {
		r.got = append(r.got, d)
	}
	r.mu.Unlock()
	w.WriteHeader(status)
	if status < 300 {
		r.notify <- d
	}
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) attemptCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

// webhookEndpoint is the endpoint of a receiver, signed with testSecret.
func webhookEndpoint(r *receiver) paymock.WebhookEndpoint {
	return paymock.WebhookEndpoint{URL: r.srv.URL, Secret: testSecret}
}
