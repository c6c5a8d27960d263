// Publishing: an event's deliveries to the endpoints its merchant has
// now, and a new round of an event's deliveries (redeliver).

package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/paymock/paymock"
)

// Publish stores ev with one delivery per endpoint: those
// Config.Endpoints names, or without it m.Webhooks, or the default
// endpoints when m has none; and wakes the merchant's senders. With no
// endpoint the event is still stored, with no deliveries. An invalid
// merchant endpoint gives a delivery that fails at once, with the reason.
// Publish never waits for a send. After Close the event is stored, its
// deliveries pending for the next start, and the error is ErrClosed.
func (d *Dispatcher) Publish(ctx context.Context, m *paymock.Merchant, ev paymock.Event) error {
	switch {
	case m == nil || m.ID == "":
		return errors.New("webhooks: publish: no merchant")
	case ev.ID == "":
		return errors.New("webhooks: publish: event has no id")
	case ev.MerchantID != "" && ev.MerchantID != m.ID:
		return fmt.Errorf("webhooks: publish: event %s belongs to another merchant", ev.ID)
	case !json.Valid(ev.Body):
		return fmt.Errorf("webhooks: publish: event %s: body is not JSON", ev.ID)
	}
	ev.MerchantID = m.ID
	ev.Body = bytes.Clone(ev.Body)
	r, err := d.Prepare(ctx, m, ev.Type)
	if err != nil {
		return err
	}
	o := r.Outgoing(ev)
	ids, err := d.box.AddEvent(ctx, o)
	if err != nil {
		return fmt.Errorf("webhooks: publish %s: %w", ev.ID, err)
	}
	d.log.DebugContext(ctx, "webhook event published", "merchant", m.ID, "event", ev.ID, "type", ev.Type,
		"payment", ev.Payment.ID, "endpoints", len(o.Deliveries))
	if !d.Stored(m.ID, o, ids) {
		return ErrClosed
	}
	return nil
}

// slotsFor checks the endpoints an event of m goes to now.
func (d *Dispatcher) slotsFor(ctx context.Context, m *paymock.Merchant) []endpointSlot {
	var eps []paymock.WebhookEndpoint
	switch {
	case d.endpoints != nil:
		eps = d.endpoints.Deliverable(ctx, m.ID)
	case len(m.Webhooks) > 0:
		eps = m.Webhooks
	default:
		slots := make([]endpointSlot, 0, len(d.defaults))
		for _, ep := range d.defaults {
			slots = append(slots, endpointSlot{ep: ep})
		}
		return slots
	}
	slots := make([]endpointSlot, 0, len(eps))
	for _, w := range eps {
		ep, err := d.endpoint(w)
		if err != nil {
			d.log.WarnContext(ctx, "webhook endpoint invalid: its deliveries fail", "merchant", m.ID,
				"endpoint", w.ID, "error", err)
		}
		slots = append(slots, endpointSlot{ep: ep, err: err})
	}
	return slots
}

type endpointSlot struct {
	ep  endpoint
	err error // the endpoint is invalid: its deliveries fail at once
}

// Redeliver starts a new delivery round of an event: one delivery per
// endpoint of its first round, same event id and body. Each new delivery
// keeps its place in line: it waits behind any unfinished delivery of the
// same payment to the same endpoint. Faults are asked again for the new
// deliveries. It returns the event's record once the round is stored. An
// unknown event, or another merchant's, is an error wrapping
// paymock.ErrNotFound. While the merchant has Config.MaxPendingForRedeliver
// deliveries pending or more, nothing is stored and the error is the
// refusal to show (a *paymock.Error, code delivery_limit) wrapping
// paymock.ErrLimitReached.
func (d *Dispatcher) Redeliver(ctx context.Context, merchantID, eventID string) (paymock.EventRecord, error) {
	if d.isClosed() {
		return paymock.EventRecord{}, ErrClosed
	}
	rec, ok, err := d.box.Event(ctx, merchantID, eventID)
	if err != nil {
		return paymock.EventRecord{}, err
	}
	if !ok {
		return paymock.EventRecord{}, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	if rounds(rec) >= MaxRoundsPerEvent {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: redeliver %s: %w: %w", eventID, roundLimit(), paymock.ErrLimitReached)
	}
	first, err := d.box.Round(ctx, merchantID, eventID, 1)
	if err != nil {
		return paymock.EventRecord{}, err
	}
	slots := make([]endpointSlot, 0, len(first))
	oneShot := false
	for _, del := range first {
		ep, err := d.endpoint(paymock.WebhookEndpoint{ID: del.EndpointID, URL: del.URL, Secret: del.Secret})
		slots = append(slots, endpointSlot{ep: ep, err: err})
		oneShot = oneShot || del.OneShot
	}
	r, err := d.prepareSlots(ctx, merchantID, rec.Type, slots, oneShot)
	if err != nil {
		return paymock.EventRecord{}, err
	}
	o := r.Outgoing(paymock.Event{ID: eventID, Type: rec.Type, MerchantID: merchantID,
		Payment: paymock.Payment{ID: rec.PaymentID}, Body: rec.Payload})
	ids, err := d.box.AddRound(ctx, merchantID, eventID, o.Deliveries, d.maxPending)
	if errors.Is(err, paymock.ErrLimitReached) {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: redeliver %s: %w: %w", eventID, d.pendingLimit(), err)
	}
	if err != nil {
		return paymock.EventRecord{}, err
	}
	d.log.DebugContext(ctx, "webhook event redelivered", "merchant", merchantID, "event", eventID)
	d.Stored(merchantID, o, ids)
	rec, ok, err = d.box.Event(ctx, merchantID, eventID)
	if err == nil && !ok {
		err = fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	return rec, err
}

// MaxRoundsPerEvent is how many rounds an event is sent in: its first and
// 99 redeliveries. The pending cap leaves a redelivery to an endpoint that
// answers at once room every time, and an event keeps every round it was
// sent in, so without it one event's record (and its page of events)
// would grow for as long as a client redelivers it.
const MaxRoundsPerEvent = 100

// rounds is how many rounds rec was sent in.
func rounds(rec paymock.EventRecord) int {
	n := 0
	for _, del := range rec.Deliveries {
		n = max(n, del.Round)
	}
	return n
}

// roundLimit is the refusal of a redelivery past MaxRoundsPerEvent.
func roundLimit() *paymock.Error {
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "delivery_limit",
		Message: fmt.Sprintf("an event is sent in at most %d rounds (its first and %d redeliveries), and this one has been; "+
			"a new event of the payment, or POST /_sandbox/reset, starts again", MaxRoundsPerEvent, MaxRoundsPerEvent-1)}
}

// pendingLimit is the refusal of a redelivery past MaxPendingForRedeliver,
// shaped like the other caps (payment_limit, endpoint_limit) and held here,
// beside the limit, so that the control API and the dashboard say the
// same.
func (d *Dispatcher) pendingLimit() *paymock.Error {
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "delivery_limit",
		Message: fmt.Sprintf("redelivery stops at %d webhook deliveries pending per merchant, and this merchant has that many; "+
			"wait for them to be delivered or to fail (on a frozen clock, advance it), "+
			"or POST /_sandbox/reset (it forgets this merchant's payments, events, schedule and clock)", d.maxPending)}
}
