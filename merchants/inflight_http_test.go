// A merchant with a request in flight is neither evicted at the cap nor
// forgotten when idle, through a whole sandbox over loopback.

package merchants_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/contracttest"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/sandbox"
)

// clockStart is where every merchant's frozen clock starts: a merchant
// that lost its clock to an eviction reads it again.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// bodyRead is a request body that closes started at the server's first
// read of it. The server identifies the key's merchant before it reads
// the body, so once started is closed the request is in flight with its
// merchant known.
type bodyRead struct {
	io.ReadCloser
	once    sync.Once
	started chan struct{}
}

func (b *bodyRead) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	return b.ReadCloser.Read(p)
}

// evictionLog is a slog.Handler keeping the ids of the merchants the
// sandbox logs it evicted.
type evictionLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *evictionLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *evictionLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *evictionLog) WithGroup(string) slog.Handler            { return l }

func (l *evictionLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "evicted ") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "merchant" {
			l.mu.Lock()
			l.ids = append(l.ids, a.Value.String())
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

// take returns the ids logged since the last take.
func (l *evictionLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.ids
	l.ids = nil
	return ids
}

// newFrozenCapped is newCapped with frozen clocks starting at clockStart
// and evictions logged to evicted, whose server closes started when it
// first reads the body of a create with key.
func newFrozenCapped(t *testing.T, b paymock.Backend, max int, evicted *evictionLog, key string, started chan struct{}) *capped {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	sb, err := sandbox.New(sandbox.Config{Backend: b, MaxMerchants: max, PublicURL: "http://" + srv.Listener.Addr().String(),
		Clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: clockStart}, Logger: slog.New(evicted)})
	if err != nil {
		t.Fatal(err)
	}
	sb.Start()
	t.Cleanup(func() { _ = sb.Close(context.Background()) })
	h := sb.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+key && r.Method == http.MethodPost && r.URL.Path == "/api/v1/payments" {
			r.Body = &bodyRead{ReadCloser: r.Body, started: started}
		}
		h.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return &capped{t: t, url: srv.URL, sb: sb, client: &http.Client{Transport: &contracttest.Transport{T: t, Answers: docs}}}
}

// clockNow is what a merchant's clock shows.
func (c *capped) clockNow(key string) string {
	c.t.Helper()
	now, _ := c.must(http.StatusOK, "GET", "/_sandbox/clock", key, nil)["now"].(string)
	return now
}

func TestInFlight_AMerchantWithARequestUnderWayIsNeitherEvictedNorForgotten(t *testing.T) {
	const holder = "sk_test_holder"
	holderID := paymock.OpenMerchantID(sha256.Sum256([]byte(holder)), false)
	advanced := clockStart.Add(time.Hour).Format(time.RFC3339)
	for _, b := range backends {
		for _, tc := range []struct {
			name string
			// meanwhile runs while the holder's create waits for its body,
			// doing what would take the holder were it idle, and returns
			// the merchants it took.
			meanwhile func(c *capped, evicted *evictionLog) []string
			// after, once the create is answered and the holder emptied,
			// does it again: a request that has ended holds it no more.
			after func(c *capped, evicted *evictionLog) []string
		}{
			{name: "new tokens at the cap",
				meanwhile: func(c *capped, evicted *evictionLog) []string {
					// The holder is the least recently used, and empty.
					for i := range 3 {
						c.must(http.StatusOK, "GET", "/api/v1/payments", fmt.Sprint("sk_test_newcomer_", i), nil)
					}
					return evicted.take()
				},
				after: func(c *capped, evicted *evictionLog) []string {
					c.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_2", nil)
					c.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_3", nil)
					return evicted.take()
				}},
			{name: "idle for longer than the TTL",
				meanwhile: func(c *capped, _ *evictionLog) []string {
					c.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_idle", nil)
					return c.sb.ForgetIdle(time.Now().Add(48 * time.Hour))
				},
				after: func(c *capped, _ *evictionLog) []string {
					return c.sb.ForgetIdle(time.Now().Add(48 * time.Hour))
				}},
		} {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				evicted := &evictionLog{}
				started := make(chan struct{})
				c := newFrozenCapped(t, b.make(t), 2, evicted, holder, started)
				// The clock is what the merchant loses if it goes.
				c.must(http.StatusOK, "POST", "/_sandbox/clock/advance", holder, map[string]any{"seconds": 3600})

				body, err := json.Marshal(map[string]any{
					"amount": 10.5, "currency": "USD", "description": "Order 1234", "expires_in": 3600, "mcc": 5732,
					"metadata":    map[string]any{},
					"customer":    map[string]any{"email": "jane@example.com", "name": "Jane Doe"},
					"success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel",
				})
				if err != nil {
					t.Fatal(err)
				}
				pr, pw := io.Pipe()
				// A test that stops early lets the server end the request,
				// which closing it waits for.
				t.Cleanup(func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) })
				req, err := http.NewRequest("POST", c.url+"/api/v1/payments", pr)
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = int64(len(body))
				req.Header.Set("Authorization", "Bearer "+holder)
				req.Header.Set("Content-Type", "application/json")
				type answer struct {
					status int
					body   []byte
					err    error
				}
				answered := make(chan answer, 1)
				go func() {
					// Not c.client: its contract check reads the whole body
					// before sending any of it.
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answered <- answer{err: err}
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					answered <- answer{resp.StatusCode, b, err}
				}()
				select {
				case <-started:
				case a := <-answered:
					t.Fatalf("the create was answered before its body was sent: %d %s %v", a.status, a.body, a.err)
				}

				taken := tc.meanwhile(c, evicted)
				if len(taken) == 0 || slices.Contains(taken, holderID) {
					t.Errorf("took %v while the holder's create was under way, want others but not the holder %s", taken, holderID)
				}

				if _, err := io.Copy(pw, bytes.NewReader(body)); err != nil {
					t.Fatal(err)
				}
				_ = pw.Close()
				a := <-answered
				if a.err != nil || a.status != http.StatusCreated {
					t.Fatalf("the held create: %d %s %v, want 201", a.status, a.body, a.err)
				}
				var p struct {
					CreatedAt string `json:"created_at"`
				}
				if err := json.Unmarshal(a.body, &p); err != nil {
					t.Fatal(err)
				}
				if p.CreatedAt != advanced {
					t.Errorf("the held create's payment was created at %s, want %s on the holder's clock: the holder went while its request was under way", p.CreatedAt, advanced)
				}
				if now := c.clockNow(holder); now != advanced {
					t.Errorf("the holder's clock shows %s after its create, want %s", now, advanced)
				}
				if n := c.items("/api/v1/payments", holder); n != 1 {
					t.Errorf("the holder lists %d payments, want its one", n)
				}

				// Once its request has ended and it holds nothing, it can go.
				c.must(http.StatusNoContent, "POST", "/_sandbox/reset", holder, nil)
				if taken := tc.after(c, evicted); !slices.Contains(taken, holderID) {
					t.Errorf("took %v once the holder's request had ended and it held nothing, want the holder %s", taken, holderID)
				}
				if now := c.clockNow(holder); now != clockStart.Format(time.RFC3339) {
					t.Errorf("the emptied holder's clock shows %s, want %s: it was not taken once its request had ended", now, clockStart.Format(time.RFC3339))
				}
			})
		}
	}
}
