// Test helpers: a fake clock, receivers over loopback, and a dispatcher with the calls tests make of it.

package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

// testSecret is the signing secret of the test receivers.
var testSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("paymock-webhooks-test-key"))

// clockStart is where every fake merchant clock starts: far from real time,
// so a signature check against the receiver's clock proves that
// webhook-timestamp is real time.
var clockStart = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// fakeClock is a manual Clock and Scheduler: one frozen clock per merchant
// that moves only on Advance, which runs the functions falling due, in due
// order, with the clock set to their due time.
type fakeClock struct {
	mu     sync.Mutex
	now    map[string]time.Time
	timers []fakeTimer
	seq    int
}

type fakeTimer struct {
	merchant string
	due      time.Time
	seq      int
	fn       func()
}

func newFakeClock() *fakeClock { return &fakeClock{now: make(map[string]time.Time)} }

func (c *fakeClock) nowLocked(m string) time.Time {
	if t, ok := c.now[m]; ok {
		return t
	}
	return clockStart
}

func (c *fakeClock) Now(_ context.Context, m string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked(m)
}

func (c *fakeClock) At(m string, due time.Time, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.timers = append(c.timers, fakeTimer{merchant: m, due: due, seq: c.seq, fn: fn})
}

// Pending is how many functions wait for merchant m.
func (c *fakeClock) Pending(m string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.merchant == m {
			n++
		}
	}
	return n
}

// Advance moves m's clock forward by d, running what falls due on the way.
func (c *fakeClock) Advance(m string, d time.Duration) {
	c.mu.Lock()
	target := c.nowLocked(m).Add(d)
	for {
		i := -1
		for k, t := range c.timers {
			if t.merchant != m || t.due.After(target) {
				continue
			}
			if i < 0 || t.due.Before(c.timers[i].due) || t.due.Equal(c.timers[i].due) && t.seq < c.timers[i].seq {
				i = k
			}
		}
		if i < 0 {
			break
		}
		t := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		c.now[m] = t.due
		c.mu.Unlock()
		t.fn()
		c.mu.Lock()
	}
	c.now[m] = target
	c.mu.Unlock()
}

// hit is one request a receiver got.
type hit struct {
	id        string
	body      []byte
	header    http.Header
	verifyErr error // from the reference library, with the receiver's secret
	// sigErr is the reference library's check of the signature alone,
	// ignoring how far webhook-timestamp is from now.
	sigErr error
	ctx    context.Context // the request's: done when the sender gives up
}

// receiver is a webhook endpoint that verifies every request with the
// Standard Webhooks reference library and answers what answer says.
type receiver struct {
	srv    *httptest.Server
	secret string
	answer func(h hit, n int) int // n: how many times this id has come, this one included

	mu   sync.Mutex
	wh   *standardwebhooks.Webhook
	hits []hit
	byID map[string]int
}

func newReceiver(t *testing.T, answer func(h hit, n int) int) *receiver {
	t.Helper()
	if answer == nil {
		answer = func(hit, int) int { return http.StatusNoContent }
	}
	r := &receiver{answer: answer, byID: make(map[string]int)}
	r.useSecret(t, testSecret)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h := hit{id: req.Header.Get("webhook-id"), body: body, header: req.Header.Clone(), ctx: req.Context()}
		r.mu.Lock()
		wh := r.wh
		r.mu.Unlock()
		h.verifyErr = wh.Verify(body, req.Header)
		h.sigErr = wh.VerifyIgnoringTimestamp(body, req.Header)
		r.mu.Lock()
		r.hits = append(r.hits, h)
		r.byID[h.id]++
		n := r.byID[h.id]
		r.mu.Unlock()
		w.WriteHeader(r.answer(h, n))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// useSecret makes the receiver verify with secret from now on, for an
// endpoint whose secret is generated once its URL is known.
func (r *receiver) useSecret(t *testing.T, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret, r.wh = secret, wh
}

// all returns a copy of the hits so far, verified or not.
func (r *receiver) all() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hits)
}

func (r *receiver) endpoint() paymock.WebhookEndpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return paymock.WebhookEndpoint{URL: r.srv.URL + "/hooks", Secret: r.secret}
}

