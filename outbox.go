// The event outbox: events and their webhook deliveries kept as records
// that any sender (a goroutine, a replica) claims when due, and the
// journal records the control API and the dashboard read from it.

package paymock

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// Outbox keeps events and their deliveries (package memory holds them in
// the process, package postgres in the database every replica shares).
// Each delivery is a record that a sender claims, for a lease, when it is
// due on its merchant's clock and heads its chain (deliveries of one
// payment to one endpoint go in order); the sender attempts it once and
// records the outcome, which ends the claim. A sender that dies holding a
// claim leaves the delivery to another once the lease has run out.
type Outbox interface {
	// AddEvent stores an event with its first round of deliveries and
	// returns the deliveries' ids, in order. An event id already stored
	// for the merchant is an error.
	AddEvent(ctx context.Context, o Outgoing) ([]int64, error)
	// AddRound stores another round of an event's deliveries (their Round
	// is the event's next) and returns their ids; an unknown event is an
	// error wrapping ErrNotFound. When limit > 0 and the merchant already
	// has limit deliveries pending or more (of any event and round), it
	// stores nothing and wraps ErrLimitReached (a shared database may let
	// concurrent rounds of different events pass it by a few: see the
	// implementation). A round let in below the limit is stored whole, so
	// it may take the merchant past it by its own size.
	AddRound(ctx context.Context, merchantID, eventID string, dels []Delivery, limit int) ([]int64, error)
	// Round lists the deliveries of one round of an event, in endpoint
	// order; an unknown event is an error wrapping ErrNotFound.
	Round(ctx context.Context, merchantID, eventID string, round int) ([]Delivery, error)
	// Claim claims, for c.Lease, at most c.Limit of the merchant's
	// pending deliveries that are due by c.Until, unclaimed (or whose
	// lease ran out by c.Now) and heading their chain, in due order (see
	// Delivery). Of the deliveries a reorder window holds and that were
	// never sent, to one endpoint, one at a time is claimed, so that a
	// window's deliveries go one after the other, newest first.
	Claim(ctx context.Context, c Claim) ([]Delivery, error)
	// DueDeliveries lists the merchant's pending deliveries heading their
	// chain and due by until on its clock, in due order, without claiming
	// them: an advance of a frozen clock schedules them.
	DueDeliveries(ctx context.Context, merchantID string, until time.Time, limit int) ([]Delivery, error)
	// DueMerchants names at most limit merchants on real clocks with a
	// delivery due by now (real time) plus their clock's offset: base
	// when the outbox keeps no offset for them. The sweep claims their
	// deliveries, which no timer of the running process may bring.
	DueMerchants(ctx context.Context, now time.Time, base time.Duration, limit int) ([]string, error)
	// Attempted records the attempts of a claimed delivery and where it
	// now stands, and ends the claim. A claim that has lapsed and been
	// taken again, or a delivery reset meanwhile, records nothing and is
	// not an error.
	Attempted(ctx context.Context, del Delivery, u Outcome) error
	// Release ends a claim without an attempt recorded.
	Release(ctx context.Context, del Delivery) error
	// Window tells when the reorder window open at now (merchant clock) on
	// the merchant's endpoint url closes, and the fault that opened it; a
	// nil fault when none is open.
	Window(ctx context.Context, merchantID, url string, now time.Time) (time.Time, *WebhookFault, error)
	// Events lists the merchant's events, newest first, from offset, at
	// most limit (limit <= 0: all), with the total count.
	Events(ctx context.Context, merchantID string, offset, limit int) ([]EventRecord, int, error)
	// Event returns one of the merchant's events; false when unknown.
	Event(ctx context.Context, merchantID, eventID string) (EventRecord, bool, error)
	// EndpointDeliveries lists the deliveries to one endpoint, by its id,
	// newest event first and within an event the latest round first, from
	// offset, at most limit (limit <= 0: all), with the total count.
	EndpointDeliveries(ctx context.Context, merchantID, endpointID string, offset, limit int) ([]EndpointDeliveryRecord, int, error)
	// Claimed reports whether a pending delivery of the merchant is
	// claimed with a lease still running at now (real time).
	Claimed(ctx context.Context, merchantID string, now time.Time) (bool, error)
	// Pending reports whether any delivery of the merchant is pending.
	Pending(ctx context.Context, merchantID string) (bool, error)
	// ResetEvents forgets a merchant's events and deliveries.
	ResetEvents(ctx context.Context, merchantID string) error
	// TrimEvents forgets the merchant's events older than the newest it
	// keeps, with their deliveries, except those with a delivery still
	// pending (claimed or not). It keeps the newest events while they
	// number at most keep.Events and hold at most keep.Deliveries
	// deliveries between them, every round's; the newest event always.
	TrimEvents(ctx context.Context, merchantID string, keep KeepEvents) error
}

