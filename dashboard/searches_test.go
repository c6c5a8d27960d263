// Tests that the filtered searches of the payments, which read a
// merchant's whole list, run a few at once in all and fewer per merchant,
// and that one waiting in vain is answered or dropped.

package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
)

// search is a filtered search: it reads the merchant's list through.
const search = "/dashboard/payments?q=ada"

// gatedPayments, once armed, holds the List calls of the merchants in
// held until its gate is open (every merchant's when held is nil),
// counting the lists under way, in all and per merchant, the most of each
// at once, and every list of a merchant. Before, lists pass (a sign-in
// lands on the payments).
type gatedPayments struct {
	dashboard.Payments
	armed    atomic.Bool
	held     map[string]bool
	gate     chan struct{}
	openOnce sync.Once
	mu       sync.Mutex
	inFlight map[string]int
	calls    map[string]int
	all      int
	most     int
	mostOne  int
}

func newGatedPayments(p dashboard.Payments, held ...string) *gatedPayments {
	g := &gatedPayments{Payments: p, gate: make(chan struct{}), inFlight: map[string]int{}, calls: map[string]int{}}
	if len(held) > 0 {
		g.held = map[string]bool{}
		for _, id := range held {
			g.held[id] = true
		}
	}
	return g
}

func (g *gatedPayments) open() { g.openOnce.Do(func() { close(g.gate) }) }

func (g *gatedPayments) List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	if !g.armed.Load() {
		return g.Payments.List(ctx, merchantID, offset, limit)
	}
	g.mu.Lock()
	g.inFlight[merchantID]++
	g.calls[merchantID]++
	g.all++
	g.most, g.mostOne = max(g.most, g.all), max(g.mostOne, g.inFlight[merchantID])
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight[merchantID]--
		g.all--
		g.mu.Unlock()
	}()
	if g.held == nil || g.held[merchantID] {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	return g.Payments.List(ctx, merchantID, offset, limit)
}

// counts reads what g counted: lists under way now, the most at once in
// all and of one merchant.
func (g *gatedPayments) counts() (all, most, mostOne int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.all, g.most, g.mostOne
}

// callsOf is how many lists of merchantID began.
func (g *gatedPayments) callsOf(merchantID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[merchantID]
}

// gatedHarness is a dashboard whose payments' lists g holds, searches
// waiting at most wait (0: the default) for a slot.
func gatedHarness(t *testing.T, wait time.Duration, held ...string) (*harness, *gatedPayments) {
	t.Helper()
	var g *gatedPayments
	h := newHarness(t, func(c *dashboard.Config) {
		g = newGatedPayments(c.Payments, held...)
		c.Payments = g
		c.SearchWait = wait
	})
	t.Cleanup(g.open) // a failed test's searches end too
	return h, g
}

// searchesAtOnce asks for n searches with each browser at once, and
// returns a wait for their statuses. It never fails the test from another
// goroutine: an error is status 0.
func searchesAtOnce(n int, browsers ...*browser) func() []int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var statuses []int
	for _, b := range browsers {
		for range n {
			wg.Go(func() {
				st := 0
				if resp, err := b.c.Get(b.base + search); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					st = resp.StatusCode
				}
				mu.Lock()
				statuses = append(statuses, st)
				mu.Unlock()
			})
		}
	}
	return func() []int { wg.Wait(); return statuses }
}

// waitUntil polls cond for up to 5 seconds, failing the test after.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// settle gives searches waiting for a slot the time to reach the store
// (a few milliseconds, were they not waiting), failing if one does past
// the bounds.
func settle(t *testing.T, g *gatedPayments) {
	t.Helper()
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, most, mostOne := g.counts(); most > dashboard.SearchesAtOnce || mostOne > dashboard.SearchesPerMerchant {
			t.Fatalf("%d searches at once, %d of one merchant: past the bounds of %d and %d",
				most, mostOne, dashboard.SearchesAtOnce, dashboard.SearchesPerMerchant)
		}
	}
}

