package webhooks

import (
	"bytes"
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
	Round int    `json:"round"`
	URL   string `json:"url"` // the endpoint URL, any password redacted; never the secret
	State State  `json:"state"`
	// Error says why a failed or interrupted delivery ended, including
	// those that ended before any attempt.
	Error    string          `json:"error,omitempty"`
	Attempts []AttemptRecord `json:"attempts"` // never null
	// NextAttemptAt is set while a retry is scheduled (merchant clock).
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
}

// AttemptRecord is one POST to an endpoint.
type AttemptRecord struct {
	Attempt    int    `json:"attempt"`               // 1-based, per delivery
	At         string `json:"at"`                    // merchant clock when the attempt started
	StatusCode int    `json:"status_code,omitempty"` // absent when no answer came
	Error      string `json:"error,omitempty"`       // absent on a 2xx
	DurationMS int64  `json:"duration_ms"`           // real time the attempt took
}

// attempt is the journal's form of an AttemptRecord.
type attempt struct {
	n      int
	at     time.Time
	status int
	err    string
	dur    time.Duration
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
		dr := DeliveryRecord{
			Round:    del.round,
			URL:      del.ep.display,
			State:    del.state,
			Error:    del.err,
			Attempts: make([]AttemptRecord, 0, len(del.attempts)),
		}
		if del.waiting {
			dr.NextAttemptAt = paymock.FormatTime(del.nextAt)
		}
		for _, a := range del.attempts {
			dr.Attempts = append(dr.Attempts, AttemptRecord{
				Attempt:    a.n,
				At:         paymock.FormatTime(a.at),
				StatusCode: a.status,
				Error:      a.err,
				DurationMS: a.dur.Milliseconds(),
			})
		}
		r.Deliveries = append(r.Deliveries, dr)
	}
	return r
}
