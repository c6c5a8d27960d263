// Domain errors: what went wrong, in the terms of the error shape every API
// answer uses, independent of HTTP.

package paymock

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrorType is the category of an error, as sent in `error.type`.
type ErrorType string

// The error types of DESIGN.md; each maps to one HTTP status class.
const (
	InvalidRequest ErrorType = "invalid_request_error"
	Authentication ErrorType = "authentication_error"
	Permission     ErrorType = "permission_error"
	NotFound       ErrorType = "not_found_error"
	Conflict       ErrorType = "conflict_error"
	RateLimit      ErrorType = "rate_limit_error"
	APIError       ErrorType = "api_error"
)

// Violation is one problem with one field or parameter of a request.
type Violation struct {
	Param   string `json:"param,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is a failure the client can act on. Violations lists every problem
// found, so a client sees all of them at once rather than one per attempt.
type Error struct {
	Type       ErrorType
	Code       string
	Message    string
	Param      string
	Violations []Violation
}

func (e *Error) Error() string {
	if len(e.Violations) <= 1 {
		return e.Message
	}
	msgs := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		msgs[i] = v.Message
	}
	return strings.Join(msgs, "; ")
}

// Invalid builds an invalid_request_error from violations; the first one
// gives the error its code, message and param.
func Invalid(vs ...Violation) *Error {
	if len(vs) == 0 {
		return &Error{Type: InvalidRequest, Code: "invalid_request", Message: "the request is invalid"}
	}
	return &Error{Type: InvalidRequest, Code: vs[0].Code, Message: vs[0].Message, Param: vs[0].Param, Violations: vs}
}

// The bounds of what an error lists and echoes. A refused body of a
// megabyte can hold 16,000 unknown keys, or one key of 900 kB; listed and
// echoed whole, it made a 2.9 MB answer and a journal entry as large, kept
// 10,000 times per merchant.
const (
	// MaxListedViolations is how many violations an answer's `errors` and
	// a journal entry list; past it, one more entry (code
	// more_violations) says how many were left out.
	MaxListedViolations = 50
	// MaxEchoedParam is how many bytes of a param an error shows: a
	// longer one is cut at a character boundary and ends in "…".
	MaxEchoedParam = 200
	// MaxEchoedMessage is how many bytes of a message an error shows,
	// once the param it echoes is cut as the param is.
	MaxEchoedMessage = 300
)

// MoreViolations is the code of the entry that ends a list cut at
// MaxListedViolations.
const MoreViolations = "more_violations"

// Bounded returns e as an answer or a journal entry may show it: at most
// MaxListedViolations violations, then one saying how many more there
// were, and every param and message within MaxEchoedParam and
// MaxEchoedMessage bytes. e itself is left as it is; an error within the
// bounds is returned as it is.
func (e *Error) Bounded() *Error {
	top := BoundViolation(Violation{Param: e.Param, Code: e.Code, Message: e.Message})
	if top.Param == e.Param && top.Message == e.Message && violationsWithin(e.Violations) {
		return e
	}
	b := *e
	b.Param, b.Message, b.Violations = top.Param, top.Message, BoundViolations(e.Violations)
	return &b
}

// BoundViolations is vs within the bounds of Bounded: the first
// MaxListedViolations, each cut by BoundViolation, and a last one with
// code MoreViolations saying how many more there were. vs is returned as
// it is when it holds nothing to cut; otherwise it is left unchanged and
// a new slice is returned.
func BoundViolations(vs []Violation) []Violation {
	if violationsWithin(vs) {
		return vs
	}
	n := min(len(vs), MaxListedViolations)
	out := make([]Violation, n, n+1)
	for i := range n {
		out[i] = BoundViolation(vs[i])
	}
	if more := len(vs) - n; more > 0 {
		out = append(out, Violation{Code: MoreViolations,
			Message: "and " + strconv.Itoa(more) + " more violations, not listed: only the first " + strconv.Itoa(MaxListedViolations) + " are"})
	}
	return out
}

// violationsWithin says whether vs is within the bounds: a list bounded
// already, its MoreViolations entry included, is.
func violationsWithin(vs []Violation) bool {
	n := len(vs)
	if n == MaxListedViolations+1 && vs[n-1].Code == MoreViolations && vs[n-1].Param == "" {
		n--
	}
	if n > MaxListedViolations {
		return false
	}
	for _, v := range vs {
		if len(v.Param) > MaxEchoedParam || len(v.Message) > MaxEchoedMessage {
			return false
		}
	}
	return true
}

// BoundViolation cuts v's param to MaxEchoedParam bytes and its message to
// MaxEchoedMessage. A message names its param as it was sent: that name
// is cut as the param is, so that the message keeps the words after it
// that say what is wrong.
func BoundViolation(v Violation) Violation {
	if len(v.Param) > MaxEchoedParam {
		short := cut(v.Param, MaxEchoedParam)
		v.Message = strings.ReplaceAll(v.Message, v.Param, short)
		v.Param = short
	}
	v.Message = cut(v.Message, MaxEchoedMessage)
	return v
}

// cut shortens s to at most n bytes, ending in "…", at a character
// boundary; s within n is returned as it is.
func cut(s string, n int) string {
	const ellipsis = "…"
	if len(s) <= n {
		return s
	}
	end := n - len(ellipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ellipsis
}

// ErrUnavailable is wrapped by a store that cannot reach its backend (a
// database that is down): the call may be tried again, and is answered
// 503 api_error.
var ErrUnavailable = errors.New("store unavailable")

// ErrNotFound is wrapped by store look-ups of an id the merchant does not own.
var ErrNotFound = errors.New("not found")

// PaymentNotFound is the error for an unknown payment id, or another
// merchant's: both look the same so that ids do not leak between merchants.
func PaymentNotFound(id string) *Error {
	return &Error{Type: NotFound, Code: "resource_missing", Message: "no such payment: '" + id + "'", Param: "id"}
}

// AsError returns err as a domain *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
