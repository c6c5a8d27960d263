// Tests of the route a 404 suggests.

package contract_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

func TestMatch_UnknownRouteSuggestsTheNearestOne(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc          *contract.Document
		method, path string
		want         string // the suggestion, "" for none
	}{
		{docs.Service, "GET", "/api/v1/payment", "/api/v1/payments"},
		{docs.Service, "POST", "/api/v1/payment", "/api/v1/payments"},
		{docs.Service, "GET", "/api/v1/payemnts", "/api/v1/payments"},
		{docs.Service, "GET", "/api/v1/payment/pay_123", "/api/v1/payments/pay_123"},
		{docs.Service, "GET", "/api/v1/payments/", "/api/v1/payments"},
		{docs.Service, "GET", "/api/v2/payments", "/api/v1/payments"},
		{docs.Service, "GET", "/api/v1/customers", ""},
		{docs.Service, "GET", "/api/v1/payments/pay_1/refund", ""},
		{docs.Service, "GET", "/", ""},
		{docs.Service, "GET", "/" + strings.Repeat("a", 2000), ""},
		{docs.Sandbox, "GET", "/_sandbox/event", "/_sandbox/events"},
		{docs.Sandbox, "POST", "/_sandbox/payments/pay_1/completed", "/_sandbox/payments/pay_1/complete"},
		{docs.Sandbox, "POST", "/_sandbox/clock/advanced", "/_sandbox/clock/advance"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			_, err := tc.doc.Match(httptest.NewRequest(tc.method, tc.path, nil))
			de, ok := paymock.AsError(err)
			if !ok || de.Code != "route_not_found" {
				t.Fatalf("Match: %v, want a route_not_found error", err)
			}
			_, hint, found := strings.Cut(de.Message, "; did you mean ")
			switch {
			case tc.want == "" && found:
				t.Errorf("message %q suggests a route, want none", de.Message)
			case tc.want != "" && hint != tc.want+"?":
				t.Errorf("message %q, want it to suggest %s", de.Message, tc.want)
			}
		})
	}
}
