// The Backend: everything a sandbox keeps, one behaviour-level interface
// per concern, so that one algorithm runs on memory and on PostgreSQL.

package paymock

import "context"

// Backend is where a sandbox keeps its state. Package memory builds one held
// in the process (memory.New), package postgres one that every replica
// shares (postgres.Store.Backend). Each field is an interface at the level
// of behaviour, implemented by both: the components that use them hold
// their algorithm once and never ask which kind of backend they were given.
type Backend struct {
	// Payments keeps payments and customers.
	Payments Store
	// Ready reports whether the backend can serve now (GET /readyz): nil
	// when it can, an error wrapping ErrUnavailable when it cannot.
	Ready func(ctx context.Context) error
	// Merchants keeps the merchant registry's run-time records: created
	// keys, open-mode merchants, revocations, added endpoints.
	Merchants MerchantStore
	// Clocks keeps each merchant's clock.
	Clocks ClockStore
	// Due knows when each pending payment changes by itself.
	Due DueStore
	// Advances takes one merchant's clock advances in turn.
	Advances AdvanceLocker
	// Sequences numbers each merchant's ids in a seeded run.
	Sequences Sequences
	// Release is told that this process no longer holds a merchant (an
	// idle open-mode merchant forgotten, or an empty one evicted at the
	// cap). A backend only this process uses drops what it keeps of the
	// merchant (payments, customers, clock, events and deliveries, id
	// sequence), since nothing can reach it any more and open mode must not
	// grow without end. A backend replicas share keeps it all: another
	// replica may be serving the merchant, and its token coming back is the
	// same merchant again.
	Release func(ctx context.Context, merchantID string) error
	// Outbox keeps events and their webhook deliveries.
	Outbox Outbox
	// Events stores a payment's transition with its event in one step.
	Events EventStore
	// Faults keeps each merchant's fault rules and their counts.
	Faults FaultRules
	// Journal keeps each merchant's request journal and its counts.
	Journal JournalStore
}
