// The journal as callers see it: a merchant's events with their
// deliveries and attempts, and one endpoint's deliveries, read from the
// outbox.

package webhooks

import (
	"context"
	"fmt"

	"github.com/paymock/paymock"
)

// Events lists a merchant's events, newest first, from offset, at most
// limit of them (limit <= 0: all), with the total count.
func (d *Dispatcher) Events(ctx context.Context, merchantID string, offset, limit int) ([]paymock.EventRecord, int, error) {
	return d.box.Events(ctx, merchantID, max(offset, 0), limit)
}

// Event returns one of a merchant's events; false when it has none of
// that id.
func (d *Dispatcher) Event(ctx context.Context, merchantID, eventID string) (paymock.EventRecord, bool, error) {
	return d.box.Event(ctx, merchantID, eventID)
}

// EndpointDeliveries lists the deliveries of a merchant's events to one
// endpoint, by its id, newest first (latest event first, and within an
// event the latest round first), from offset, at most limit of them
// (limit <= 0: all), with the total count. The list covers the events the
// journal still holds; an unknown endpoint, or another merchant's, has
// none.
func (d *Dispatcher) EndpointDeliveries(ctx context.Context, merchantID, endpointID string, offset, limit int) ([]paymock.EndpointDeliveryRecord, int, error) {
	if endpointID == "" {
		return []paymock.EndpointDeliveryRecord{}, 0, nil
	}
	return d.box.EndpointDeliveries(ctx, merchantID, endpointID, max(offset, 0), limit)
}

// Reset forgets a merchant's events. A send under way finishes (the
// receiver may still get it) but is not recorded; retries, delays and
// windows scheduled do nothing when they fire. The observer counts the
// dropped pending deliveries as interrupted.
func (d *Dispatcher) Reset(ctx context.Context, merchantID string) error {
	return d.Forget(ctx, merchantID, d.box.ResetEvents)
}

// Forget is told that this process no longer holds a merchant: its timers
// here never run, and release (the backend's Release, or the outbox's
// ResetEvents) decides whether its events go too. Pending deliveries that
// went are counted as interrupted by the observer; ones a shared backend
// kept stay pending for the replicas that still serve the merchant.
func (d *Dispatcher) Forget(ctx context.Context, merchantID string, release func(ctx context.Context, merchantID string) error) error {
	recs, _, err := d.box.Events(ctx, merchantID, 0, 0)
	if err != nil {
		return fmt.Errorf("webhooks: forget %s: %w", merchantID, err)
	}
	if err := release(ctx, merchantID); err != nil {
		return fmt.Errorf("webhooks: forget %s: %w", merchantID, err)
	}
	d.mu.Lock()
	for k := range d.timers { // a forgotten merchant's timers never run
		if k.merchantID == merchantID {
			delete(d.timers, k)
		}
	}
	d.mu.Unlock()
	if _, left, err := d.box.Events(ctx, merchantID, 0, 1); err != nil || left > 0 {
		return err
	}
	for _, r := range recs {
		for _, del := range r.Deliveries {
			if del.State == paymock.DeliveryPending {
				d.obs.EventFinished(string(paymock.DeliveryInterrupted))
			}
		}
	}
	return nil
}
