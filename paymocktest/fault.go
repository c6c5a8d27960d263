// Fault: a fault rule in Go terms, turned into the control API's rule.

package paymocktest

import (
	"fmt"
	"time"

	"github.com/paymock/paymock/faults"
)

// Fault is a fault rule for Inject, as POST /_sandbox/faults takes it.
// An API fault needs at least one of Status, Delay and Reset; a webhook
// fault (Target "webhooks") one of Duplicate, BadSignature, TimestampSkew,
// Delay, Reorder, UnknownType and ExtraFields.
type Fault struct {
	// Target is "api" (the default) or "webhooks".
	Target string
	// Operation is the API operation: createPayment, listPayments,
	// retrievePayment, or "*" (the default) for all.
	Operation string
	// Status answers with 429, 500, 502, 503 or 504.
	Status int
	// RetryAfter is the Retry-After of a 429, in whole seconds.
	RetryAfter time.Duration
	// Delay holds the answer, or the delivery, this long (whole ms).
	Delay time.Duration
	// Reset closes the connection with no answer.
	Reset bool
	// When is "before" (the default: the call is not carried out) or
	// "after" (carried out, then its answer lost: the client must
	// reconcile).
	When string

	// EventType limits a webhook fault to one event type; "" means any.
	EventType string
	// Duplicate sends the delivery this many times, with one webhook-id.
	Duplicate int
	// BadSignature signs the delivery with a wrong secret.
	BadSignature bool
	// TimestampSkew moves webhook-timestamp this far off (whole seconds).
	TimestampSkew time.Duration
	// Reorder sends deliveries due within Window (default 1s) newest first.
	Reorder bool
	Window  time.Duration
	// UnknownType sends a message of type payment.paymock_unknown, with a
	// webhook-id of its own and signed correctly, before the delivery.
	UnknownType bool
	// ExtraFields adds paymock_extra at the top of the payload and inside
	// its data, signed correctly.
	ExtraFields bool

	// Times is how many matches the rule fires for; 0 means until removed.
	Times int
	// Probability that a match fires, above 0 and at most 1; 0 means 1.
	Probability float64
}

// rule converts f into the control API's rule. The sandbox validates the
// rule itself; this only refuses durations the API cannot carry.
func (f Fault) rule() (faults.Rule, error) {
	r := faults.Rule{
		Target: faults.Target(f.Target), Operation: f.Operation, Status: f.Status, Reset: f.Reset,
		When: faults.When(f.When), EventType: f.EventType, Duplicate: f.Duplicate,
		BadSignature: f.BadSignature, Reorder: f.Reorder, UnknownType: f.UnknownType, ExtraFields: f.ExtraFields,
	}
	var err error
	if r.RetryAfter, err = whole("RetryAfter", f.RetryAfter, time.Second, "seconds"); err != nil {
		return r, err
	}
	if r.DelayMS, err = whole("Delay", f.Delay, time.Millisecond, "milliseconds"); err != nil {
		return r, err
	}
	if r.TimestampSkewS, err = whole("TimestampSkew", f.TimestampSkew, time.Second, "seconds"); err != nil {
		return r, err
	}
	if r.WindowMS, err = whole("Window", f.Window, time.Millisecond, "milliseconds"); err != nil {
		return r, err
	}
	if f.Times != 0 {
		n := f.Times
		r.Times = &n
	}
	if f.Probability != 0 {
		p := f.Probability
		r.Probability = &p
	}
	return r, nil
}

// whole is d in units, refusing a remainder the API would have to drop.
func whole(name string, d, unit time.Duration, unitName string) (int, error) {
	if d%unit != 0 {
		return 0, fmt.Errorf("fault %s %v: the API counts whole %s; round it, e.g. to %v", name, d, unitName, d.Round(unit))
	}
	return int(d / unit), nil
}
