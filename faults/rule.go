// Fault rules: their fields, defaults, validation and the error answer a
// status fault stands for.

package faults

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// Target says what a rule shapes: API answers or webhook deliveries.
type Target string

// The targets of a rule; an empty target is TargetAPI.
const (
	TargetAPI      Target = "api"
	TargetWebhooks Target = "webhooks"
)

// When says whether an API fault replaces the call or only its answer.
type When string

// The moments of an API fault; an empty When is WhenBefore.
const (
	// WhenBefore: the call is not carried out, nothing changes.
	WhenBefore When = "before"
	// WhenAfter: the call is carried out, then its answer is replaced, so
	// the client must reconcile as after a real timeout.
	WhenAfter When = "after"
)

// Wildcard is the operation of an API rule that matches every operation.
const Wildcard = "*"

// Bounds that keep a rule from tying up the sandbox: a delay holds a
// goroutine, a duplicate multiplies deliveries.
const (
	MaxDelayMS       = 600_000 // 10 minutes
	MaxRetryAfter    = 86_400  // a day, in seconds
	MaxDuplicate     = 10
	MaxWindowMS      = 60_000
	MaxTimestampSkew = 31_536_000 // a year, in seconds
	DefaultWindowMS  = 1000
	// DefaultRetryAfter is the Retry-After of a 429 rule that gives none.
	DefaultRetryAfter = 1
)

// Statuses are the HTTP statuses a fault may answer with; every operation
// of the contract declares them.
func Statuses() []int { return []int{429, 500, 502, 503, 504} }

// DefaultOperations are the contract's operation ids, used when no list is
// given.
func DefaultOperations() []string {
	return []string{"createPayment", "listPayments", "retrievePayment"}
}

// EventTypes are the event types a webhook rule may name.
func EventTypes() []paymock.EventType {
	return []paymock.EventType{paymock.EventCompleted, paymock.EventFailed, paymock.EventExpired}
}

// Rule is one fault: what it matches, what it does, and how often. The
// JSON and YAML names are those of the control API and of rule files.
type Rule struct {
	// ID is assigned when the rule is added ("flt_..."); "header" for a
	// fault asked by the Paymock-Fault header.
	ID string `json:"id,omitempty" yaml:"-"`
	// Source is "api", "header" or the file:line a rule was read from.
	Source string `json:"source,omitempty" yaml:"-"`
	Target Target `json:"target,omitempty" yaml:"target,omitempty"`

	// Operation is an operation id of the contract, or "*" (the default).
	Operation string `json:"operation,omitempty" yaml:"operation,omitempty"`
	// Status is the answer's status: 429, 500, 502, 503 or 504.
	Status int `json:"status,omitempty" yaml:"status,omitempty"`
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int `json:"retry_after,omitempty" yaml:"retry_after,omitempty"`
	// Reset closes the connection with no answer.
	Reset bool `json:"reset,omitempty" yaml:"reset,omitempty"`
	When  When `json:"when,omitempty" yaml:"when,omitempty"`

	// EventType limits a webhook rule to one event type; empty: any.
	EventType string `json:"event_type,omitempty" yaml:"event_type,omitempty"`
	// Duplicate sends the delivery this many times, with one webhook-id.
	Duplicate int `json:"duplicate,omitempty" yaml:"duplicate,omitempty"`
	// BadSignature signs the delivery with a wrong secret.
	BadSignature bool `json:"bad_signature,omitempty" yaml:"bad_signature,omitempty"`
	// TimestampSkewS moves webhook-timestamp this many seconds off.
	TimestampSkewS int `json:"timestamp_skew_s,omitempty" yaml:"timestamp_skew_s,omitempty"`
	// Reorder sends deliveries that fall due within WindowMS newest first.
	Reorder  bool `json:"reorder,omitempty" yaml:"reorder,omitempty"`
	WindowMS int  `json:"window_ms,omitempty" yaml:"window_ms,omitempty"`

	// DelayMS holds an API answer, or a webhook delivery, this long.
	DelayMS int `json:"delay_ms,omitempty" yaml:"delay_ms,omitempty"`

	// Times is how many matches the rule fires for; nil: until removed.
	Times *int `json:"times,omitempty" yaml:"times,omitempty"`
	// Probability that a match fires, 0..1; nil: 1.
	Probability *float64 `json:"probability,omitempty" yaml:"probability,omitempty"`

	// Remaining is how many more times the rule fires; nil with Times.
	Remaining *int `json:"remaining,omitempty" yaml:"-"`
	// Hits counts the times the rule fired.
	Hits int `json:"hits" yaml:"-"`
}

