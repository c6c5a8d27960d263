// Fault rules: their fields, defaults, validation and the error answer a
// status fault stands for, and FaultRules, where a Backend keeps each
// merchant's rules and counts.

package paymock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultHeader is the request header that asks for a fault on that request.
const FaultHeader = "Paymock-Fault"

// FaultHeaderRuleID is the ID (and Source) of a rule read from the header.
const FaultHeaderRuleID = "header"

// FaultTarget says what a rule shapes: API answers or webhook deliveries.
type FaultTarget string

// The targets of a rule; an empty target is FaultTargetAPI.
const (
	FaultTargetAPI      FaultTarget = "api"
	FaultTargetWebhooks FaultTarget = "webhooks"
)

// FaultWhen says whether an API fault replaces the call or only its answer.
type FaultWhen string

// The moments of an API fault; an empty When is FaultWhenBefore.
const (
	// FaultWhenBefore: the call is not carried out, nothing changes.
	FaultWhenBefore FaultWhen = "before"
	// FaultWhenAfter: the call is carried out, then its answer is replaced, so
	// the client must reconcile as after a real timeout.
	FaultWhenAfter FaultWhen = "after"
)

// FaultWildcard is the operation of an API rule that matches every operation.
const FaultWildcard = "*"

// Bounds that keep a rule from tying up the sandbox: a delay holds a
// goroutine, a duplicate multiplies deliveries.
const (
	FaultMaxDelayMS       = 600_000 // 10 minutes
	FaultMaxRetryAfter    = 86_400  // a day, in seconds
	FaultMaxDuplicate     = 10
	FaultMaxWindowMS      = 60_000
	FaultMaxTimestampSkew = 31_536_000 // a year, in seconds
	FaultDefaultWindowMS  = 1000
	// FaultDefaultRetryAfter is the Retry-After of a 429 rule that gives none.
	FaultDefaultRetryAfter = 1
)

// FaultStatuses are the HTTP statuses a fault may answer with; every operation
// of the contract declares them.
func FaultStatuses() []int { return []int{429, 500, 502, 503, 504} }

// FaultOperations are the contract's operation ids, used when no list is
// given.
func FaultOperations() []string {
	return []string{"createPayment", "listPayments", "retrievePayment"}
}

// FaultEventTypes are the event types a webhook rule may name.
func FaultEventTypes() []EventType {
	return []EventType{EventCompleted, EventFailed, EventExpired}
}

