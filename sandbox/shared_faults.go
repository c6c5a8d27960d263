// Wiring of fault rules to a store every replica shares.

package sandbox

import (
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
)

// shareFaults lets cfg keep merchants' fault rules in a shared store, when
// the store can keep them (package postgres does), so that a rule added
// on one replica fires on any and its times count once for all; with the
// memory store it changes nothing. Rules from the file stay in each
// replica's memory, every replica loading the same file, and only their
// counts per merchant are shared.
func shareFaults(store paymock.Store, cfg *faults.Config) {
	if rs, ok := store.(faults.RuleStore); ok {
		cfg.Store = rs
	}
}
