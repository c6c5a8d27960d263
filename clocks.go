// Merchants' clocks as a Backend keeps them, and the lock that takes one
// merchant's advances in turn.

package paymock

import (
	"context"
	"time"
)

// LastInstant is the latest a clock shows, and the latest time paymock
// writes: the end of 9999, the last year RFC 3339 writes.
func LastInstant() time.Time { return time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }

// NoLaterThanLastSecond is t, or the last whole second a clock shows when
// t is past it: work due after the end of 9999 (a webhook's retry, a
// delay) is due at its last second instead, a time an answer can write
// and a clock can reach.
func NoLaterThanLastSecond(t time.Time) time.Time {
	if last := LastInstant().Truncate(time.Second); t.After(last) {
		return last
	}
	return t
}

// ClockMode says whether time passes by itself.
type ClockMode string

// The clock modes of --clock.
const (
	ClockReal   ClockMode = "real"
	ClockFrozen ClockMode = "frozen"
)

// ClockState is one merchant's clock as a ClockStore keeps it: an offset
// from real time (real mode) or an instant that moves only when advanced
// (frozen mode).
type ClockState struct {
	Mode   ClockMode
	Offset time.Duration // real mode: added to the real time
	Frozen time.Time     // frozen mode
}

// ClockStore keeps merchants' clocks: in the process (package memory) or
// where every replica of a sandbox reads and advances them (package
// postgres). A merchant with no clock stored shows a new merchant's, which
// the caller supplies as initial.
type ClockStore interface {
	// Clock returns the merchant's stored clock; false when none is.
	Clock(ctx context.Context, merchantID string) (ClockState, bool, error)
	// AdvanceClock moves the merchant's clock forward by d atomically, so
	// that advances made at once add up, storing initial first when none
	// is stored, and returns the clock afterwards.
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

// AdvanceLocker takes the advances of one merchant's clock in turn: an
// advance reads the clock, fires what falls due on the way and moves the
// clock to its target, so two at once would each reach the same target
// instead of adding up. Package memory locks in the process, package
// postgres across replicas.
type AdvanceLocker interface {
	// LockAdvance waits until no other advance of the merchant runs, or
	// ctx ends, and returns what ends this one's turn.
	LockAdvance(ctx context.Context, merchantID string) (unlock func(), err error)
}