// KeepEvents is what a trim of a merchant's event journal keeps at least
// (Outbox.TrimEvents); both bounds must be positive. Events alone would
// not bound the journal: each redelivery adds a round to an event, so
// the deliveries it holds are bounded too.
type KeepEvents struct {
	Events     int
	Deliveries int
}

// EventStore keeps a payment's transition and the event it makes in one
// step, so that neither exists without the other, even when the process
// is killed between the two.
type EventStore interface {
	// UpdateWithEvent is Store.Update that also stores the Outgoing event
	// makes of the updated payment, with its deliveries, and returns it
	// with the deliveries' ids. When fn or event fails, or the event
	// cannot be stored, nothing is changed.
	UpdateWithEvent(ctx context.Context, merchantID, id string, fn func(*Payment) error,
		event func(Payment) (Outgoing, error)) (Payment, Outgoing, []int64, error)
}

// Outgoing is an event ready to be stored with its first round of
// deliveries.
type Outgoing struct {
	Event      Event
	OneShot    bool // a test event: one attempt per delivery, no retries
	Deliveries []Delivery
}

// Delivery is one delivery as an Outbox keeps it: with its event's type
// and body and the endpoint's secret, all a sender needs.
//
// Due order, in which Claim and DueDeliveries list deliveries: by NextAt,
// then in the order they were made (by ID), except that deliveries a
// reorder window holds go newest first.
type Delivery struct {
	ID         int64 // assigned by the outbox
	MerchantID string
	EventID    string
	EventType  EventType
	PaymentID  string
	Body       json.RawMessage // the event as signed and sent
	Round      int
	EndpointID string
	URL        string
	Secret     string
	// Chain orders the deliveries of one payment to one endpoint: of
	// those pending with the same chain, only the first is ever claimed.
	// "" keeps no order (a test event).
	Chain    string
	State    DeliveryState
	Error    string
	Attempts []AttemptRecord
	Sends    int           // sends made; a duplicated send is one
	NextAt   time.Time     // when it is due, merchant clock; zero once final
	Fault    *WebhookFault // shapes the first send; nil for none
	// Window is the fault of the reorder window holding the delivery;
	// nil for none.
	Window   *WebhookFault
	OneShot  bool // no retries
	Position int  // the endpoint's place in its round
	// ClaimedUntil is when the claim that returned it lapses: what tells
	// this claim from a later one of the same delivery.
	ClaimedUntil time.Time
}

// Record is the delivery as the journal shows it: never its secret, nor a
// password in its URL.
func (d Delivery) Record() DeliveryRecord {
	r := DeliveryRecord{Round: d.Round, EndpointID: d.EndpointID, URL: d.URL, State: d.State,
		Error: d.Error, Attempts: d.Attempts}
	if u, err := url.Parse(d.URL); err == nil {
		r.URL = u.Redacted()
	}
	if r.Attempts == nil {
		r.Attempts = []AttemptRecord{}
	}
	// A time shows while a retry, a fault's delay or a reorder window
	// holds the delivery; not while its first send is simply due.
	held := d.Sends > 0 || d.Window != nil || d.Fault != nil && d.Fault.Delay > 0
	if d.State == DeliveryPending && held {
		r.NextAttemptAt = FormatTime(d.NextAt)
	}
	return r
}

// Claim says which of a merchant's deliveries to claim: with IDs, only
// those of them.
type Claim struct {
	MerchantID string
	IDs        []int64
	Until      time.Time // merchant clock: what is due by then
	Now        time.Time // real time: leases are measured on it
	Lease      time.Duration
	Limit      int
}

// Outcome is what one send of a claimed delivery came to.
type Outcome struct {
	Attempts []AttemptRecord // appended to the delivery's
	Sends    int
	State    DeliveryState
	Error    string
	NextAt   time.Time // pending: when the next send is due (merchant clock)
}

// DeliveryState is where one delivery stands.
type DeliveryState string

// The delivery states. Pending is the only one that can still change.
const (
	// DeliveryPending: due, being sent, waiting for a retry, a fault's
	// delay or a reorder window, or waiting behind an earlier delivery of
	// the same payment to the same endpoint.
	DeliveryPending DeliveryState = "pending"
	// DeliveryDelivered: an attempt got a 2xx answer.
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryFailed: every attempt of the schedule failed, the endpoint
	// answered 410 Gone, or the endpoint is not valid.
	DeliveryFailed DeliveryState = "failed"
	// DeliveryInterrupted: a record of an older journal; no delivery ends
	// so today (Close leaves deliveries pending).
	DeliveryInterrupted DeliveryState = "interrupted"
)