func TestPayments_AtMostSearchesAtOnceRunInAllAndPerMerchant(t *testing.T) {
	h, g := gatedHarness(t, time.Minute)
	h.fake.open = true
	// 2*SearchesAtOnce merchants' searches would pass the bound in all.
	browsers := make([]*browser, 2*dashboard.SearchesAtOnce)
	for i := range browsers {
		browsers[i] = h.browser()
		browsers[i].signIn(fmt.Sprintf("sk_test_searcher%d", i))
	}
	g.armed.Store(true)
	wait := searchesAtOnce(3, browsers...)
	waitUntil(t, func() bool { all, _, _ := g.counts(); return all >= dashboard.SearchesAtOnce }, "the bound's searches to start")
	settle(t, g)
	g.open()
	for _, st := range wait() {
		if st != http.StatusOK {
			t.Errorf("a search that waited for its slot: %d, want 200", st)
		}
	}
	if _, most, mostOne := g.counts(); most != dashboard.SearchesAtOnce || mostOne != dashboard.SearchesPerMerchant {
		t.Errorf("%d searches at once, %d of one merchant; want %d and %d",
			most, mostOne, dashboard.SearchesAtOnce, dashboard.SearchesPerMerchant)
	}
}

func TestPayments_AMerchantsManySearchesWaitOnItsOwn(t *testing.T) {
	h, g := gatedHarness(t, time.Minute, "acme")
	h.fake.addPayment(t, "globex", "ada@example.com", 1050, 0)
	acme, globex := h.browser(), h.browser()
	acme.signIn(acmeKey)
	globex.signIn(globexKey)
	g.armed.Store(true)
	waitAcme := searchesAtOnce(4*dashboard.SearchesAtOnce, acme) // more than all the slots
	waitUntil(t, func() bool { all, _, _ := g.counts(); return all >= 1 }, "acme's first search to start")
	settle(t, g)

	p := globex.get(search) // not held: ends at once, if it gets a slot
	if p.status != http.StatusOK || !strings.Contains(p.text(), "ada@example.com") {
		t.Fatalf("globex's search while acme's wait: %d, want 200 with its payment; page says %q", p.status, p.text())
	}
	if n := g.callsOf("acme"); n != dashboard.SearchesPerMerchant {
		t.Errorf("acme's searches that reached the store while the first is held: %d, want %d", n, dashboard.SearchesPerMerchant)
	}
	g.open()
	for _, st := range waitAcme() {
		if st != http.StatusOK {
			t.Errorf("an acme search that waited for its slot: %d, want 200", st)
		}
	}
}

func TestPayments_ASearchThatFindsNoSlotIsNotRun(t *testing.T) {
	tests := []struct {
		name string
		wait time.Duration // Config.SearchWait
		// leave is when the client goes away while its search waits; 0
		// for a client that stays.
		leave time.Duration
	}{
		{name: "waiting past SearchWait is answered searches busy", wait: 100 * time.Millisecond},
		{name: "a client gone while waiting is dropped", wait: time.Minute, leave: 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, g := gatedHarness(t, tt.wait, "acme")
			b := h.browser()
			b.signIn(acmeKey)
			g.armed.Store(true)
			first := searchesAtOnce(1, b) // holds acme's slot
			waitUntil(t, func() bool { all, _, _ := g.counts(); return all == 1 }, "acme's first search to start")

			if tt.leave == 0 {
				p := b.get(search)
				if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "1" {
					t.Errorf("search with every slot taken: %d, Retry-After %q; want 503, 1", p.status, p.header.Get("Retry-After"))
				}
				if got := p.field("message"); !strings.Contains(got, "Too many searches") || !strings.Contains(got, "Try again") {
					t.Errorf("busy page says %q, want it to say the searches are busy and to try again", got)
				}
				if retry := find(p.doc, "data-action", "retry"); retry == nil || attrOf(retry, "href") != search {
					t.Errorf("busy page's retry link: %v, want %s", retry, search)
				}
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), tt.leave)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+search, nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp, err := b.c.Do(req); err == nil {
					resp.Body.Close()
					t.Fatalf("a search whose client left got an answer: %d", resp.StatusCode)
				}
				waitUntil(t, func() bool { return strings.Contains(h.logs.String(), "dashboard search dropped") }, "the server to drop the search")
			}
			if n := g.callsOf("acme"); n != 1 {
				t.Errorf("acme's searches that reached the store: %d, want only the first", n)
			}

			g.open()
			if st := first()[0]; st != http.StatusOK {
				t.Errorf("the search that held the slot: %d, want 200", st)
			}
			// The refused search held no slot: the next one runs.
			if p := b.get(search); p.status != http.StatusOK {
				t.Errorf("a search once the slot is free: %d, want 200; page says %q", p.status, p.text())
			}
		})
	}
}
