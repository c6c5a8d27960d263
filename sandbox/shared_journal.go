// Wiring of the request journal to a store every replica shares.

package sandbox

import (
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/mockserver"
)

// shareJournal lets cfg keep the request journal in a shared store; with
// the memory store it changes nothing. It has nothing to set: the server
// keeps the journal in cfg.Store itself when that store is a
// mockserver.JournalStore, as the PostgreSQL store is (the way the
// lifecycle finds its DueStore in the store it is given).
func shareJournal(store paymock.Store, cfg *mockserver.Config) {}
