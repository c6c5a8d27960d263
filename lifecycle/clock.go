// Per-merchant clocks: real, or frozen and moved only when advanced.

package lifecycle

import (
	"fmt"
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

// ClockConfig configures the merchants' clocks.
type ClockConfig struct {
	Mode ClockMode
	// Start is the instant every merchant's clock shows first; zero means
	// the real time now.
	Start time.Time
	// Now is the real time source; nil means time.Now. Tests replace it.
	Now func() time.Time
}

// Clocks is the set of per-merchant clocks. Each merchant's clock is an
// offset from real time (real mode) or an instant that moves only when
// advanced (frozen mode); advancing one never moves another.
type Clocks struct {
	mode ClockMode
	real func() time.Time
	base time.Duration // offset of a new merchant's clock from real time

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
	c := &Clocks{mode: cfg.Mode, real: real, offsets: map[string]time.Duration{}, frozen: map[string]time.Time{}}
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

// Now is the merchant's current time, in UTC.
func (c *Clocks) Now(merchantID string) time.Time {
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

// AdvanceTo moves the merchant's clock forward to t; a t in the past
// leaves it where it is.
func (c *Clocks) AdvanceTo(merchantID string, t time.Time) {
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
func (c *Clocks) Reset(merchantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.frozen, merchantID)
	delete(c.offsets, merchantID)
}

// Advance moves the merchant's clock forward by d and returns its new time.
func (c *Clocks) Advance(merchantID string, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
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
