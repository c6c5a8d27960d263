// Per-merchant clocks: real, or frozen and moved only when advanced; kept
// in memory, or in a store every replica shares.

package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ClockMode says whether time passes by itself.
type ClockMode string

// The clock modes of --clock.
const (
	ClockReal   ClockMode = "real"
	ClockFrozen ClockMode = "frozen"
)

// ParseClockMode reads a --clock value.
func ParseClockMode(s string) (ClockMode, error) {
	switch m := ClockMode(s); m {
	case ClockReal, ClockFrozen:
		return m, nil
	}
	return "", fmt.Errorf("clock mode %q: want real or frozen", s)
}

// ClockState is one merchant's clock as a ClockStore keeps it: an offset
// from real time (real mode) or an instant that moves only when advanced
// (frozen mode).
type ClockState struct {
	Mode   ClockMode
	Offset time.Duration // real mode: added to the real time
	Frozen time.Time     // frozen mode
}

// ClockStore keeps merchants' clocks where every replica of a sandbox
// reads and advances them (package postgres implements it).
type ClockStore interface {
	// Clock returns the merchant's stored clock; false when none is.
	Clock(ctx context.Context, merchantID string) (ClockState, bool, error)
	// AdvanceClock moves the merchant's clock forward by d atomically, so
	// that advances from several replicas add up, storing initial first
	// when none is stored, and returns the clock afterwards.
	AdvanceClock(ctx context.Context, merchantID string, d time.Duration, initial ClockState) (ClockState, error)
	// RaiseClock moves the merchant's clock forward, atomically, so that
	// it shows at least t (a real clock's offset becomes at least t minus
	// realNow), storing the later of initial and that first when none is
	// stored, and returns the clock afterwards. A clock showing t or later
	// stays.
	RaiseClock(ctx context.Context, merchantID string, t, realNow time.Time, initial ClockState) (ClockState, error)
	// ResetClock forgets the merchant's clock.
	ResetClock(ctx context.Context, merchantID string) error
}

// ClockConfig configures the merchants' clocks.
type ClockConfig struct {
	Mode ClockMode
	// Start is the instant every merchant's clock shows first; zero means
	// the real time now.
	Start time.Time
	// Now is the real time source; nil means time.Now. Tests replace it.
	Now func() time.Time
	// Store keeps the clocks for every replica; nil keeps them in this
	// process. Replicas sharing a store must share Mode and Start too.
	Store ClockStore
	// Logger receives the store's failures (a clock read then falls back
	// to a new merchant's); nil discards them.
	Logger *slog.Logger
}

// storeTimeout bounds one clock operation on the store when the caller
// has no context of its own (Now, AdvanceTo).
const storeTimeout = 5 * time.Second

// Clocks is the set of per-merchant clocks. Each merchant's clock is an
// offset from real time (real mode) or an instant that moves only when
// advanced (frozen mode); advancing one never moves another.
type Clocks struct {
	mode  ClockMode
	real  func() time.Time
	base  time.Duration // offset of a new merchant's clock from real time
	store ClockStore    // nil: the maps below hold the clocks
	log   *slog.Logger
	reads sync.Map // merchant id -> *clockReads, with a store

	mu      sync.Mutex
	offsets map[string]time.Duration // real mode: per merchant
	frozen  map[string]time.Time     // frozen mode: per merchant
	start   time.Time
}