// Delay is DelayMS as a duration.
func (r Rule) Delay() time.Duration { return time.Duration(r.DelayMS) * time.Millisecond }

// Normalize fills the defaults: target api, operation "*", when before,
// probability 1, retry_after 1 with a 429, window_ms 1000 with reorder. It
// copies Times and Probability so the result shares nothing with r.
func (r Rule) Normalize() Rule {
	if r.Target == "" {
		r.Target = TargetAPI
	}
	if r.Times != nil {
		n := *r.Times
		r.Times = &n
	}
	p := 1.0
	if r.Probability != nil {
		p = *r.Probability
	}
	r.Probability = &p
	switch r.Target {
	case TargetAPI:
		if r.Operation == "" {
			r.Operation = Wildcard
		}
		if r.When == "" {
			r.When = WhenBefore
		}
		if r.Status == 429 && r.RetryAfter == 0 {
			r.RetryAfter = DefaultRetryAfter
		}
	case TargetWebhooks:
		if r.Reorder && r.WindowMS == 0 {
			r.WindowMS = DefaultWindowMS
		}
	}
	return r
}

// Validate lists every problem of the rule, checking operation names
// against DefaultOperations. Defaults need not be filled in first.
func (r Rule) Validate() []paymock.Violation { return r.ValidateFor(nil) }

// ValidateFor is Validate with the operation ids the contract has; nil
// means DefaultOperations.
func (r Rule) ValidateFor(operations []string) []paymock.Violation {
	if operations == nil {
		operations = DefaultOperations()
	}
	var vs []paymock.Violation
	bad := func(param, format string, args ...any) {
		vs = append(vs, paymock.Violation{Param: param, Code: "parameter_invalid", Message: fmt.Sprintf(format, args...)})
	}
	target := r.Target
	switch target {
	case "", TargetAPI:
		target = TargetAPI
	case TargetWebhooks:
	default:
		bad("target", "target %q is not a target: want api or webhooks", clip(string(r.Target), 64))
	}

	if r.Times != nil && *r.Times < 1 {
		bad("times", "times must be at least 1 (leave it out to keep the fault until it is removed)")
	}
	if p := r.Probability; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		bad("probability", "probability must be between 0 and 1")
	}
	switch {
	case r.DelayMS < 0:
		bad("delay_ms", "delay_ms must not be negative")
	case r.DelayMS > MaxDelayMS:
		bad("delay_ms", "delay_ms must be at most %d (10 minutes)", MaxDelayMS)
	}

	type field struct {
		name string
		set  bool
	}
	apiOnly := []field{
		{"operation", r.Operation != ""}, {"status", r.Status != 0}, {"retry_after", r.RetryAfter != 0},
		{"reset", r.Reset}, {"when", r.When != ""},
	}
	hookOnly := []field{
		{"event_type", r.EventType != ""}, {"duplicate", r.Duplicate != 0}, {"bad_signature", r.BadSignature},
		{"timestamp_skew_s", r.TimestampSkewS != 0}, {"reorder", r.Reorder}, {"window_ms", r.WindowMS != 0},
	}

	switch target {
	case TargetAPI:
		for _, f := range hookOnly {
			if f.set {
				bad(f.name, "%s applies to webhook faults only (target webhooks)", f.name)
			}
		}
		if r.Operation != "" && r.Operation != Wildcard && !slices.Contains(operations, r.Operation) {
			bad("operation", "operation %q is not an operation of the API: want %s or *", clip(r.Operation, 64), strings.Join(operations, ", "))
		}
		if r.Status != 0 && !slices.Contains(Statuses(), r.Status) {
			bad("status", "status %d cannot be injected: want 429, 500, 502, 503 or 504", r.Status)
		}
		switch {
		case r.RetryAfter < 0:
			bad("retry_after", "retry_after must not be negative")
		case r.RetryAfter > MaxRetryAfter:
			bad("retry_after", "retry_after must be at most %d seconds (a day)", MaxRetryAfter)
		case r.RetryAfter != 0 && r.Status != 429:
			bad("retry_after", "retry_after goes with status 429 only")
		}
		if r.Reset && r.Status != 0 {
			bad("reset", "reset closes the connection without an answer, so it cannot be combined with status")
		}
		if r.When != "" && r.When != WhenBefore && r.When != WhenAfter {
			bad("when", "when %q is not a moment: want before or after", clip(string(r.When), 64))
		}
		if r.Status == 0 && r.DelayMS == 0 && !r.Reset {
			vs = append(vs, paymock.Violation{Param: "status", Code: "parameter_missing",
				Message: "an API fault needs at least one effect: status, delay_ms or reset"})
		}
	case TargetWebhooks:
		for _, f := range apiOnly {
			if f.set {
				bad(f.name, "%s applies to API faults only; a webhook fault takes one of duplicate, bad_signature, timestamp_skew_s, delay_ms or reorder", f.name)
			}
		}
		if r.EventType != "" && !slices.Contains(EventTypes(), paymock.EventType(r.EventType)) {
			bad("event_type", "event_type %q is not an event type: want %s (or leave it out for any)", clip(r.EventType, 64), eventTypeList())
		}
		switch {
		case r.Duplicate < 0 || r.Duplicate == 1:
			bad("duplicate", "duplicate must be at least 2 (the number of times the delivery is sent)")
		case r.Duplicate > MaxDuplicate:
			bad("duplicate", "duplicate must be at most %d", MaxDuplicate)
		}
		if r.TimestampSkewS > MaxTimestampSkew || r.TimestampSkewS < -MaxTimestampSkew {
			bad("timestamp_skew_s", "timestamp_skew_s must be within a year (%d seconds) either way", MaxTimestampSkew)
		}
		switch {
		case r.WindowMS < 0:
			bad("window_ms", "window_ms must not be negative")
		case r.WindowMS > MaxWindowMS:
			bad("window_ms", "window_ms must be at most %d", MaxWindowMS)
		case r.WindowMS != 0 && !r.Reorder:
			bad("window_ms", "window_ms goes with reorder only")
		}
		var effects []string
		for _, f := range []field{
			{"duplicate", r.Duplicate != 0}, {"bad_signature", r.BadSignature}, {"timestamp_skew_s", r.TimestampSkewS != 0},
			{"delay_ms", r.DelayMS != 0}, {"reorder", r.Reorder},
		} {
			if f.set {
				effects = append(effects, f.name)
			}
		}
		switch {
		case len(effects) == 0:
			vs = append(vs, paymock.Violation{Param: "duplicate", Code: "parameter_missing",
				Message: "a webhook fault needs one effect: duplicate, bad_signature, timestamp_skew_s, delay_ms or reorder"})
		case len(effects) > 1:
			bad(effects[1], "a webhook fault takes exactly one effect, found %s", strings.Join(effects, " and "))
		}
	}
	return vs
}

