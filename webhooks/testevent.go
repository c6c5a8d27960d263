// The test event: a signed "webhook.test" event sent to one endpoint on
// request, for the dashboard's "send test event" and the control API.

package webhooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymock/paymock"
)

// EventTest is the type of the event SendTest sends. It is not a payment
// event: its data names the endpoint and carries a message.
const EventTest paymock.EventType = "webhook.test"

// TestEventMessage is the message in every test event's data.
const TestEventMessage = "A test event from paymock: if your endpoint verified this signature, it is ready for payment events."

// testEventData is the "data" of a test event.
type testEventData struct {
	EndpointID string `json:"endpoint_id"`
	Message    string `json:"message"`
}

// SendTest sends a test event to ep on behalf of m (see the package doc):
// it stores the event in m's journal, makes one delivery with a single
// attempt, and waits until that attempt has been made or ctx is done. It
// returns the event's record as it then stands: delivered or failed, or
// still pending when ctx ended first or a fault's delay or a reorder window
// holds it (its attempt is then made later, and shows in the journal).
//
// An endpoint that is not an absolute http(s) URL with a "whsec_" secret
// is an error and nothing is stored. After Close the error is ErrClosed
// and nothing is stored.
func (d *Dispatcher) SendTest(ctx context.Context, m *paymock.Merchant, ep paymock.WebhookEndpoint) (paymock.EventRecord, error) {
	if m == nil || m.ID == "" {
		return paymock.EventRecord{}, errors.New("webhooks: send test event: no merchant")
	}
	e, err := parseEndpoint(ep)
	if err != nil {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	if d.isClosed() {
		return paymock.EventRecord{}, ErrClosed
	}
	created := d.clock.Now(ctx, m.ID).UTC().Truncate(time.Second)
	id, err := d.ids.New(ctx, m, "evt")
	if err != nil {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	body, err := paymock.EncodeJSON(struct {
		ID        string            `json:"id"`
		Type      paymock.EventType `json:"type"`
		CreatedAt string            `json:"created_at"`
		Data      testEventData     `json:"data"`
	}{id, EventTest, paymock.FormatTime(created), testEventData{EndpointID: ep.ID, Message: TestEventMessage}})
	if err != nil {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	ev := paymock.Event{ID: id, Type: EventTest, MerchantID: m.ID, CreatedAt: created, Body: body}
	r, err := d.prepareSlots(ctx, m.ID, ev.Type, []endpointSlot{{ep: e}}, true)
	if err != nil {
		return paymock.EventRecord{}, err
	}
	o := r.Outgoing(ev)
	ids, err := d.box.AddEvent(ctx, o)
	if err != nil {
		return paymock.EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	d.log.DebugContext(ctx, "webhook test event", "merchant", m.ID, "event", ev.ID, "endpoint", ep.ID, "url", e.display)
	d.countCreated(o.Deliveries)
	d.trim(m.ID)
	if del := o.Deliveries[0]; del.State == paymock.DeliveryPending && del.NextAt.After(d.clock.Now(ctx, m.ID)) {
		// A fault's delay or a reorder window holds it: a timer sends it.
		d.timerAt(m.ID, del.NextAt)
	} else {
		// Sent here, in its own goroutine so that ctx can end the wait;
		// the send goes on, and shows in the journal. A send still
		// waiting for a slot when ctx ends is left to the merchant's
		// senders, so that callers who gave up hold no goroutine each.
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			d.sendInline(ctx, m.ID, ids)
		}()
		select {
		case <-sent:
		case <-ctx.Done():
		}
	}
	rec, ok, err := d.box.Event(context.WithoutCancel(ctx), m.ID, ev.ID)
	if err == nil && !ok {
		err = errors.New("webhooks: the test event is gone (the merchant was reset)")
	}
	return rec, err
}
