// The merchants: open-mode keys that create payments and complete, fail or
// let them expire, and reset their sandbox every few hundred payments, as
// CI jobs sharing one sandbox do.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// totals are the merchants' own counts.
type totals struct {
	Requests   int
	Creates    int
	Completed  int // complete calls answered 200: one event each
	Failed     int // fail calls answered 200: one event each
	Expired    int // payments seen expired by their expiry: one event each
	LeftAlone  int // payments left pending until a reset forgot them
	Resets     int
	Status5xx  int
	Unexpected int // answers other than the one the call must get
	Transport  int // requests that got no answer at all
	// Problems are the first few unexpected answers, for the report.
	Problems []string
}

// Events is how many webhook events the merchants caused: one per
// completion, failure and expiry, each to the one endpoint.
func (t totals) Events() int { return t.Completed + t.Failed + t.Expired }

// The outcomes a merchant picks for a payment, with their shares.
const (
	shareComplete = 0.40
	shareFail     = 0.25
	shareExpire   = 0.20 // the rest are left pending
)

// Expiry times: short for the payments meant to expire, long enough for
// the rest never to expire during a soak.
const (
	expireMinS = 2
	expireMaxS = 6
	neverS     = 7 * 24 * 3600
	// settleGrace is how long after its expires_at a payment may still
	// show pending (the scheduler fires on the second; the server is busy).
	settleGrace = 15 * time.Second
)

// driver runs the merchants against one server.
type driver struct {
	base   string
	c      config
	client *http.Client
	tokens chan struct{}

	mu sync.Mutex
	t  totals
}

func newDriver(base string, c config) *driver {
	return &driver{
		base: base, c: c,
		client: &http.Client{
			Transport: &http.Transport{MaxIdleConnsPerHost: c.merchants, MaxConnsPerHost: c.merchants},
			Timeout:   30 * time.Second,
		},
		tokens: make(chan struct{}),
	}
}

// run drives the server until ctx ends, then lets each merchant wait for
// the payments it let expire (within settle), so that every event the
// merchants caused is counted. Requests run on settle: one in flight when
// ctx ends is answered and counted, as the server carries it out anyway.
func (d *driver) run(ctx, settle context.Context) {
	go d.pace(settle)
	var wg sync.WaitGroup
	for i := range d.c.merchants {
		wg.Go(func() {
			m := &merchant{d: d, key: fmt.Sprintf("sk_test_soak_%d_%d", d.c.seed%100000, i), rnd: mrand(d.c.seed, uint64(100+i))}
			m.loop(ctx, settle)
			m.settle(settle)
		})
	}
	wg.Wait()
}