// NewClocks returns the clocks of cfg.
func NewClocks(cfg ClockConfig) (*Clocks, error) {
	if cfg.Mode == "" {
		cfg.Mode = ClockReal
	}
	if _, err := ParseClockMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	real := cfg.Now
	if real == nil {
		real = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Clocks{mode: cfg.Mode, real: real, store: cfg.Store, log: log,
		offsets: map[string]time.Duration{}, frozen: map[string]time.Time{}}
	now := real()
	c.start = now
	if !cfg.Start.IsZero() {
		c.start = cfg.Start
		c.base = cfg.Start.Sub(now)
	}
	return c, nil
}

// Mode is the clocks' mode.
func (c *Clocks) Mode() ClockMode { return c.mode }

// Shared reports whether the clocks live in a store all replicas share.
func (c *Clocks) Shared() bool { return c.store != nil }

// initial is a new merchant's clock, as a ClockStore keeps it.
func (c *Clocks) initial() ClockState {
	if c.mode == ClockFrozen {
		return ClockState{Mode: ClockFrozen, Frozen: c.start}
	}
	return ClockState{Mode: ClockReal, Offset: c.base}
}

// show is the time a stored clock shows now.
func (c *Clocks) show(st ClockState) time.Time {
	if st.Mode == ClockFrozen {
		return st.Frozen.UTC()
	}
	return c.real().Add(st.Offset).UTC()
}

// Now is the merchant's current time, in UTC. With a store, a failure to
// read it is logged and the time of a new merchant's clock is returned:
// the request that asked fails on the store anyway.
func (c *Clocks) Now(merchantID string) time.Time {
	if c.store == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.mode == ClockFrozen {
			t, ok := c.frozen[merchantID]
			if !ok {
				t = c.start
			}
			return t.UTC()
		}
		return c.real().Add(c.base + c.offsets[merchantID]).UTC()
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	t, err := c.NowContext(ctx, merchantID)
	if err != nil {
		c.log.Warn("merchant's clock not read; using a new merchant's", "merchant", merchantID, "error", err)
		return c.show(c.initial())
	}
	return t
}

// NowContext is Now with the store's error, for callers that can report
// it.
func (c *Clocks) NowContext(ctx context.Context, merchantID string) (time.Time, error) {
	if c.store == nil {
		return c.Now(merchantID), nil
	}
	st, err := c.readStored(ctx, merchantID)
	if err != nil {
		return time.Time{}, err
	}
	return c.show(st), nil
}

// stored is the merchant's clock in the store. A merchant with none gets
// a new merchant's clock, stored first when it depends on the replica (a
// frozen start, or a real clock's start offset, both measured when the
// replica started): every replica then shows the first one's.
func (c *Clocks) stored(ctx context.Context, merchantID string) (ClockState, error) {
	st, ok, err := c.store.Clock(ctx, merchantID)
	if err != nil {
		return ClockState{}, fmt.Errorf("reading the clock of %s: %w", merchantID, err)
	}
	if ok {
		return st, nil
	}
	init := c.initial()
	if init.Mode == ClockReal && init.Offset == 0 {
		return init, nil // the same on every replica: nothing to store
	}
	if st, err = c.store.AdvanceClock(ctx, merchantID, 0, init); err != nil {
		return ClockState{}, fmt.Errorf("storing the clock of %s: %w", merchantID, err)
	}
	return st, nil
}

// AdvanceTo moves the merchant's clock forward to t; a t in the past
// leaves it where it is.
func (c *Clocks) AdvanceTo(merchantID string, t time.Time) {
	if c.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if _, err := c.store.RaiseClock(ctx, merchantID, t, c.real(), c.initial()); err != nil {
			c.log.Warn("merchant's clock not advanced", "merchant", merchantID, "error", err)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == ClockFrozen {
		cur, ok := c.frozen[merchantID]
		if !ok {
			cur = c.start
		}
		if t.After(cur) {
			c.frozen[merchantID] = t
		}
		return
	}
	now := c.real().Add(c.base + c.offsets[merchantID])
	if t.After(now) {
		c.offsets[merchantID] += t.Sub(now)
	}
}

// Reset puts the merchant's clock back to where a new merchant's starts.
// A store's failure is logged; ResetContext returns it.
func (c *Clocks) Reset(merchantID string) {
	if c.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if err := c.ResetContext(ctx, merchantID); err != nil {
			c.log.Warn("merchant's clock not reset", "merchant", merchantID, "error", err)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.frozen, merchantID)
	delete(c.offsets, merchantID)
}

// ResetContext is Reset with the store's error.
func (c *Clocks) ResetContext(ctx context.Context, merchantID string) error {
	if c.store == nil {
		c.Reset(merchantID)
		return nil
	}
	if err := c.store.ResetClock(ctx, merchantID); err != nil {
		return fmt.Errorf("resetting the clock of %s: %w", merchantID, err)
	}
	// A merchant forgotten or reset costs nothing more; one reading it at
	// this moment makes a new entry.
	c.reads.Delete(merchantID)
	return nil
}

// Advance moves the merchant's clock forward by d and returns its new time.
// With a store the move is one atomic step, so advances made on several
// replicas at once add up.
func (c *Clocks) Advance(merchantID string, d time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return c.AdvanceContext(ctx, merchantID, d)
}

// AdvanceContext is Advance under ctx.
func (c *Clocks) AdvanceContext(ctx context.Context, merchantID string, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	if c.store != nil {
		st, err := c.store.AdvanceClock(ctx, merchantID, d, c.initial())
		if err != nil {
			return time.Time{}, fmt.Errorf("advancing the clock of %s: %w", merchantID, err)
		}
		return c.show(st), nil
	}
	c.mu.Lock()
	if c.mode == ClockFrozen {
		t, ok := c.frozen[merchantID]
		if !ok {
			t = c.start
		}
		c.frozen[merchantID] = t.Add(d)
	} else {
		c.offsets[merchantID] += d
	}
	c.mu.Unlock()
	return c.Now(merchantID), nil
}

// RealNow is the real time of the sandbox (what a new merchant's real
// clock shows, minus its start offset) and that start offset: a store
// sweeping due work on every real-mode merchant's clock measures from it.
func (c *Clocks) RealNow() (time.Time, time.Duration) { return c.real(), c.base }
