// Tests of the check of one exchange.

package proxy

import (
	"net/http/httptest"
	"testing"

	"github.com/paymock/paymock/contract"
)

func TestCheck_AKeyThatIsNotWellFormedIsMalformedAndNoHeaderIsMissing(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		authorization []string
		authenticated bool
		want          string
	}{
		{"no header", nil, false, "api_key_missing"},
		{"a key that is not well-formed", []string{"Bearer not a key!"}, false, "api_key_malformed"},
		{"another scheme", []string{"Basic dXNlcjpwYXNz"}, false, "api_key_malformed"},
		// A recording keeps the header, its key redacted.
		{"a recorded, redacted header", []string{"Bearer [redacted]"}, false, "api_key_malformed"},
		{"a well-formed key", []string{"Bearer sk_test_1"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/payments", nil)
			for _, v := range tc.authorization {
				r.Header.Add("Authorization", v)
			}
			_, vs := Check(t.Context(), docs.Service, Exchange{Request: r, Authenticated: tc.authenticated})
			got := ""
			if len(vs) > 0 {
				got = vs[0].Code
			}
			if got != tc.want || len(vs) > 1 {
				t.Errorf("violations %+v; want one %q", vs, tc.want)
			}
		})
	}
}
