// Per-merchant clocks: real, or frozen and moved only when advanced, kept
// in the Backend's ClockStore.

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymock/paymock"
)

// ClockMode says whether time passes by itself.
type ClockMode = paymock.ClockMode

// The clock modes of --clock.
const (
	ClockReal   = paymock.ClockReal
	ClockFrozen = paymock.ClockFrozen
)

// ParseClockMode reads a --clock value.
func ParseClockMode(s string) (ClockMode, error) {
	switch m := ClockMode(s); m {
	case ClockReal, ClockFrozen:
		return m, nil
	}
	return "", fmt.Errorf("clock mode %q: want real or frozen", s)
}

// ClockConfig configures the merchants' clocks.
type ClockConfig struct {
	Mode ClockMode
	// Start is the instant every merchant's clock shows first; zero means
	// the real time now.
	Start time.Time
	// Now is the real time source; nil means time.Now. Tests replace it.
	Now func() time.Time
	// Store keeps the clocks (the Backend's Clocks); it is required.
	// Sandboxes sharing a store must share Mode and Start too.
	Store paymock.ClockStore
}

// Clocks is the set of per-merchant clocks. Each merchant's clock is an
// offset from real time (real mode) or an instant that moves only when
// advanced (frozen mode); advancing one never moves another.
type Clocks struct {
	mode  ClockMode
	real  func() time.Time
	base  time.Duration // offset of a new merchant's clock from real time
	start time.Time
	// fixed: a new merchant's clock is the same in every sandbox sharing
	// the store (real from the real time, or frozen at a configured
	// Start), so a clock read is never stored.
	fixed bool
	store paymock.ClockStore
}

// NewClocks returns the clocks of cfg.
func NewClocks(cfg ClockConfig) (*Clocks, error) {
	if cfg.Store == nil {
		return nil, errors.New("lifecycle: ClockConfig.Store is required")
	}
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
	now := real()
	c := &Clocks{mode: cfg.Mode, real: real, start: now, store: cfg.Store}
	if !cfg.Start.IsZero() {
		c.start = cfg.Start
		c.base = cfg.Start.Sub(now)
	}
	c.fixed = c.mode == ClockFrozen && !cfg.Start.IsZero() || c.mode == ClockReal && c.base == 0
	if !c.CanShow(c.start) || c.base == -maxDuration-1 {
		return nil, fmt.Errorf("clock start %s: a clock shows up to %s, a real one up to 292 years from now",
			c.start.Format(time.RFC3339), LastInstant().Format(time.RFC3339))
	}
	return c, nil
}

// Mode is the clocks' mode.
func (c *Clocks) Mode() ClockMode { return c.mode }

// initial is a new merchant's clock, as a ClockStore keeps it.
func (c *Clocks) initial() paymock.ClockState {
	if c.mode == ClockFrozen {
		return paymock.ClockState{Mode: ClockFrozen, Frozen: c.start}
	}
	return paymock.ClockState{Mode: ClockReal, Offset: c.base}
}

// show is the time a stored clock shows now.
func (c *Clocks) show(st paymock.ClockState) time.Time {
	if st.Mode == ClockFrozen {
		return st.Frozen.UTC()
	}
	return c.real().Add(st.Offset).UTC()
}

// Now is the merchant's current time, in UTC. A merchant with no clock
// stored gets a new merchant's, stored first when it depends on when the
// sandbox started (a frozen clock started at the real time, or a real
// clock's start offset): every replica sharing the store then shows the
// first one's. Otherwise nothing is stored, so an idle merchant costs
// the store nothing.
func (c *Clocks) Now(ctx context.Context, merchantID string) (time.Time, error) {
	st, ok, err := c.store.Clock(ctx, merchantID)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the clock of %s: %w", merchantID, err)
	}
	if !ok {
		init := c.initial()
		if c.fixed {
			return c.show(init), nil
		}
		if st, err = c.store.AdvanceClock(ctx, merchantID, 0, init); err != nil {
			return time.Time{}, fmt.Errorf("storing the clock of %s: %w", merchantID, err)
		}
	}
	return c.show(st), nil
}

// AdvanceTo moves the merchant's clock forward to t; a t in the past
// leaves it where it is.
func (c *Clocks) AdvanceTo(ctx context.Context, merchantID string, t time.Time) error {
	if _, err := c.store.RaiseClock(ctx, merchantID, t, c.real(), c.initial()); err != nil {
		return fmt.Errorf("advancing the clock of %s: %w", merchantID, err)
	}
	return nil
}

// Advance moves the merchant's clock forward by d in one atomic step, so
// that advances made at once add up, and returns its new time.
func (c *Clocks) Advance(ctx context.Context, merchantID string, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	st, err := c.store.AdvanceClock(ctx, merchantID, d, c.initial())
	if err != nil {
		return time.Time{}, fmt.Errorf("advancing the clock of %s: %w", merchantID, err)
	}
	return c.show(st), nil
}

// Reset puts the merchant's clock back to where a new merchant's starts.
func (c *Clocks) Reset(ctx context.Context, merchantID string) error {
	if err := c.store.ResetClock(ctx, merchantID); err != nil {
		return fmt.Errorf("resetting the clock of %s: %w", merchantID, err)
	}
	return nil
}

// RealNow is the real time of the sandbox (what a new merchant's real
// clock shows, minus its start offset) and that start offset: a sweep of
// due work on every real-mode merchant's clock measures from it.
func (c *Clocks) RealNow() (time.Time, time.Duration) { return c.real(), c.base }

// LastInstant is the latest a clock shows: the end of 9999, the last
// year RFC 3339 writes.
func LastInstant() time.Time { return paymock.LastInstant() }

// CanShow reports whether a merchant's clock can move to t: no later than
// LastInstant and, on a real clock, no further from the real time than
// the 292 years a time.Duration offset holds. Past that a clock would
// wrap; it is refused instead.
func (c *Clocks) CanShow(t time.Time) bool {
	if t.After(LastInstant()) {
		return false
	}
	return c.mode == ClockFrozen || t.Sub(c.real()) < maxDuration
}

// maxDuration is the longest time.Duration, where Sub saturates.
const maxDuration = time.Duration(1<<63 - 1)

// storeTimeout bounds one operation on the store when the caller has no
// context of its own (the timer loop, and what it fires).
const storeTimeout = 5 * time.Second
