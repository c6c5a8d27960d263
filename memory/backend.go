// The in-memory Backend, assembled.

package memory

import (
	"context"

	"github.com/paymock/paymock"
)

// New returns a Backend held in memory: nothing to set up, nothing kept
// once the process ends.
func New() paymock.Backend {
	payments, clocks := NewPayments(), NewClocks()
	outbox := NewOutbox(payments)
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
	}
}
