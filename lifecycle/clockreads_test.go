// Tests of clocks kept in a store: reads that arrive together share a
// query, and no read answers with a state from before it asked.

package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedClocks is a ClockStore in memory whose reads take the state when
// they start, then wait at gate, as a query to a database does.
type gatedClocks struct {
	mu     sync.Mutex
	clocks map[string]ClockState
	gate   chan struct{}
	reads  atomic.Int32
	inRead chan struct{} // told when a read has taken its state
}

func (g *gatedClocks) Clock(_ context.Context, merchantID string) (ClockState, bool, error) {
	g.mu.Lock()
	st, ok := g.clocks[merchantID]
	g.mu.Unlock()
	g.reads.Add(1)
	g.inRead <- struct{}{}
	<-g.gate
	return st, ok, nil
}

func (g *gatedClocks) AdvanceClock(_ context.Context, merchantID string, d time.Duration, initial ClockState) (ClockState, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.clocks[merchantID]
	if !ok {
		st = initial
	}
	st.Frozen = st.Frozen.Add(d)
	g.clocks[merchantID] = st
	return st, nil
}

func (g *gatedClocks) RaiseClock(_ context.Context, merchantID string, t, _ time.Time, initial ClockState) (ClockState, error) {
	panic("not used")
}

func (g *gatedClocks) ResetClock(_ context.Context, merchantID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.clocks, merchantID)
	return nil
}

func TestSharedClocks_ReadsArrivingTogetherShareAQueryStartedAfterThem(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	store := &gatedClocks{clocks: map[string]ClockState{"acme": {Mode: ClockFrozen, Frozen: start}},
		gate: make(chan struct{}), inRead: make(chan struct{}, 100)}
	c, err := NewClocks(ClockConfig{Mode: ClockFrozen, Start: start, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan time.Time, 1)
	go func() { first <- c.Now("acme") }()
	<-store.inRead // the first query has read the clock, and waits

	// Another replica advances; then ten readers arrive.
	if _, err := store.AdvanceClock(t.Context(), "acme", time.Minute, ClockState{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	later := make(chan time.Time, 10)
	for range 10 {
		wg.Go(func() { later <- c.Now("acme") })
	}
	// Until all ten wait for the query after the running one.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		v, _ := c.reads.Load("acme")
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
	close(store.gate)
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
	if n := store.reads.Load(); n != 2 {
		t.Errorf("%d queries for 11 reads, want 2 (one running, one shared by the ten that came during it)", n)
	}
}