// FaultRule is one fault: what it matches, what it does, and how often. The
// JSON and YAML names are those of the control API and of rule files.
type FaultRule struct {
	// ID is assigned when the rule is added ("flt_..."); "header" for a
	// fault asked by the Paymock-Fault header.
	ID string `json:"id,omitempty" yaml:"-"`
	// Source is "api", "header" or the file:line a rule was read from.
	Source string      `json:"source,omitempty" yaml:"-"`
	Target FaultTarget `json:"target,omitempty" yaml:"target,omitempty"`

	// Operation is an operation id of the contract, or "*" (the default).
	Operation string `json:"operation,omitempty" yaml:"operation,omitempty"`
	// Status is the answer's status: 429, 500, 502, 503 or 504.
	Status int `json:"status,omitempty" yaml:"status,omitempty"`
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int `json:"retry_after,omitempty" yaml:"retry_after,omitempty"`
	// Reset closes the connection with no answer.
	Reset bool      `json:"reset,omitempty" yaml:"reset,omitempty"`
	When  FaultWhen `json:"when,omitempty" yaml:"when,omitempty"`

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
	// UnknownType sends a message of type FaultUnknownEventType, correctly
	// signed and with its own webhook-id, before the delivery's first send.
	UnknownType bool `json:"unknown_type,omitempty" yaml:"unknown_type,omitempty"`
	// ExtraFields adds FaultExtraField at the top of the first send's
	// payload and inside its data, signed over the enlarged payload.
	ExtraFields bool `json:"extra_fields,omitempty" yaml:"extra_fields,omitempty"`

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
func (r FaultRule) Delay() time.Duration { return time.Duration(r.DelayMS) * time.Millisecond }

// Normalize fills the defaults: target api, operation "*", when before,
// probability 1, retry_after 1 with a 429, window_ms 1000 with reorder. It
// copies Times and Probability so the result shares nothing with r.
func (r FaultRule) Normalize() FaultRule {
	if r.Target == "" {
		r.Target = FaultTargetAPI
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
	case FaultTargetAPI:
		if r.Operation == "" {
			r.Operation = FaultWildcard
		}
		if r.When == "" {
			r.When = FaultWhenBefore
		}
		if r.Status == 429 && r.RetryAfter == 0 {
			r.RetryAfter = FaultDefaultRetryAfter
		}
	case FaultTargetWebhooks:
		if r.Reorder && r.WindowMS == 0 {
			r.WindowMS = FaultDefaultWindowMS
		}
	}
	return r
}

// Validate lists every problem of the rule, checking operation names
// against DefaultOperations. Defaults need not be filled in first.
func (r FaultRule) Validate() []Violation { return r.ValidateFor(nil) }

// ValidateFor is Validate with the operation ids the contract has; nil
// means DefaultOperations.
func (r FaultRule) ValidateFor(operations []string) []Violation {
	if operations == nil {
		operations = FaultOperations()
	}
	var vs []Violation
	bad := func(param, format string, args ...any) {
		vs = append(vs, Violation{Param: param, Code: "parameter_invalid", Message: fmt.Sprintf(format, args...)})
	}
	target := r.Target
	switch target {
	case "", FaultTargetAPI:
		target = FaultTargetAPI
	case FaultTargetWebhooks:
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
	case r.DelayMS > FaultMaxDelayMS:
		bad("delay_ms", "delay_ms must be at most %d (10 minutes)", FaultMaxDelayMS)
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
		{"unknown_type", r.UnknownType}, {"extra_fields", r.ExtraFields},
	}

	switch target {
	case FaultTargetAPI:
		for _, f := range hookOnly {
			if f.set {
				bad(f.name, "%s applies to webhook faults only (target webhooks)", f.name)
			}
		}
		if r.Operation != "" && r.Operation != FaultWildcard && !slices.Contains(operations, r.Operation) {
			bad("operation", "operation %q is not an operation of the API: want %s or *", clip(r.Operation, 64), strings.Join(operations, ", "))
		}
		if r.Status != 0 && !slices.Contains(FaultStatuses(), r.Status) {
			bad("status", "status %d cannot be injected: want 429, 500, 502, 503 or 504", r.Status)
		}
		switch {
		case r.RetryAfter < 0:
			bad("retry_after", "retry_after must not be negative")
		case r.RetryAfter > FaultMaxRetryAfter:
			bad("retry_after", "retry_after must be at most %d seconds (a day)", FaultMaxRetryAfter)
		case r.RetryAfter != 0 && r.Status != 429:
			bad("retry_after", "retry_after goes with status 429 only")
		}
		if r.Reset && r.Status != 0 {
			bad("reset", "reset closes the connection without an answer, so it cannot be combined with status")
		}
		if r.When != "" && r.When != FaultWhenBefore && r.When != FaultWhenAfter {
			bad("when", "when %q is not a moment: want before or after", clip(string(r.When), 64))
		}
		if r.Status == 0 && r.DelayMS == 0 && !r.Reset {
			vs = append(vs, Violation{Param: "status", Code: "parameter_missing",
				Message: "an API fault needs at least one effect: status, delay_ms or reset"})
		}
	case FaultTargetWebhooks:
		for _, f := range apiOnly {
			if f.set {
				bad(f.name, "%s applies to API faults only; a webhook fault takes one of %s", f.name, webhookEffects)
			}
		}
		if r.EventType != "" && !slices.Contains(FaultEventTypes(), EventType(r.EventType)) {
			bad("event_type", "event_type %q is not an event type: want %s (or leave it out for any)", clip(r.EventType, 64), eventTypeList())
		}
		switch {
		case r.Duplicate < 0 || r.Duplicate == 1:
			bad("duplicate", "duplicate must be at least 2 (the number of times the delivery is sent)")
		case r.Duplicate > FaultMaxDuplicate:
			bad("duplicate", "duplicate must be at most %d", FaultMaxDuplicate)
		}
		if r.TimestampSkewS > FaultMaxTimestampSkew || r.TimestampSkewS < -FaultMaxTimestampSkew {
			bad("timestamp_skew_s", "timestamp_skew_s must be within a year (%d seconds) either way", FaultMaxTimestampSkew)
		}
		switch {
		case r.WindowMS < 0:
			bad("window_ms", "window_ms must not be negative")
		case r.WindowMS > FaultMaxWindowMS:
			bad("window_ms", "window_ms must be at most %d", FaultMaxWindowMS)
		case r.WindowMS != 0 && !r.Reorder:
			bad("window_ms", "window_ms goes with reorder only")
		}
		var effects []string
		for _, f := range []field{
			{"duplicate", r.Duplicate != 0}, {"bad_signature", r.BadSignature}, {"timestamp_skew_s", r.TimestampSkewS != 0},
			{"delay_ms", r.DelayMS != 0}, {"reorder", r.Reorder}, {"unknown_type", r.UnknownType}, {"extra_fields", r.ExtraFields},
		} {
			if f.set {
				effects = append(effects, f.name)
			}
		}
		switch {
		case len(effects) == 0:
			vs = append(vs, Violation{Param: "duplicate", Code: "parameter_missing",
				Message: "a webhook fault needs one effect: " + webhookEffects})
		case len(effects) > 1:
			bad(effects[1], "a webhook fault takes exactly one effect, found %s", strings.Join(effects, " and "))
		}
	}
	return vs
}

// webhookEffects names the effects a webhook rule takes one of.
const webhookEffects = "duplicate, bad_signature, timestamp_skew_s, delay_ms, reorder, unknown_type or extra_fields"

func eventTypeList() string {
	var names []string
	for _, t := range FaultEventTypes() {
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
func (r FaultRule) APIError() *Error {
	text, ok := statusText(r.Status)
	if !ok {
		return nil
	}
	by := "fault rule " + r.ID
	if r.ID == FaultHeaderRuleID || r.ID == "" {
		by = "the " + FaultHeader + " header"
	}
	if r.Status == 429 {
		retry := r.RetryAfter
		if retry == 0 {
			retry = FaultDefaultRetryAfter
		}
		return &Error{Type: RateLimit, Code: "rate_limited",
			Message: text + ": retry after " + strconv.Itoa(retry) + " s (429 injected by " + by + ")"}
	}
	return &Error{Type: APIError, Code: "injected_fault",
		Message: text + " (" + strconv.Itoa(r.Status) + " injected by " + by + ")"}
}

// Selector is what a rule is matched by: its operation for an API rule,
// its event type (FaultWildcard for any) for a webhook rule. r must be
// normalized.
func (r FaultRule) Selector() string {
	if r.Target == FaultTargetWebhooks {
		if r.EventType == "" {
			return FaultWildcard
		}
		return r.EventType
	}
	return r.Operation
}

// clip cuts what a client sent to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// FaultRules keeps merchants' fault rules and their counts (package memory
// holds them in the process, package postgres where every replica sees
// them). The algorithm over it (matching order, draws, limits, file
// rules) is faults.Set's, the same on every backend: a FaultRules only
// stores, counts and answers, each call atomic on its own.
//
// It keeps two kinds of records per merchant: API rules (File false),
// each with its whole rule, and the merchant's counts of file rules (File
// true), whose definitions every replica loads from the same file. A file
// rule without a record is fresh: no hits, its full times, no draws. Every
// method must be safe for concurrent use (by any number of replicas, for a
// shared store); a store that cannot be reached answers an error wrapping
// ErrUnavailable.
type FaultRules interface {
	// AddRule stores an API rule for the merchant with no hits and its
	// full times. It refuses with ErrTooManyFaultRules when the merchant
	// holds limit API rules that still fire, and with
	// ErrDuplicateFaultRule when the merchant has a rule with r.ID.
	AddRule(ctx context.Context, merchantID string, r FaultRule, limit int) error
	// Rules returns the merchant's API rules that still fire and its
	// counts of file rules, in any order.
	Rules(ctx context.Context, merchantID string) ([]StoredFaultRule, error)
	// Candidates is Rules limited to rules of target whose Selector is
	// selector or FaultWildcard: what one call or delivery may match. For a
	// merchant with no such rule it must be cheap: it is asked on every
	// call (memory answers it without a lock or an allocation).
	Candidates(ctx context.Context, merchantID string, target FaultTarget, selector string) ([]StoredFaultRule, error)
	// DrawRule counts one probability draw of a rule that still fires and
	// returns its number, from 1; false when the rule no longer fires.
	DrawRule(ctx context.Context, merchantID string, r FaultRule, file bool) (n int64, ok bool, err error)
	// HitRule counts one firing of a rule that still fires, taking one
	// from its remaining times if it has times, atomically: of concurrent
	// calls on a rule with n remaining, exactly n succeed. It returns the
	// counts after the hit (FaultRule.Hits and FaultRule.Remaining); false
	// when the rule no longer fires.
	HitRule(ctx context.Context, merchantID string, r FaultRule, file bool) (StoredFaultRule, bool, error)
	// RemoveRule removes a rule that still fires: an API rule by r.ID, or
	// a file rule for this merchant only. False when there was none.
	RemoveRule(ctx context.Context, merchantID string, r FaultRule, file bool) (bool, error)
	// ClearRules removes every API rule of the merchant and the file
	// rules given, for this merchant, until ResetRules.
	ClearRules(ctx context.Context, merchantID string, file []FaultRule) error
	// ResetRules forgets the merchant's rules, counts and draws: file rules
	// fire again from their full times.
	ResetRules(ctx context.Context, merchantID string) error
	// ForgetRules drops what this process alone holds of a merchant gone
	// idle: in memory, everything (as ResetRules); a store the replicas
	// share keeps the rules, which the other replicas may still use, as it
	// keeps the merchant's payments.
	ForgetRules(ctx context.Context, merchantID string) error
}

// StoredFaultRule is one record of a FaultRules.
type StoredFaultRule struct {
	// Rule is the whole rule for an API rule; for a file rule's counts,
	// its ID and Target. Hits and Remaining hold the counts (Remaining is
	// nil for a rule without times).
	Rule FaultRule
	// File marks a file rule's counts for the merchant.
	File bool
	// Seq orders API rules: a rule added later has a higher Seq.
	Seq int64
	// Removed marks a file rule the merchant deleted or cleared.
	Removed bool
}

// Errors a FaultRules answers AddRule with.
var (
	ErrTooManyFaultRules  = errors.New("the merchant has the most fault rules it may have")
	ErrDuplicateFaultRule = errors.New("the merchant has a fault rule with this id")
)