// pace hands out c.rate request tokens a second until ctx ends.
func (d *driver) pace(ctx context.Context) {
	tick := time.NewTicker(time.Second / time.Duration(d.c.rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			select {
			case d.tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (d *driver) totals() totals {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.t
	t.Problems = append([]string(nil), d.t.Problems...)
	return t
}

func (d *driver) count(f func(t *totals)) {
	d.mu.Lock()
	f(&d.t)
	d.mu.Unlock()
}

// problem counts an unexpected answer and notes it.
func (d *driver) problem(format string, args ...any) {
	d.count(func(t *totals) { t.Unexpected++ })
	d.note(format, args...)
}

// note keeps what went wrong for the report; the first ten are kept.
func (d *driver) note(format string, args ...any) {
	d.count(func(t *totals) {
		if len(t.Problems) < 10 {
			t.Problems = append(t.Problems, fmt.Sprintf(format, args...))
		}
	})
}

// call sends one request as key and returns the status and body; 0 when
// no answer came (the context ended, or the connection failed).
func (d *driver) call(ctx context.Context, key, method, path string, body []byte) (int, []byte) {
	select {
	case <-d.tokens:
	case <-ctx.Done():
		return 0, nil
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		panic(err) // the paths are ours
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			d.count(func(t *totals) { t.Requests++; t.Transport++ })
			d.note("%s %s: %v", method, path, err)
		}
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() == nil {
		d.count(func(t *totals) { t.Transport++ })
		d.note("%s %s: reading the answer: %v", method, path, err)
	}
	d.count(func(t *totals) {
		t.Requests++
		if resp.StatusCode >= 500 {
			t.Status5xx++
		}
	})
	return resp.StatusCode, b
}

// expect is call for a request that must get status want; it reports
// false (and records why) when it did not.
func (d *driver) expect(ctx context.Context, key, method, path string, body []byte, want int) ([]byte, bool) {
	status, b := d.call(ctx, key, method, path, body)
	switch {
	case status == 0:
		return nil, false
	case status != want:
		d.problem("%s %s: %d, want %d: %.300s", method, path, status, want, b)
		return nil, false
	}
	return b, true
}

// merchant is one CI job's key and what it is waiting for.
type merchant struct {
	d        *driver
	key      string
	rnd      *rand.Rand
	made     int      // payments since the last reset
	budget   int      // payments before the next reset
	expiring []expiry // payments left to expire, oldest first
	last     string   // the last payment made, for retrieves
}

type expiry struct {
	id  string
	due time.Time
}

// loop makes payments until drive ends; its requests run on ctx.
func (m *merchant) loop(drive, ctx context.Context) {
	m.newBudget()
	for drive.Err() == nil && ctx.Err() == nil {
		if m.made >= m.budget {
			m.settle(ctx)
			if drive.Err() != nil {
				return // the settling after the loop is all that is left
			}
			if _, ok := m.d.expect(ctx, m.key, http.MethodPost, "/_sandbox/reset", nil, http.StatusNoContent); ok {
				m.d.count(func(t *totals) { t.Resets++ })
			}
			m.newBudget()
		}
		m.payment(ctx)
		m.checkExpired(ctx, false)
		if m.made%10 == 0 {
			m.d.expect(ctx, m.key, http.MethodGet, "/api/v1/payments?per_page=20", nil, http.StatusOK)
			if m.last != "" {
				m.d.expect(ctx, m.key, http.MethodGet, "/api/v1/payments/"+m.last, nil, http.StatusOK)
			}
		}
	}
}

func (m *merchant) newBudget() {
	m.made, m.last = 0, ""
	m.budget = m.d.c.resetMin + m.rnd.IntN(m.d.c.resetMax-m.d.c.resetMin+1)
}

// payment creates one payment and gives it its outcome.
func (m *merchant) payment(ctx context.Context) {
	r := m.rnd.Float64()
	expiresIn := neverS
	if r >= shareComplete+shareFail && r < shareComplete+shareFail+shareExpire {
		expiresIn = expireMinS + m.rnd.IntN(expireMaxS-expireMinS+1)
	}
	body := createBody(m.rnd, expiresIn)
	b, ok := m.d.expect(ctx, m.key, http.MethodPost, "/api/v1/payments", body, http.StatusCreated)
	if !ok {
		return
	}
	var p struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
		m.d.problem("create: no id in %.300s", b)
		return
	}
	m.made++
	m.last = p.ID
	m.d.count(func(t *totals) { t.Creates++ })
	switch {
	case r < shareComplete:
		if _, ok := m.d.expect(ctx, m.key, http.MethodPost, "/_sandbox/payments/"+p.ID+"/complete", nil, http.StatusOK); ok {
			m.d.count(func(t *totals) { t.Completed++ })
		}
	case r < shareComplete+shareFail:
		if _, ok := m.d.expect(ctx, m.key, http.MethodPost, "/_sandbox/payments/"+p.ID+"/fail", nil, http.StatusOK); ok {
			m.d.count(func(t *totals) { t.Failed++ })
		}
	case expiresIn != neverS:
		due, err := time.Parse(time.RFC3339, p.ExpiresAt)
		if err != nil {
			m.d.problem("create: expires_at %q: %v", p.ExpiresAt, err)
			return
		}
		m.expiring = append(m.expiring, expiry{id: p.ID, due: due})
	default:
		m.d.count(func(t *totals) { t.LeftAlone++ })
	}
}

// checkExpired looks at the payments whose expiry has passed and counts
// those that expired. With wait it sleeps until the last one is due and
// keeps looking until all have expired or settleGrace is over.
func (m *merchant) checkExpired(ctx context.Context, wait bool) {
	for len(m.expiring) > 0 && ctx.Err() == nil {
		e := m.expiring[0]
		now := time.Now()
		if now.Before(e.due.Add(time.Second)) {
			if !wait {
				return
			}
			sleep(ctx, e.due.Add(time.Second).Sub(now))
			continue
		}
		b, ok := m.d.expect(ctx, m.key, http.MethodGet, "/api/v1/payments/"+e.id, nil, http.StatusOK)
		if !ok {
			m.expiring = m.expiring[1:]
			continue
		}
		var p struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(b, &p)
		switch {
		case p.Status == "expired":
			m.d.count(func(t *totals) { t.Expired++ })
			m.expiring = m.expiring[1:]
		case now.After(e.due.Add(settleGrace)):
			m.d.problem("payment %s still %q %v after its expires_at", e.id, p.Status, settleGrace)
			m.expiring = m.expiring[1:]
		case !wait:
			return
		default:
			sleep(ctx, 500*time.Millisecond)
		}
	}
}

// settle waits for every payment left to expire, so none is forgotten by
// a reset before its event is made.
func (m *merchant) settle(ctx context.Context) { m.checkExpired(ctx, true) }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// createBody is a create request as a shop sends it: amounts, currencies,
// customers and metadata vary, so that stored payments are not all alike.
func createBody(rnd *rand.Rand, expiresIn int) []byte {
	currencies := []string{"USD", "EUR", "GBP", "CAD"}
	n := rnd.IntN(100000)
	body := map[string]any{
		"amount":   json.Number(strconv.Itoa(1+rnd.IntN(99999)) + "." + fmt.Sprintf("%02d", rnd.IntN(100))),
		"currency": currencies[rnd.IntN(len(currencies))],
		"customer": map[string]any{
			"email": fmt.Sprintf("customer%d@example.com", n),
			"name":  fmt.Sprintf("Customer %d", n),
		},
		"description": fmt.Sprintf("Order %d", n),
		"expires_in":  expiresIn,
		"metadata":    map[string]any{"order_id": fmt.Sprintf("ord_%d", n), "ci_job": strconv.Itoa(rnd.IntN(1000))},
		"success_url": "https://shop.example.com/success",
		"cancel_url":  "https://shop.example.com/cancel",
		"mcc":         5732,
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // a map of strings and numbers always encodes
	}
	return b
}
