// Tests of coalesced clock reads: reads that arrive together share a
// query, and no read answers with a state from before it asked.

package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// gatedQuery is a clock read that takes the state when it starts, then
// waits at gate, as a query to a database does.
type gatedQuery struct {
	mu     sync.Mutex
	state  paymock.ClockState
	gate   chan struct{}
	reads  atomic.Int32
	inRead chan struct{} // told when a read has taken its state
}

func (g *gatedQuery) query(_ context.Context, _ string) (paymock.ClockState, bool, error) {
	g.mu.Lock()
	st := g.state
	g.mu.Unlock()
	g.reads.Add(1)
	g.inRead <- struct{}{}
	<-g.gate
	return st, true, nil
}

func TestClockReads_ArrivingTogetherShareAQueryStartedAfterThem(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	g := &gatedQuery{state: paymock.ClockState{Mode: paymock.ClockFrozen, Frozen: start},
		gate: make(chan struct{}), inRead: make(chan struct{}, 100)}
	c := &coalescedReads{query: g.query}
	now := func() time.Time {
		st, _, err := c.read(context.Background(), "acme")
		if err != nil {
			t.Error(err)
		}
		return st.Frozen
	}
	first := make(chan time.Time, 1)
	go func() { first <- now() }()
	<-g.inRead // the first query has read the clock, and waits

	// Another replica advances; then ten readers arrive.
	g.mu.Lock()
	g.state.Frozen = start.Add(time.Minute)
	g.mu.Unlock()
	var wg sync.WaitGroup
	later := make(chan time.Time, 10)
	for range 10 {
		wg.Go(func() { later <- now() })
	}
	// Until all ten wait for the query after the running one.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		v, _ := c.m.Load("acme")
		f := v.(*clockReads)
		f.mu.Lock()
		n := 0
		if f.next != nil {
			n = f.next.readers
		}
		f.mu.Unlock()
		if n == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d readers queued after 10 s", n)
		}
	}
	close(g.gate)
	wg.Wait()
	close(later)
	if got := <-first; !got.Equal(start) {
		t.Errorf("the first read: %v, want %v", got, start)
	}
	for got := range later {
		if !got.Equal(start.Add(time.Minute)) {
			t.Errorf("a read that arrived after the advance shows %v, want %v", got, start.Add(time.Minute))
		}
	}
	if n := g.reads.Load(); n != 2 {
		t.Errorf("%d queries for 11 reads, want 2 (one running, one shared by the ten that came during it)", n)
	}
}
