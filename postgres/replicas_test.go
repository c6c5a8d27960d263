// Several sandboxes on one database, in this process: every replica shows
// a merchant the same clock, and due work created on one fires on another,
// once.

package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/postgres"
	"github.com/paymock/paymock/sandbox"
)

// testKey is the API key of the one configured merchant, acme.
const testKey = "sk_test_acme_replicas"

// replica is one paymock serving HTTP on loopback, in this process or not.
type replica struct {
	t   testing.TB
	url string
	key string // "" means testKey
	// store is the replica's store when it runs in this process: Sync
	// waits until it has heard of every change committed before.
	store *postgres.Store
}

// synced waits until r has heard of every change committed anywhere
// before: what a replica keeps of clocks, keys and fault rules follows the
// others' changes as soon as it hears of them (docs/postgres.md).
func (r replica) synced() replica {
	r.t.Helper()
	if r.store != nil {
		if err := r.store.Sync(r.t.Context()); err != nil {
			r.t.Fatal(err)
		}
	}
	return r
}

// call sends a request with testKey and returns the status and JSON body.
func (r replica) call(method, path string, body any) (int, map[string]any) {
	r.t.Helper()
	st, raw := r.raw(method, path, body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			r.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return st, out
}

// raw is call without decoding; a failed connection is status 0.
func (r replica) raw(method, path string, body any) (int, []byte) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	key := r.key
	if key == "" {
		key = testKey
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// create makes a payment expiring in expiresIn seconds, with metadata.
func (r replica) create(expiresIn int, metadata map[string]any) string {
	r.t.Helper()
	st, p := r.call("POST", "/api/v1/payments", createBody(expiresIn, metadata))
	if st != http.StatusCreated {
		r.t.Fatalf("create on %s: %d %v", r.url, st, p)
	}
	return p["id"].(string)
}

func createBody(expiresIn int, metadata map[string]any) map[string]any {
	if metadata == nil {
		metadata = map[string]any{"order_id": "ord_1"}
	}
	return map[string]any{
		"amount": 10.5, "currency": "USD", "expires_in": expiresIn, "metadata": metadata,
		"customer":    map[string]any{"email": "jane@example.com", "name": "Jane Doe"},
		"description": "Order 1", "mcc": 5732,
		"success_url": "https://shop.example.com/ok", "cancel_url": "https://shop.example.com/cancel",
	}
}

// status is the payment's status as r answers it.
func (r replica) status(id string) string {
	r.t.Helper()
	st, p := r.call("GET", "/api/v1/payments/"+id, nil)
	if st != http.StatusOK {
		r.t.Fatalf("retrieve %s on %s: %d %v", id, r.url, st, p)
	}
	return p["status"].(string)
}

// advance moves acme's clock on r and returns the answer.
func (r replica) advance(seconds int) map[string]any {
	r.t.Helper()
	st, body := r.call("POST", "/_sandbox/clock/advance", map[string]any{"seconds": seconds})
	if st != http.StatusOK {
		r.t.Fatalf("advance on %s: %d %v", r.url, st, body)
	}
	return body
}

// clock is acme's time on r.
func (r replica) clock() string {
	r.t.Helper()
	st, body := r.call("GET", "/_sandbox/clock", nil)
	if st != http.StatusOK {
		r.t.Fatalf("clock on %s: %d %v", r.url, st, body)
	}
	return body["now"].(string)
}

// events counts acme's events of a type in r's journal (the journal of
// events is each replica's own).
func (r replica) events(typ string) int {
	r.t.Helper()
	st, body := r.call("GET", "/_sandbox/events?per_page=100", nil)
	if st != http.StatusOK {
		r.t.Fatalf("events on %s: %d %v", r.url, st, body)
	}
	n := 0
	for _, it := range body["items"].([]any) {
		if it.(map[string]any)["type"] == typ {
			n++
		}
	}
	return n
}

// eventsOn counts the events of a type in the journal every replica
// shares; a replica that lists another count fails the test.
func eventsOn(rs []replica, typ string) int {
	n := rs[0].events(typ)
	for _, r := range rs[1:] {
		if m := r.events(typ); m != n {
			r.t.Errorf("%s lists %d %s events, %s lists %d: the journal is not shared", r.url, m, typ, rs[0].url, n)
		}
	}
	return n
}

var acme = paymock.Merchant{ID: "acme", Name: "Acme", APIKeys: []string{testKey}}

// inProcess starts n sandboxes on one new database, each with its own
// store, as n replicas would be. clock is every replica's clock config;
// now, when set, is replica i's real time (replicas started apart).
func inProcess(t *testing.T, n int, clock lifecycle.ClockConfig, now func(i int) func() time.Time) []replica {
	t.Helper()
	url := pgtest.URL(t)
	out := make([]replica, n)
	for i := range out {
		st, err := postgres.Open(t.Context(), postgres.Config{URL: url, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		cfg := clock
		if now != nil {
			cfg.Now = now(i)
		}
		sb, err := sandbox.New(sandbox.Config{Backend: st.Backend(), Clock: cfg, Merchants: []paymock.Merchant{acme}})
		if err != nil {
			t.Fatal(err)
		}
		sb.Start()
		srv := httptest.NewServer(sb.Handler())
		t.Cleanup(func() { _ = sb.Close(context.Background()) })
		t.Cleanup(srv.Close)
		out[i] = replica{t: t, url: srv.URL, store: st}
	}
	return out
}

var testStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func TestReplicas_ShareEachMerchantsClock(t *testing.T) {
	t.Run("frozen, started apart with no start given", func(t *testing.T) {
		// Each replica's own start would be its start-up instant: the
		// first one to show the merchant a clock decides for all.
		real := time.Now()
		rs := inProcess(t, 2, lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen}, func(i int) func() time.Time {
			at := real.Add(time.Duration(i) * time.Hour)
			return func() time.Time { return at }
		})
		a, b := rs[0], rs[1]
		if ca, cb := a.clock(), b.clock(); ca != cb {
			t.Fatalf("clock on A %s, on B %s", ca, cb)
		}
		a.advance(90)
		b.synced().advance(10)
		want := paymock.FormatTime(real.Add(100 * time.Second))
		if ca, cb := a.synced().clock(), b.clock(); ca != want || cb != want {
			t.Errorf("after 90 s on A and 10 s on B: A %s, B %s, want %s", ca, cb, want)
		}
	})
	t.Run("real, with an offset", func(t *testing.T) {
		rs := inProcess(t, 2, lifecycle.ClockConfig{Mode: lifecycle.ClockReal}, nil)
		rs[0].advance(3600)
		got, err := time.Parse(time.RFC3339, rs[1].synced().clock())
		if want := time.Now().Add(time.Hour); err != nil || got.Before(want.Add(-5*time.Second)) || got.After(want.Add(5*time.Second)) {
			t.Errorf("B shows %v after A advanced an hour; want about %v", got, want)
		}
	})
}

func TestReplicas_AdvanceOnAnyReplicaFiresWhatAnyCreatedOnce(t *testing.T) {
	tests := []struct {
		name      string
		expiresIn int
		metadata  map[string]any
		advance   int
		want      string
		event     string
	}{
		{"expiry", 60, nil, 60, "expired", "payment.expired"},
		{"scenario step before the expiry", 3600, map[string]any{"scenario": "complete_after_5s"}, 5, "completed", "payment.completed"},
		{"expiry before a later step", 60, map[string]any{"scenario": "complete_after_5m"}, 60, "expired", "payment.expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := inProcess(t, 3, lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart}, nil)
			a, b := rs[0], rs[1]
			id := a.create(tc.expiresIn, tc.metadata)
			b.advance(tc.advance - 1)
			if s := a.status(id); s != "pending" {
				t.Fatalf("a second early: %s", s)
			}
			// Every replica advances at once by the last second: the clock
			// ends at least a second on, and the payment moves once.
			var wg sync.WaitGroup
			for _, r := range rs {
				wg.Go(func() { r.advance(1) })
			}
			wg.Wait()
			for _, r := range rs {
				if s := r.status(id); s != tc.want {
					t.Errorf("status on %s: %s, want %s", r.url, s, tc.want)
				}
			}
			if n := eventsOn(rs, tc.event); n != 1 {
				t.Errorf("%d %s events across the replicas, want 1", n, tc.event)
			}
			st, p := b.call("GET", "/api/v1/payments/"+id, nil)
			if tc.want == "expired" && (st != http.StatusOK || p["updated_at"] != p["expires_at"]) {
				t.Errorf("expired at %v, expires_at %v: the sweep stamps the due instant", p["updated_at"], p["expires_at"])
			}
		})
	}
}

func TestReplicas_RealClockSweepFiresWhatAnotherCreated(t *testing.T) {
	rs := inProcess(t, 2, lifecycle.ClockConfig{Mode: lifecycle.ClockReal}, nil)
	a, b := rs[0], rs[1]
	id := a.create(1, nil)
	deadline := time.Now().Add(1 * time.Second).Add(2*lifecycle.SweepInterval + time.Second)
	for b.status(id) != "expired" {
		if time.Now().After(deadline) {
			t.Fatalf("still pending well after its expiry")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * lifecycle.SweepInterval) // every replica has swept since
	if n := eventsOn(rs, "payment.expired"); n != 1 {
		t.Errorf("%d payment.expired events across the replicas, want 1", n)
	}
}
