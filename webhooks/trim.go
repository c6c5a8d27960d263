// Trimming the journal: when a merchant's events and deliveries are
// trimmed to what Config.MaxEvents and Config.MaxDeliveries keep.

package webhooks

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// trimEvery is how many stores (an event, or a redelivery's round) of a
// merchant a Dispatcher makes between two trims of its journal, so that
// it holds at most trimEvery-1 events more than the bound, and a trim
// (a walk over the journal) costs each store little.
const trimEvery = 100

// trimSlots is how many counters of stores the merchants share (32 KiB).
const trimSlots = 2048

// trimCounts counts each merchant's stores since its last trim, in a
// slot its id hashes to rather than in an entry of its own: a merchant
// of open mode that stored once costs nothing here once it is gone.
//
// One count shared by every merchant would trim the merchant whose store
// is the trimEvery-th of all: a tenant with two tokens that stores 99
// times on one and once on the other, in turn, would never have the first
// trimmed, and its journal would grow without bound.
type trimCounts struct {
	seed  maphash.Seed // set by New
	mu    sync.Mutex
	slots [trimSlots]trimSlot
}

// trimSlot counts the stores of the merchant that used it last.
type trimSlot struct {
	owner uint64 // a hash of the merchant's id, never 0; 0 when unused
	n     uint16 // its stores since its last trim, below trimEvery
}

// due counts one store of the merchant and says whether this one must
// trim: one in trimEvery of the merchant's stores, and any store that
// finds its slot last used by another merchant, which took the count
// over. So a merchant makes at most trimEvery stores between two trims
// however many share its slot; its first store in this process trims,
// so that a restart trims what the last process left.
func (c *trimCounts) due(merchantID string) bool {
	h := maphash.String(c.seed, merchantID) | 1
	s := &c.slots[h%trimSlots]
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.owner != h {
		s.owner, s.n = h, 1%trimEvery
		return true
	}
	due := s.n == 0
	s.n = (s.n + 1) % trimEvery
	return due
}

// trim keeps the merchant's journal near Config.MaxEvents and
// Config.MaxDeliveries, now and then.
func (d *Dispatcher) trim(merchantID string) {
	if !d.trims.due(merchantID) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keep := paymock.KeepEvents{Events: d.maxEvents, Deliveries: d.maxDeliveries}
	if err := d.box.TrimEvents(ctx, merchantID, keep); err != nil {
		d.log.Warn("event journal not trimmed; the next trim will", "merchant", merchantID, "error", err)
	}
}
