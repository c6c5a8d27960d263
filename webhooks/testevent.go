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
// it records the event in m's journal, makes one delivery with a single
// attempt, and waits until that attempt has been made or ctx is done. It
// returns the event's record as it then stands: delivered or failed, or
// still pending when ctx ended first or a fault's delay or a reorder window
// holds it (its attempt is then made later, and shows in the journal).
//
// An endpoint that is not an absolute http(s) URL with a "whsec_" secret
// is an error and nothing is recorded. A full queue is handled as in
// Publish; after Close the event is recorded as interrupted and the error
// is ErrClosed.
func (d *Dispatcher) SendTest(ctx context.Context, m *paymock.Merchant, ep paymock.WebhookEndpoint) (EventRecord, error) {
	if m == nil || m.ID == "" {
		return EventRecord{}, errors.New("webhooks: send test event: no merchant")
	}
	e, err := parseEndpoint(ep)
	if err != nil {
		return EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	created := d.clock.Now(m.ID).UTC().Truncate(time.Second)
	id := d.ids.New("evt")
	body, err := paymock.EncodeJSON(struct {
		ID        string            `json:"id"`
		Type      paymock.EventType `json:"type"`
		CreatedAt string            `json:"created_at"`
		Data      testEventData     `json:"data"`
	}{id, EventTest, paymock.FormatTime(created), testEventData{EndpointID: ep.ID, Message: TestEventMessage}})
	if err != nil {
		return EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	ev := paymock.Event{ID: id, Type: EventTest, MerchantID: m.ID, CreatedAt: created, Body: body}
	if d.out != nil {
		return d.sendTestDurable(ctx, m, ev, endpointSlot{ep: e})
	}
	slots := []endpointSlot{{ep: e}}
	faults, now := d.matchFaults(m.ID, EventTest, slots)

	d.mu.Lock()
	ms := d.merchantLocked(m.ID)
	entry := &eventEntry{j: ms.j, ev: ev, endpoints: slots, oneShot: true}
	ms.j.events = append(ms.j.events, entry)
	ms.j.byID[ev.ID] = entry
	ms.j.trimLocked(d.maxEvents)
	closed := d.closed
	d.startLocked()
	next := d.newRoundLocked(ms, entry, faults, now)
	var attempted chan struct{}
	if len(next.jobs) == 1 {
		attempted = make(chan struct{})
		next.jobs[0].del.attempted = attempted
	}
	d.mu.Unlock()

	d.log.DebugContext(ctx, "webhook test event", "merchant", m.ID, "event", ev.ID, "endpoint", ep.ID, "url", e.display)
	d.schedule(ms.id, next.timers)
	if closed {
		err = ErrClosed
	} else {
		err = d.sendWaiting(ctx, next.jobs)
	}
	if err == nil && attempted != nil {
		select {
		case <-attempted:
		case <-ctx.Done():
		case <-d.stop:
		}
	}
	d.mu.Lock()
	rec := recordLocked(entry)
	d.mu.Unlock()
	return rec, err
}
