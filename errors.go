// Domain errors: what went wrong, in the terms of the error shape every API
// answer uses, independent of HTTP.

package paymock

import (
	"errors"
	"strings"
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
