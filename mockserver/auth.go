// Bearer authentication: the Authorization header to a merchant.

package mockserver

import (
	"context"
	"errors"
	"strings"

	"github.com/paymock/paymock"
)

var errNoKey = errors.New("no api key")

// authenticate resolves the merchant of an Authorization header.
func authenticate(ctx context.Context, ms Authenticator, header string) (*paymock.Merchant, error) {
	if header == "" {
		return nil, errNoKey
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, paymock.ErrMalformedKey
	}
	return ms.Authenticate(ctx, strings.TrimSpace(token))
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
		return &paymock.Error{Type: paymock.Authentication, Code: "api_key_malformed",
			Message: "the Authorization header must be Bearer followed by a token"}
	}
	return &paymock.Error{Type: paymock.Authentication, Code: "api_key_invalid", Message: "the API key is not valid"}
}