// got returns a copy of the hits so far, failing the test on any that did
// not verify.
func (r *receiver) got(t *testing.T) []hit {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.hits {
		if h.verifyErr != nil {
			t.Errorf("delivery of %s did not verify: %v", h.id, h.verifyErr)
		}
	}
	return slices.Clone(r.hits)
}

// verifyWith checks a received request with the reference library under
// secret.
func verifyWith(t *testing.T, secret string, h hit) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(h.body, h.header)
}

func ids(hs []hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.id
	}
	return out
}

// newDispatcher builds a started Dispatcher on clock, closed at the end of
// the test.
func newDispatcher(t testing.TB, clock *fakeClock, cfg Config) *Dispatcher {
	t.Helper()
	if cfg.Scheduler == nil {
		cfg.Scheduler = clock
	}
	if cfg.Clock == nil {
		cfg.Clock = clock
	}
	if cfg.Outbox == nil {
		cfg.Outbox = memory.NewOutbox(memory.NewPayments())
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

func merchant(id string, eps ...paymock.WebhookEndpoint) *paymock.Merchant {
	return &paymock.Merchant{ID: id, Name: id, Webhooks: eps}
}

// event makes a payment.completed event of payment paymentID, as the
// lifecycle engine would.
func event(t testing.TB, merchantID, id, paymentID string) paymock.Event {
	t.Helper()
	p := paymock.Payment{
		ID: paymentID, MerchantID: merchantID, Amount: 1050, Currency: paymock.USD,
		Status: paymock.StatusCompleted, CreatedAt: clockStart, UpdatedAt: clockStart,
		ExpiresAt: clockStart.Add(time.Hour), CompletedAt: clockStart,
	}
	ev, err := paymock.NewEvent(id, paymock.EventCompleted, p, clockStart, paymock.Encoding{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func publish(t testing.TB, d *Dispatcher, m *paymock.Merchant, ev paymock.Event) {
	t.Helper()
	if err := d.Publish(context.Background(), m, ev); err != nil {
		t.Fatalf("Publish(%s): %v", ev.ID, err)
	}
}

func idle(t testing.TB, d *Dispatcher, merchantID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Idle(ctx, merchantID); err != nil {
		t.Fatalf("Idle(%s): %v", merchantID, err)
	}
}

func record(t *testing.T, d *Dispatcher, merchantID, eventID string) paymock.EventRecord {
	t.Helper()
	r, ok, err := d.Event(context.Background(), merchantID, eventID)
	if err != nil || !ok {
		t.Fatalf("event %s of %s not in the journal", eventID, merchantID)
	}
	return r
}

// only returns the single delivery of r.
func only(t *testing.T, r paymock.EventRecord) paymock.DeliveryRecord {
	t.Helper()
	if len(r.Deliveries) != 1 {
		t.Fatalf("event %s has %d deliveries, want 1: %+v", r.ID, len(r.Deliveries), r.Deliveries)
	}
	return r.Deliveries[0]
}

// waitFor polls cond until it holds (failing the test after a generous
// deadline). It synchronises; it asserts nothing about time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func debugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func evID(i int) string { return fmt.Sprintf("evt_%04d", i) }

// events lists a merchant's events, failing the test on an outbox error.
func events(t testing.TB, d *Dispatcher, merchantID string, offset, limit int) ([]paymock.EventRecord, int) {
	t.Helper()
	recs, total, err := d.Events(context.Background(), merchantID, offset, limit)
	if err != nil {
		t.Fatalf("Events(%s): %v", merchantID, err)
	}
	return recs, total
}

// endpointDeliveries lists one endpoint's deliveries, failing the test on
// an outbox error.
func endpointDeliveries(t testing.TB, d *Dispatcher, merchantID, endpointID string, offset, limit int) ([]paymock.EndpointDeliveryRecord, int) {
	t.Helper()
	recs, total, err := d.EndpointDeliveries(context.Background(), merchantID, endpointID, offset, limit)
	if err != nil {
		t.Fatalf("EndpointDeliveries(%s): %v", endpointID, err)
	}
	return recs, total
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
