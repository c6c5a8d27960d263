// Tests that the list pages built at once are bounded, in all and per
// merchant, so that many connections asking for the largest pages cannot
// each hold one, and one merchant asking for many waits on its own.

package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

// mockserver's listPagesAtOnce and listPagesPerMerchant.
const listPagesAtOnce, listPagesPerMerchant = 32, 8

// gatedLists holds every List of the payments' store until its gate is
// open, counting the lists held at once, in all and per merchant, and
// the most of each.
type gatedLists struct {
	paymock.Store
	gate     chan struct{}
	openOnce sync.Once
	mu       sync.Mutex
	inFlight map[string]int
	all      int
	most     int
	mostOne  int
}

func newGatedLists(b paymock.Backend) *gatedLists {
	return &gatedLists{Store: b.Payments, gate: make(chan struct{}), inFlight: map[string]int{}}
}

func (g *gatedLists) open() { g.openOnce.Do(func() { close(g.gate) }) }

func (g *gatedLists) List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	g.mu.Lock()
	g.inFlight[merchantID]++
	g.all++
	g.most, g.mostOne = max(g.most, g.all), max(g.mostOne, g.inFlight[merchantID])
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight[merchantID]--
		g.all--
		g.mu.Unlock()
	}()
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	return g.Store.List(ctx, merchantID, offset, limit)
}

// counts reads what g counted: lists held now, and the merchants they
// are of; and the most at once, in all and of one merchant.
func (g *gatedLists) counts() (all, merchants, most, mostOne int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range g.inFlight {
		if n > 0 {
			merchants++
		}
	}
	return g.all, merchants, g.most, g.mostOne
}

// gatedEnv is a sandbox whose lists g holds, each key in keys holding a
// payment.
func gatedEnv(t *testing.T, keys ...string) (*testEnv, *gatedLists) {
	t.Helper()
	b := memory.New()
	g := newGatedLists(b)
	b.Payments = g
	e := newEnv(t, onBackend(b))
	t.Cleanup(g.open) // a failed test's lists end too
	for _, key := range keys {
		if st, body, _ := e.do(http.MethodPost, "/api/v1/payments", key, validCreate()); st != http.StatusCreated {
			t.Fatalf("create: %d %v", st, body)
		}
	}
	return e, g
}

// listsAtOnce asks for n lists of each key at once, and returns a wait for
// their statuses.
func listsAtOnce(e *testEnv, n int, keys ...string) func() []int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var statuses []int
	for _, key := range keys {
		for range n {
			wg.Go(func() {
				st, _, _ := e.do(http.MethodGet, "/api/v1/payments", key, nil)
				mu.Lock()
				statuses = append(statuses, st)
				mu.Unlock()
			})
		}
	}
	return func() []int { wg.Wait(); return statuses }
}

// settle gives requests waiting for a slot the time to reach the store
// (a few milliseconds, were they not waiting), failing if one does past
// the bounds.
func settle(t *testing.T, g *gatedLists) {
	t.Helper()
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, _, most, mostOne := g.counts(); most > listPagesAtOnce || mostOne > listPagesPerMerchant {
			t.Fatalf("%d list pages built at once, %d of one merchant: past the bounds of %d and %d",
				most, mostOne, listPagesAtOnce, listPagesPerMerchant)
		}
	}
}

func TestList_AtMostListPagesAtOnceAreBuiltInAllAndPerMerchant(t *testing.T) {
	keys := make([]string, 6) // 6 merchants' 8 each would pass the bound in all
	for i := range keys {
		keys[i] = fmt.Sprintf("sk_test_lists%d", i)
	}
	e, g := gatedEnv(t, keys...)
	wait := listsAtOnce(e, 10, keys...)
	waitFor(t, func() bool { all, _, _, _ := g.counts(); return all >= listPagesAtOnce }, "the bound's pages to be built")
	settle(t, g)
	g.open()
	for _, st := range wait() {
		if st != http.StatusOK {
			t.Errorf("a list that waited for its slot: %d, want 200", st)
		}
	}
	// Which merchants' lists took the slots depends on the order they came
	// in: the bound in all is reached, one merchant's need not be.
	if _, _, most, mostOne := g.counts(); most != listPagesAtOnce || mostOne > listPagesPerMerchant {
		t.Errorf("%d list pages built at once, %d of one merchant; want %d, and at most %d", most, mostOne, listPagesAtOnce, listPagesPerMerchant)
	}
}

func TestList_AMerchantAskingForManyPagesWaitsOnItsOwn(t *testing.T) {
	e, g := gatedEnv(t, keyA, keyB)
	waitA := listsAtOnce(e, listPagesAtOnce+listPagesPerMerchant, keyA) // more than all the slots
	waitFor(t, func() bool { all, _, _, _ := g.counts(); return all >= listPagesPerMerchant }, "alice's pages to be built")
	settle(t, g)
	// Alice's other lists wait on her slots; Bob's goes on to the store.
	waitB := listsAtOnce(e, 1, keyB)
	waitFor(t, func() bool { _, merchants, _, _ := g.counts(); return merchants == 2 }, "bob's page to be built while alice's wait")
	g.open()
	for _, st := range append(waitA(), waitB()...) {
		if st != http.StatusOK {
			t.Errorf("a list: %d, want 200", st)
		}
	}
}

// A client that goes away while its list is being read ends the store's
// work; that is not the server failing, and is logged at debug, not as
// an error (a client closing each request early must not fill the
// operator's log).
func TestClientGone_IsNotLoggedAsAFailedRequest(t *testing.T) {
	e, g := gatedEnv(t, keyA)
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"/api/v1/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+keyA)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if all, _, _, _ := g.counts(); all == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list never reached the store")
		}
	}
	cancel()
	<-gone
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(e.logs.String(), "the client went away"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no debug record of the client going away; logs:\n%s", e.logs.String())
		}
	}
	if logs := e.logs.String(); strings.Contains(logs, "request failed") {
		t.Errorf("a client going away was logged as a failed request:\n%s", logs)
	}
}
