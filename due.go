// Due work as a Backend keeps it: when each pending payment changes by
// itself.

package paymock

import (
	"context"
	"time"
)

// DuePayment is a pending payment that changes by itself: at At, an
// instant of its merchant's clock, it becomes To.
type DuePayment struct {
	MerchantID string
	ID         string
	At         time.Time
	To         Status
}

// DueStore knows when each pending payment falls due, so that whoever
// sweeps fires it: this process (package memory), or any replica, a
// restarted one needing nothing re-scheduled (package postgres). A pending
// payment stored is due at its ExpiresAt, becoming expired, unless SetDue
// gave it an earlier step; once it is no longer pending it is never listed.
type DueStore interface {
	// SetDue records that the pending payment becomes to at at, an
	// instant before its expiry (the first step of its scenario). A
	// payment no longer pending, or unknown, is left alone.
	SetDue(ctx context.Context, merchantID, id string, at time.Time, to Status) error
	// Due lists up to limit of the merchant's pending payments due by
	// until on its clock, earliest first.
	Due(ctx context.Context, merchantID string, until time.Time, limit int) ([]DuePayment, error)
	// DueAll lists up to limit pending payments due on their merchants'
	// real clocks, earliest first: a merchant's clock shows now plus its
	// stored offset, or plus base when none is stored (see ClockStore).
	// Merchants whose stored clock is frozen have none listed (an advance
	// fires those).
	DueAll(ctx context.Context, now time.Time, base time.Duration, limit int) ([]DuePayment, error)
}
