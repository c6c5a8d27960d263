// The in-memory Backend, assembled.

package memory

import (
	"context"
	"errors"

	"github.com/paymock/paymock"
)

// New returns a Backend held in memory: nothing to set up, nothing kept
// once the process ends.
func New() paymock.Backend {
	payments, clocks := NewPayments(), NewClocks()
	outbox := NewOutbox(payments)
	sequences := NewSequences()
	return paymock.Backend{
		Payments:  payments,
		Ready:     func(context.Context) error { return nil }, // the process is the store
		Merchants: NewMerchants(),
		Clocks:    clocks,
		Due:       NewDue(payments, clocks),
		Advances:  clocks,
		Outbox:    outbox,
		Events:    outbox,
		Faults:    NewFaultRules(),
		Journal:   NewJournal(),
		Sequences: sequences,
		// Nothing but this process can reach what it holds of a merchant
		// it released: all of it goes, the payments' book itself included
		// (Drop, not Reset, which keeps it for the merchant's next payment).
		Release: func(ctx context.Context, merchantID string) error {
			sequences.Drop(merchantID)
			return errors.Join(outbox.ResetEvents(ctx, merchantID), clocks.ResetClock(ctx, merchantID),
				payments.Drop(ctx, merchantID))
		},
	}
}
