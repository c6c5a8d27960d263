// The journal as callers see it: event, delivery and attempt records, and
// their listings per merchant and per endpoint.

package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/paymock/paymock"
)

// State is where one delivery stands.
type State string

// The delivery states. pending is the only one that can still change.
const (
	// StatePending: queued, in flight, waiting for a scheduled retry, or
	// waiting behind an earlier delivery of the same payment to the same
	// endpoint.
	StatePending State = "pending"
	// StateDelivered: an attempt got a 2xx answer.
	StateDelivered State = "delivered"
	// StateFailed: every attempt of the schedule failed, the endpoint
	// answered 410 Gone, or the endpoint is not valid.
	StateFailed State = "failed"
	// StateInterrupted: the delivery could not go on because the dispatcher
	// closed, or because Publish or Redeliver gave up waiting for room in the
	// queue.
	StateInterrupted State = "interrupted"
)

// EventRecord is one event of the journal with its deliveries, as the
// control API serves it (GET /_sandbox/events). Records are copies: they
// do not change when deliveries go on.
//
// Payload is the event body exactly as every attempt sent it (and as it was
// signed): {"id","type","created_at","data"}, with the payment under
// "data".
type EventRecord struct {
	ID         string            `json:"id"`
	Type       paymock.EventType `json:"type"`
	CreatedAt  string            `json:"created_at"` // merchant clock, paymock.FormatTime
	PaymentID  string            `json:"payment_id"`
	Payload    json.RawMessage   `json:"payload"`
	Deliveries []DeliveryRecord  `json:"deliveries"` // never null; empty when no endpoint was configured
}

// DeliveryRecord is the sending of one event to one endpoint. Publish makes
// round 1, one delivery per endpoint; each Redeliver adds a round.
type DeliveryRecord struct {
	Round int `json:"round"`
	// EndpointID is the endpoint's "we_..." id; absent for an endpoint
	// given without one (DefaultEndpoints or m.Webhooks in tests).
	EndpointID string `json:"endpoint_id,omitempty"`
	URL        string `json:"url"` // the endpoint URL, any password redacted; never the secret
	State      State  `json:"state"`
	// Error says why a failed or interrupted delivery ended, including
	// those that ended before any attempt.
	Error    string          `json:"error,omitempty"`
	Attempts []AttemptRecord `json:"attempts"` // never null
	// NextAttemptAt is set while a retry is scheduled (merchant clock).
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
}

// AttemptRecord is one POST to an endpoint. The copies of a send that a
// Duplicate fault multiplied share its attempt number, one record each.
type AttemptRecord struct {
	Attempt    int    `json:"attempt"`               // 1-based, per delivery
	At         string `json:"at"`                    // merchant clock when the attempt started
	StatusCode int    `json:"status_code,omitempty"` // absent when no answer came
	Error      string `json:"error,omitempty"`       // absent on a 2xx
	DurationMS int64  `json:"duration_ms"`           // real time the attempt took
	// Fault is the fault that shaped this attempt; absent for a plain one.
	Fault *FaultRecord `json:"fault,omitempty"`
}

// attempt is the journal's form of an AttemptRecord.
type attempt struct {
	n      int
	at     time.Time
	status int
	err    string
	dur    time.Duration
	fault  *FaultRecord // never changed once made
}

// recordLocked copies an entry into its record. d.mu must be held.
func recordLocked(e *eventEntry) EventRecord {
	r := EventRecord{
		ID:         e.ev.ID,
		Type:       e.ev.Type,
		CreatedAt:  paymock.FormatTime(e.ev.CreatedAt),
		PaymentID:  e.ev.Payment.ID,
		Payload:    json.RawMessage(bytes.Clone(e.ev.Body)),
		Deliveries: make([]DeliveryRecord, 0, len(e.deliveries)),
	}
	for _, del := range e.deliveries {
		r.Deliveries = append(r.Deliveries, deliveryRecordLocked(del))
	}
	return r
}

// deliveryRecordLocked copies a delivery into its record. d.mu must be held.
func deliveryRecordLocked(del *delivery) DeliveryRecord {
	dr := DeliveryRecord{
		Round:      del.round,
		EndpointID: del.ep.id,
		URL:        del.ep.display,
		State:      del.state,
		Error:      del.err,
		Attempts:   make([]AttemptRecord, 0, len(del.attempts)),
	}
	if del.waiting {
		dr.NextAttemptAt = paymock.FormatTime(del.nextAt)
	}
	for _, a := range del.attempts {
		ar := AttemptRecord{
			Attempt:    a.n,
			At:         paymock.FormatTime(a.at),
			StatusCode: a.status,
			Error:      a.err,
			DurationMS: a.dur.Milliseconds(),
		}
		if a.fault != nil {
			f := *a.fault
			ar.Fault = &f
		}
		dr.Attempts = append(dr.Attempts, ar)
	}
	return dr
}

// EndpointDeliveryRecord is a delivery as one endpoint's list shows it:
// with the event it carried.
type EndpointDeliveryRecord struct {
	EventID   string            `json:"event_id"`
	EventType paymock.EventType `json:"event_type"`
	PaymentID string            `json:"payment_id"` // empty for a test event
	DeliveryRecord
}

// EndpointDeliveries lists the deliveries of a merchant's events to one
// endpoint, by its id, newest first (latest event first, and within an
// event the latest round first), from offset, at most limit of them
// (limit <= 0: all), with the total count. The list covers the events the
// journal still holds; an unknown endpoint, or another merchant's, has
// none.
func (d *Dispatcher) EndpointDeliveries(merchantID, endpointID string, offset, limit int) ([]EndpointDeliveryRecord, int) {
	out, total, err := d.EndpointDeliveriesContext(context.Background(), merchantID, endpointID, offset, limit)
	if err != nil {
		d.log.Warn("endpoint deliveries not read", "merchant", merchantID, "endpoint", endpointID, "error", err)
	}
	return out, total
}

// EndpointDeliveriesContext is EndpointDeliveries, with the error of an
// Outbox that could not be read (without one it never fails).
func (d *Dispatcher) EndpointDeliveriesContext(ctx context.Context, merchantID, endpointID string, offset, limit int) ([]EndpointDeliveryRecord, int, error) {
	if d.out != nil && endpointID != "" {
		recs, total, err := d.out.box.EndpointDeliveries(ctx, merchantID, endpointID, max(offset, 0), limit)
		if err != nil {
			return []EndpointDeliveryRecord{}, 0, err
		}
		return recs, total, nil
	}
	out, total := d.endpointDeliveries(merchantID, endpointID, offset, limit)
	return out, total, nil
}

func (d *Dispatcher) endpointDeliveries(merchantID, endpointID string, offset, limit int) ([]EndpointDeliveryRecord, int) {
	out := []EndpointDeliveryRecord{}
	if endpointID == "" {
		return out, 0
	}
	offset = max(offset, 0)
	d.mu.Lock()
	defer d.mu.Unlock()
	ms := d.merchants[merchantID]
	if ms == nil {
		return out, 0
	}
	total := 0
	evs := ms.j.events
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		for k := len(e.deliveries) - 1; k >= 0; k-- {
			del := e.deliveries[k]
			if del.ep.id != endpointID {
				continue
			}
			if total >= offset && (limit <= 0 || len(out) < limit) {
				out = append(out, EndpointDeliveryRecord{EventID: e.ev.ID, EventType: e.ev.Type,
					PaymentID: e.ev.Payment.ID, DeliveryRecord: deliveryRecordLocked(del)})
			}
			total++
		}
	}
	return out, total
}
