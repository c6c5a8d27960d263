// The outbox: where events and deliveries live when every replica must
// see them, and what a delivery carries so that any replica can attempt it.

package webhooks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paymock/paymock"
)

// Outbox keeps events and their deliveries where every replica sees them
// (package postgres implements it on the database). With Config.Outbox
// set, the Dispatcher keeps no journal of its own: each delivery is a row
// any replica may claim, for a lease, when it is due and heads its chain
// (deliveries of one payment to one endpoint go in order); the replica
// that claims it attempts it once and records the outcome, which ends the
// claim. A replica that dies holding a claim leaves the delivery to
// another once the lease has run out.
type Outbox interface {
	// AddEvent stores an event with its first round of deliveries and
	// returns the deliveries' ids, in order. An event id already stored
	// is an error.
	AddEvent(ctx context.Context, o Outgoing) ([]int64, error)
	// AddRound stores another round of an event's deliveries (their Round
	// is set to the event's next) and returns their ids; an unknown event
	// is an error wrapping paymock.ErrNotFound.
	AddRound(ctx context.Context, merchantID, eventID string, dels []Delivery) ([]int64, error)
	// Round lists the deliveries of one round of an event, in endpoint
	// order; an unknown event is an error wrapping paymock.ErrNotFound.
	Round(ctx context.Context, merchantID, eventID string, round int) ([]Delivery, error)
	// Claim claims pending deliveries due, unclaimed (or whose lease ran
	// out) and heading their chain, earliest first, for c.Lease.
	Claim(ctx context.Context, c Claim) ([]Delivery, error)
	// DueDeliveries lists one merchant's pending deliveries due by until on its
	// clock, earliest first, without claiming them: an advance of a
	// frozen clock registers them with its scheduler.
	DueDeliveries(ctx context.Context, merchantID string, until time.Time, limit int) ([]Delivery, error)
	// Attempted records the attempts of a claimed delivery and where it
	// now stands, and ends the claim. A claim that has lapsed and been
	// taken by another replica records nothing, and is not an error.
	Attempted(ctx context.Context, del Delivery, u Outcome) error
	// Release ends a claim without an attempt recorded.
	Release(ctx context.Context, del Delivery) error
	// Window tells when the reorder window open at now (merchant clock)
	// on one of the merchant's endpoints closes, and the fault that opened
	// it; a nil fault when none is open.
	Window(ctx context.Context, merchantID, url string, now time.Time) (time.Time, *Fault, error)
	// Events, Event and EndpointDeliveries read the journal as the
	// Dispatcher's methods of the same names describe.
	Events(ctx context.Context, merchantID string, offset, limit int) ([]EventRecord, int, error)
	Event(ctx context.Context, merchantID, eventID string) (EventRecord, bool, error)
	EndpointDeliveries(ctx context.Context, merchantID, endpointID string, offset, limit int) ([]EndpointDeliveryRecord, int, error)
	// Claimed reports whether a delivery of the merchant is claimed, by
	// any replica, with a lease still running at now (real time).
	Claimed(ctx context.Context, merchantID string, now time.Time) (bool, error)
	// Pending reports whether any delivery of the merchant is pending.
	Pending(ctx context.Context, merchantID string) (bool, error)
	// ResetEvents forgets a merchant's events and deliveries.
	ResetEvents(ctx context.Context, merchantID string) error
	// TrimEvents forgets the merchant's events older than its newest
	// keep, except those with a delivery still pending.
	TrimEvents(ctx context.Context, merchantID string, keep int) error
}

// Outgoing is an event ready to be stored with its first round of
// deliveries.
type Outgoing struct {
	Event      paymock.Event
	OneShot    bool // a test event: one attempt per delivery, no retries
	Deliveries []Delivery
}

// Delivery is one delivery as an Outbox keeps it: with its event's type,
// body and the endpoint's secret, whatever replica attempts it needs.
type Delivery struct {
	ID         int64 // assigned by the outbox
	MerchantID string
	EventID    string
	EventType  paymock.EventType
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
	State    State
	Error    string
	Attempts []AttemptRecord
	Sends    int       // sends made; a duplicated send is one
	NextAt   time.Time // when it is due, merchant clock; zero once final
	Fault    *Fault    // shapes the first send; nil for none
	// Window is the fault of the reorder window holding the delivery,
	// which sends what it holds newest first; nil for none.
	Window   *Fault
	OneShot  bool // no retries
	Position int  // the endpoint's place in its round
	// ClaimedUntil is when the claim that returned it lapses: what tells
	// this claim from a later one of the same delivery.
	ClaimedUntil time.Time
}

// Claim says which deliveries to claim. With IDs, those of them due by
// Until on MerchantID's clock; with MerchantID alone, that merchant's
// due by Until; with neither, every real-clock merchant's due by Now plus
// its stored clock offset (Base when it has none).
type Claim struct {
	IDs        []int64
	MerchantID string
	Until      time.Time
	Now        time.Time // real time: leases are measured on it
	Base       time.Duration
	Lease      time.Duration
	Limit      int
}

// Outcome is what one send of a claimed delivery came to.
type Outcome struct {
	Attempts []AttemptRecord // appended to the delivery's
	Sends    int
	State    State
	Error    string
	NextAt   time.Time // pending: when the next send is due (merchant clock)
}