// WebhookFault is what a matched webhook fault rule does to the first send
// of one delivery. Several effects may be set together; zero fields do
// nothing. An Outbox stores it with the delivery (as JSON, by these field
// names).
type WebhookFault struct {
	// RuleID names the rule in the journal ("flt_...").
	RuleID string
	// Duplicate sends the first send this many times in all, one after the
	// other, with the same webhook-id; each copy verifies.
	Duplicate int
	// BadSignature signs with a wrong key, so verification fails.
	BadSignature bool
	// TimestampSkew moves webhook-timestamp this far from real time; the
	// signature is computed over the moved value, so only a receiver's
	// tolerance check fails.
	TimestampSkew time.Duration
	// Delay holds the first send this long on the merchant's clock.
	Delay time.Duration
	// Reorder opens a reorder window of Window on the endpoint: deliveries
	// to it that fall due while it is open are sent newest first when it
	// closes.
	Reorder bool
	Window  time.Duration
	// UnknownType sends, just before the first send, one more message: the
	// event with type FaultUnknownEventType and an id of its own (so its
	// own webhook-id), correctly signed. Its answer is recorded but decides
	// nothing: the real message still follows, so a receiver that ignores
	// the unknown type loses no event.
	UnknownType bool
	// ExtraFields adds FaultExtraField to the first send's payload, at the
	// top and inside data, and signs the enlarged payload.
	ExtraFields bool
}

// FaultUnknownEventType is the type of an UnknownType fault's message: in
// the payment namespace, so a receiver that routes on the prefix is
// rehearsed too, and named for paymock, so no real event type ever takes
// it.
const FaultUnknownEventType EventType = "payment.paymock_unknown"

// FaultExtraField is the field an ExtraFields fault adds at the top of the
// payload and inside its data: no field of the contract's events or
// payments starts with "paymock_", now or later.
const FaultExtraField = "paymock_extra"

// EventRecord is one event of the journal with its deliveries, as the
// control API serves it (GET /_sandbox/events). Records are copies: they
// do not change when deliveries go on.
//
// Payload is the event body exactly as every attempt sent it (and as it was
// signed): {"id","type","created_at","data"}, with the payment under
// "data". Only an attempt an unknown_type or extra_fields fault shaped
// sent other bytes, and its fault record says how.
type EventRecord struct {
	ID         string           `json:"id"`
	Type       EventType        `json:"type"`
	CreatedAt  string           `json:"created_at"` // merchant clock, FormatTime
	PaymentID  string           `json:"payment_id"`
	Payload    json.RawMessage  `json:"payload"`
	Deliveries []DeliveryRecord `json:"deliveries"` // never null; empty when no endpoint was configured
}

// DeliveryRecord is the sending of one event to one endpoint. Publishing
// makes round 1, one delivery per endpoint; each redelivery adds a round.
type DeliveryRecord struct {
	Round int `json:"round"`
	// EndpointID is the endpoint's "we_..." id; absent for an endpoint
	// given without one (default endpoints, or m.Webhooks in tests).
	EndpointID string        `json:"endpoint_id,omitempty"`
	URL        string        `json:"url"` // the endpoint URL, any password redacted; never the secret
	State      DeliveryState `json:"state"`
	// Error says why a failed delivery ended, including one that ended
	// before any attempt.
	Error    string          `json:"error,omitempty"`
	Attempts []AttemptRecord `json:"attempts"` // never null
	// NextAttemptAt is set while a retry, a fault's delay or a reorder
	// window holds the delivery (merchant clock).
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
	Fault *WebhookFaultRecord `json:"fault,omitempty"`
}

// WebhookFaultRecord is how the journal shows the fault that shaped an
// attempt. Its effect fields are named as in the rule (POST
// /_sandbox/faults).
type WebhookFaultRecord struct {
	RuleID string `json:"rule_id"`
	// Effect says in plain words what was done to this attempt.
	Effect string `json:"effect"`
	// Duplicate is how many copies of the send went out; Copy is which one
	// this attempt is, from 1.
	Duplicate      int   `json:"duplicate,omitempty"`
	Copy           int   `json:"copy,omitempty"`
	BadSignature   bool  `json:"bad_signature,omitempty"`
	TimestampSkewS int64 `json:"timestamp_skew_s,omitempty"`
	DelayMS        int64 `json:"delay_ms,omitempty"`
	Reorder        bool  `json:"reorder,omitempty"`
	WindowMS       int64 `json:"window_ms,omitempty"`
	// UnknownType marks the attempt that sent the unknown-type message;
	// WebhookID is that message's webhook-id (not the event's).
	UnknownType bool   `json:"unknown_type,omitempty"`
	WebhookID   string `json:"webhook_id,omitempty"`
	// ExtraFields marks an attempt whose payload carried FaultExtraField.
	ExtraFields bool `json:"extra_fields,omitempty"`
	// Sent is this delivery's place in its reorder window's sending order
	// (1 went first) of Held deliveries the window held; both absent when
	// the count was not kept.
	Sent int `json:"sent,omitempty"`
	Held int `json:"held,omitempty"`
}

// EndpointDeliveryRecord is a delivery as one endpoint's list shows it:
// with the event it carried.
type EndpointDeliveryRecord struct {
	EventID   string    `json:"event_id"`
	EventType EventType `json:"event_type"`
	PaymentID string    `json:"payment_id"` // empty for a test event
	DeliveryRecord
}
