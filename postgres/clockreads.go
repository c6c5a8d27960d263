// Reads of a merchant's clock that arrive together share one query,
// without ever answering a read with a state older than the read itself.

package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// clockReadTimeout bounds one shared query: the readers waiting for it
// each give up at their own context's end, the query at this.
const clockReadTimeout = 5 * time.Second

// clockRead is one query of a merchant's stored clock and the readers
// waiting for it.
type clockRead struct {
	done chan struct{} // closed once st, ok and err are set
	st   paymock.ClockState
	ok   bool
	err  error
	// readers sharing it, counted for tests
	readers int
}

// clockReads coalesces one merchant's reads. At most one query runs; the
// readers that arrive meanwhile wait for the next one, which starts only
// after the running one ends, so every reader gets a state read after it
// asked: an advance answered on another replica before a reader arrived
// is always seen. A merchant busy with requests (every create reads its
// clock) costs about one query per round trip to the database instead of
// one per request.
type clockReads struct {
	mu      sync.Mutex
	running bool
	next    *clockRead // the query the readers arriving now will share
}

// coalescedReads is the clockReads of every merchant over one query.
type coalescedReads struct {
	query func(ctx context.Context, merchantID string) (paymock.ClockState, bool, error)
	m     sync.Map // merchant id -> *clockReads
}

// Delete forgets a merchant's entry.
func (c *coalescedReads) Delete(merchantID string) { c.m.Delete(merchantID) }

// read is query(ctx, merchantID), shared with the readers of the same
// merchant that arrive while a query runs.
func (c *coalescedReads) read(ctx context.Context, merchantID string) (paymock.ClockState, bool, error) {
	v, _ := c.m.Load(merchantID)
	if v == nil {
		v, _ = c.m.LoadOrStore(merchantID, &clockReads{})
	}
	f := v.(*clockReads)
	f.mu.Lock()
	if f.next == nil {
		f.next = &clockRead{done: make(chan struct{})}
	}
	r := f.next
	r.readers++
	if !f.running {
		f.running = true
		f.next = nil
		go c.run(f, r, merchantID)
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.st, r.ok, r.err
	case <-ctx.Done():
		return paymock.ClockState{}, false, ctx.Err()
	}
}

// run runs r's query, then the one readers queued meanwhile, until none
// is waiting.
func (c *coalescedReads) run(f *clockReads, r *clockRead, merchantID string) {
	for r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		r.st, r.ok, r.err = c.query(ctx, merchantID)
		cancel()
		close(r.done)
		f.mu.Lock()
		r, f.next = f.next, nil
		f.running = r != nil
		f.mu.Unlock()
	}
}

// readClock is the coalesced read of the merchant's clock.
func (s *Store) readClock(ctx context.Context, merchantID string) (paymock.ClockState, bool, error) {
	return s.clockReads.read(ctx, merchantID)
}
