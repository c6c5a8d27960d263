// Fault rules under this package's names: the rule itself, its fields,
// defaults, validation and error answer are the domain's (paymock.FaultRule),
// so that every backend can keep them.

package faults

import "github.com/paymock/paymock"

// Rule is one fault: what it matches, what it does, and how often.
type Rule = paymock.FaultRule

// Target says what a rule shapes: API answers or webhook deliveries.
type Target = paymock.FaultTarget

// When says whether an API fault replaces the call or only its answer.
type When = paymock.FaultWhen

// The targets and moments of a rule, and the operation of an API rule that
// matches every operation.
const (
	TargetAPI      = paymock.FaultTargetAPI
	TargetWebhooks = paymock.FaultTargetWebhooks
	WhenBefore     = paymock.FaultWhenBefore
	WhenAfter      = paymock.FaultWhenAfter
	Wildcard       = paymock.FaultWildcard
)

// Bounds that keep a rule from tying up the sandbox, and the defaults
// Normalize fills.
const (
	MaxDelayMS        = paymock.FaultMaxDelayMS
	MaxRetryAfter     = paymock.FaultMaxRetryAfter
	MaxDuplicate      = paymock.FaultMaxDuplicate
	MaxWindowMS       = paymock.FaultMaxWindowMS
	MaxTimestampSkew  = paymock.FaultMaxTimestampSkew
	DefaultWindowMS   = paymock.FaultDefaultWindowMS
	DefaultRetryAfter = paymock.FaultDefaultRetryAfter
)

// Statuses are the HTTP statuses a fault may answer with.
func Statuses() []int { return paymock.FaultStatuses() }

// DefaultOperations are the contract's operation ids, used when no list is
// given.
func DefaultOperations() []string { return paymock.FaultOperations() }

// EventTypes are the event types a webhook rule may name.
func EventTypes() []paymock.EventType { return paymock.FaultEventTypes() }
