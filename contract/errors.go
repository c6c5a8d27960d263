// Errors whose HTTP status the domain error type alone does not fix.

package contract

import "github.com/paymock/paymock"

// StatusError is a domain error with the HTTP status it must be answered
// with: 405, 413 and 415 are all invalid_request_error.
type StatusError struct {
	Status int
	Err    *paymock.Error
	// Allow lists the methods of the path, for a 405's Allow header.
	Allow []string
	// Header holds headers the answer carries (a 429's Retry-After).
	Header map[string][]string
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// WithStatus builds a StatusError.
func WithStatus(status int, t paymock.ErrorType, code, msg string) *StatusError {
	return &StatusError{Status: status, Err: &paymock.Error{Type: t, Code: code, Message: msg}}
}
