// Merchants' clocks and advance locks held in the process.

package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// Clocks is the in-memory paymock.ClockStore and paymock.AdvanceLocker.
// A clock is an immutable state behind a sync.Map entry, replaced whole by
// compare-and-swap: reading one, on every create, takes no lock and
// allocates nothing.
type Clocks struct {
	states sync.Map // merchant id -> *paymock.ClockState

	mu       sync.Mutex
	advances map[string]*advanceTurn // merchants with an advance running or waiting
}

// advanceTurn is one merchant's advance lock: a one-slot semaphore, so a
// waiter can give up when its context ends, and the number of advances
// holding or waiting for it, so that it goes once none does.
type advanceTurn struct {
	slot  chan struct{}
	users int
}

var (
	_ paymock.ClockStore    = (*Clocks)(nil)
	_ paymock.AdvanceLocker = (*Clocks)(nil)
)

// NewClocks returns an empty clock store: every merchant's clock is a new
// merchant's.
func NewClocks() *Clocks {
	return &Clocks{advances: make(map[string]*advanceTurn)}
}

// checkState refuses a clock no store could show.
func checkState(c paymock.ClockState) error {
	switch c.Mode {
	case paymock.ClockReal:
		return nil
	case paymock.ClockFrozen:
		if c.Frozen.IsZero() {
			return errors.New("a frozen clock needs its instant")
		}
		return nil
	}
	return fmt.Errorf("clock mode %q: want real or frozen", c.Mode)
}

// Clock implements paymock.ClockStore.
func (c *Clocks) Clock(_ context.Context, merchantID string) (paymock.ClockState, bool, error) {
	v, ok := c.states.Load(merchantID)
	if !ok {
		return paymock.ClockState{}, false, nil
	}
	return *v.(*paymock.ClockState), true, nil
}

// update replaces the merchant's clock by move(its state, or initial when
// none is stored), atomically against any other update.
func (c *Clocks) update(merchantID string, initial paymock.ClockState, move func(paymock.ClockState) (paymock.ClockState, error)) (paymock.ClockState, error) {
	if err := checkState(initial); err != nil {
		return paymock.ClockState{}, err
	}
	for {
		v, ok := c.states.Load(merchantID)
		cur := initial
		if ok {
			cur = *v.(*paymock.ClockState)
		}
		next, err := move(cur)
		if err != nil {
			return paymock.ClockState{}, err
		}
		if !ok {
			if _, loaded := c.states.LoadOrStore(merchantID, &next); !loaded {
				return next, nil
			}
			continue // another update stored one first: move that one
		}
		if c.states.CompareAndSwap(merchantID, v, &next) {
			return next, nil
		}
	}
}

// AdvanceClock implements paymock.ClockStore. An offset that would pass
// what a time.Duration holds is refused, never wrapped.
func (c *Clocks) AdvanceClock(_ context.Context, merchantID string, d time.Duration, initial paymock.ClockState) (paymock.ClockState, error) {
	if d < 0 {
		return paymock.ClockState{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	return c.update(merchantID, initial, func(s paymock.ClockState) (paymock.ClockState, error) {
		if s.Mode == paymock.ClockFrozen {
			s.Frozen = s.Frozen.Add(d)
			return s, nil
		}
		if s.Offset > maxDuration-d {
			return s, fmt.Errorf("advancing the clock of %s by %s: its offset would overflow", merchantID, d)
		}
		s.Offset += d
		return s, nil
	})
}

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// RaiseClock implements paymock.ClockStore.
func (c *Clocks) RaiseClock(_ context.Context, merchantID string, t, realNow time.Time, initial paymock.ClockState) (paymock.ClockState, error) {
	return c.update(merchantID, initial, func(s paymock.ClockState) (paymock.ClockState, error) {
		if s.Mode == paymock.ClockFrozen {
			if t.After(s.Frozen) {
				s.Frozen = t
			}
			return s, nil
		}
		// Sub saturates rather than wraps; a saturated offset is refused.
		off := t.Sub(realNow)
		if off == maxDuration {
			return s, fmt.Errorf("advancing the clock of %s to %s: its offset would overflow", merchantID, t)
		}
		s.Offset = max(s.Offset, off)
		return s, nil
	})
}

// ResetClock implements paymock.ClockStore.
func (c *Clocks) ResetClock(_ context.Context, merchantID string) error {
	c.states.Delete(merchantID)
	return nil
}

// offset is the merchant's clock's offset from real time (base when none
// is stored), and false when its clock is frozen: what a sweep of real
// clocks measures from.
func (c *Clocks) offset(merchantID string, base time.Duration) (time.Duration, bool) {
	v, ok := c.states.Load(merchantID)
	if !ok {
		return base, true
	}
	s := v.(*paymock.ClockState)
	return s.Offset, s.Mode == paymock.ClockReal
}

// LockAdvance implements paymock.AdvanceLocker: advances of one merchant
// wait for each other in this process, as PostgreSQL's advisory lock makes
// them wait across replicas.
func (c *Clocks) LockAdvance(ctx context.Context, merchantID string) (func(), error) {
	c.mu.Lock()
	t := c.advances[merchantID]
	if t == nil {
		t = &advanceTurn{slot: make(chan struct{}, 1)}
		c.advances[merchantID] = t
	}
	t.users++
	c.mu.Unlock()
	select {
	case t.slot <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-t.slot
				c.leave(merchantID, t)
			})
		}, nil
	case <-ctx.Done():
		c.leave(merchantID, t)
		return nil, ctx.Err()
	}
}

// leave counts an advance out of the merchant's lock, dropping the lock
// when no advance holds or waits for it.
func (c *Clocks) leave(merchantID string, t *advanceTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(c.advances, merchantID)
	}
}