func eventTypeList() string {
	var names []string
	for _, t := range EventTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// statusText is what each injected status says happened.
func statusText(status int) (string, bool) {
	switch status {
	case 429:
		return "too many requests", true
	case 500:
		return "the service failed to handle the request", true
	case 502:
		return "bad gateway: an upstream service failed", true
	case 503:
		return "the service is unavailable", true
	case 504:
		return "the gateway timed out waiting for the service", true
	}
	return "", false
}

// APIError is the answer of a status fault, for HTTP status r.Status (and
// a Retry-After of r.RetryAfter seconds with 429): rate_limit_error with
// code rate_limited for 429, api_error with code injected_fault for the
// 5xx. It is nil for a rule without a status (a delay or a reset alone).
// The message names the rule, so a client's logs show the failure was
// asked for.
func (r Rule) APIError() *paymock.Error {
	text, ok := statusText(r.Status)
	if !ok {
		return nil
	}
	by := "fault rule " + r.ID
	if r.ID == HeaderRuleID || r.ID == "" {
		by = "the " + Header + " header"
	}
	if r.Status == 429 {
		retry := r.RetryAfter
		if retry == 0 {
			retry = DefaultRetryAfter
		}
		return &paymock.Error{Type: paymock.RateLimit, Code: "rate_limited",
			Message: text + ": retry after " + strconv.Itoa(retry) + " s (429 injected by " + by + ")"}
	}
	return &paymock.Error{Type: paymock.APIError, Code: "injected_fault",
		Message: text + " (" + strconv.Itoa(r.Status) + " injected by " + by + ")"}
}
