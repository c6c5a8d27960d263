// The in-memory Backend, assembled.

package memory

import "github.com/paymock/paymock"

// New returns a Backend held in memory: nothing to set up, nothing kept
// once the process ends.
func New() paymock.Backend {
	b := paymock.Backend{Payments: NewPayments()}
	b.Faults = NewFaultRules()
	b.Journal = NewJournal()
	return b
}
