// Trimming the journal: when a merchant's events and deliveries are
// trimmed to what Config.MaxEvents and Config.MaxDeliveries keep.

package webhooks

import (
	"context"
	"time"

	"github.com/paymock/paymock"
)

// trimEvery is how many stores (an event, or a redelivery's round) of a
// merchant a Dispatcher makes between two trims of its journal, so that
// it holds at most trimEvery-1 events more than the bound, and a trim
// (a walk over the journal) costs each store little.
const trimEvery = 100

// trim keeps the merchant's journal near Config.MaxEvents and
// Config.MaxDeliveries, now and then.
func (d *Dispatcher) trim(merchantID string) {
	if !d.trims.Due(merchantID) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keep := paymock.KeepEvents{Events: d.maxEvents, Deliveries: d.maxDeliveries}
	if err := d.box.TrimEvents(ctx, merchantID, keep); err != nil {
		d.log.Warn("event journal not trimmed; the next trim will", "merchant", merchantID, "error", err)
	}
}
