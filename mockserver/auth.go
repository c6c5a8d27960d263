// Bearer authentication: the Authorization header to a merchant.

package mockserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/paymock/paymock"
)

var errNoKey = errors.New("no api key")

// malformedKeyError is a paymock.ErrMalformedKey with what is wrong, in
// words a newcomer can act on; it never quotes the header, which may be
// a key.
type malformedKeyError struct{ reason string }

func (e *malformedKeyError) Error() string { return "malformed api key: " + e.reason }
func (e *malformedKeyError) Unwrap() error { return paymock.ErrMalformedKey }

// authenticate resolves the merchant of the Authorization header (its
// values, as received; more than one is malformed), held until the
// Visit's End.
func authenticate(ctx context.Context, ms Authenticator, headers []string) (*paymock.Merchant, Visit, error) {
	if len(headers) > 1 {
		// Which one a proxy or a server would take differs: none is.
		return nil, nil, &malformedKeyError{fmt.Sprintf("send one Authorization header, not %d", len(headers))}
	}
	var header string
	if len(headers) == 1 {
		header = headers[0]
	}
	if header == "" {
		return nil, nil, errNoKey
	}
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return nil, nil, &malformedKeyError{"the Authorization header must be Bearer followed by a token"}
	}
	token = strings.TrimSpace(token)
	m, v, err := ms.Visit(ctx, token)
	if errors.Is(err, paymock.ErrMalformedKey) {
		return nil, nil, &malformedKeyError{malformedReason(token)}
	}
	return m, v, err
}

// malformedReason says what is wrong with a token that is not a bearer
// token (RFC 6750: letters, digits and -._~+/, then = padding).
func malformedReason(token string) string {
	switch {
	case token == "":
		return "no API key after Bearer: send Authorization: Bearer <API_KEY>"
	case strings.ContainsAny(token, " \t"):
		return "the API key contains a space, which no key has: send the key as one word, Authorization: Bearer <API_KEY>"
	case len(token) > 512:
		return "the API key is longer than 512 characters"
	}
	return "the API key has a character no key has: keys are letters, digits and - . _ ~ + /, then = padding"
}

// authFailure is the answer to a failed bearer check: a 401, a 429 when
// open mode has as many merchants as it may hold, or the 503 of a shared
// store that cannot be reached to look the key up (the key may be good).
func authFailure(err error) error {
	switch {
	case errors.Is(err, paymock.ErrUnavailable):
		return err
	case errors.Is(err, errNoKey):
		return &paymock.Error{Type: paymock.Authentication, Code: "api_key_missing",
			Message: "no API key given: send it as Authorization: Bearer <API_KEY>"}
	case errors.Is(err, paymock.ErrMerchantLimit):
		return &paymock.Error{Type: paymock.RateLimit, Code: "merchant_limit", Message: err.Error()}
	case errors.Is(err, paymock.ErrMalformedKey):
		msg := "the Authorization header must be Bearer followed by a token"
		var mk *malformedKeyError
		if errors.As(err, &mk) {
			msg = mk.reason
		}
		return &paymock.Error{Type: paymock.Authentication, Code: "api_key_malformed", Message: msg}
	}
	return &paymock.Error{Type: paymock.Authentication, Code: "api_key_invalid", Message: "the API key is not valid"}
}
