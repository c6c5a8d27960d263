// Reads of a shared clock that arrive together share one query, without
// ever answering a read with a state older than the read itself.

package lifecycle

import (
	"context"
	"sync"
)

// clockRead is one query of a merchant's stored clock and the readers
// waiting for it.
type clockRead struct {
	done chan struct{} // closed once st and err are set
	st   ClockState
	err  error
	// readers sharing it, counted for tests
	readers int
}

// clockReads coalesces one merchant's reads. At most one query runs; the
// readers that arrive meanwhile wait for the next one, which starts only
// after the running one ends, so every reader gets a state read after it
// asked: an advance answered on another replica before a reader arrived
// is always seen. A merchant busy with requests costs about one query per
// round trip to the database instead of one per request.
type clockReads struct {
	mu      sync.Mutex
	running bool
	next    *clockRead // the query the readers arriving now will share
}

// readStored is stored(ctx, merchantID), shared with the readers of the
// same merchant that arrive while a query runs. ctx bounds this reader's
// wait; the shared query is bounded by storeTimeout.
func (c *Clocks) readStored(ctx context.Context, merchantID string) (ClockState, error) {
	v, _ := c.reads.Load(merchantID)
	if v == nil {
		v, _ = c.reads.LoadOrStore(merchantID, &clockReads{})
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
		go c.runReads(f, r, merchantID)
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.st, r.err
	case <-ctx.Done():
		return ClockState{}, ctx.Err()
	}
}

// runReads runs r's query, then the one readers queued meanwhile, until
// none is waiting.
func (c *Clocks) runReads(f *clockReads, r *clockRead, merchantID string) {
	for r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		r.st, r.err = c.stored(ctx, merchantID)
		cancel()
		close(r.done)
		f.mu.Lock()
		r, f.next = f.next, nil
		f.running = r != nil
		f.mu.Unlock()
	}
}
