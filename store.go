// The store: payments kept per merchant, behind an interface so that a
// shared backend can replace the in-memory one without touching handlers.

package paymock

import (
	"context"
)

// Store keeps payments. Every method is scoped to one merchant: a payment of
// another merchant is ErrNotFound, exactly like an unknown id.
type Store interface {
	// Insert adds a new payment; its id must be new. When limit >= 0 and
	// the merchant holds limit payments already, it stores nothing and
	// wraps ErrLimitReached (a shared database may let concurrent inserts
	// pass it by a few: see the implementation).
	Insert(ctx context.Context, p Payment, limit int) error
	// Get returns a snapshot of one payment.
	Get(ctx context.Context, merchantID, id string) (Payment, error)
	// Locate finds a payment by id alone, for the hosted pages, which a
	// customer reaches with no API key: ids are unguessable for this.
	Locate(ctx context.Context, id string) (Payment, error)
	// List returns up to limit payments, newest first, skipping offset of
	// them, and the merchant's total count.
	List(ctx context.Context, merchantID string, offset, limit int) ([]Payment, int, error)
	// CustomerID returns the merchant's customer id for an email, creating
	// it with newID on first use. When limit >= 0 and the merchant holds
	// limit payments already, a new customer is not created: ErrLimitReached
	// is wrapped, so that a create refused by the cap stores nothing.
	CustomerID(ctx context.Context, merchantID, email string, newID func() string, limit int) (string, error)
	// Update applies fn to one payment atomically: if fn fails, nothing
	// changes. It returns the payment as stored afterwards.
	Update(ctx context.Context, merchantID, id string, fn func(*Payment) error) (Payment, error)
	// Reset forgets every payment and customer of one merchant.
	Reset(ctx context.Context, merchantID string) error
}

// DefaultMaxPayments is how many payments one merchant may hold when the
// sandbox is not told otherwise (--max-payments): far more than a CI run
// makes, few enough that one merchant cannot fill the machine.
const DefaultMaxPayments = 10_000

// Page is a list request turned into store terms.
type Page struct {
	Offset, Limit int
}

// PageOf converts a 1-based page of perPage items into an offset and limit.
// A page too far out to address is an offset past any store, so it is
// simply empty rather than an overflow.
func PageOf(page, perPage int64) Page {
	if page < 1 || perPage < 1 {
		return Page{}
	}
	const maxOffset = int64(^uint(0) >> 2)
	if page-1 > maxOffset/perPage {
		return Page{Offset: int(maxOffset), Limit: int(perPage)}
	}
	return Page{Offset: int((page - 1) * perPage), Limit: int(perPage)}
}

// TotalPages is ceil(total/perPage), 0 for an empty list.
func TotalPages(total int, perPage int64) int64 {
	if perPage < 1 || total < 1 {
		return 0
	}
	// Not (total+perPage-1)/perPage, which overflows for a huge perPage.
	n := int64(total) / perPage
	if int64(total)%perPage != 0 {
		n++
	}
	return n
}
