// Merchants and requests shared by the root package's tests.

package paymock

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// testNow is the clock of the create tests: mid-May 2026, with a fraction
// of a second that NewPayment must drop.
var testNow = time.Date(2026, time.May, 15, 12, 34, 56, 789_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

// pciMerchant may send cards and has one active and one inactive account.
func pciMerchant() *Merchant {
	return &Merchant{
		ID:          "acme",
		Name:        "acme",
		PCIApproved: true,
		Accounts: []Account{
			{ID: "acct_acme_main", Active: true},
			{ID: "acct_acme_old", Active: false},
		},
	}
}

// plainMerchant has no PCI approval.
func plainMerchant() *Merchant {
	return &Merchant{
		ID:       "plain",
		Name:     "plain",
		Accounts: []Account{{ID: "acct_plain_main", Active: true}},
	}
}

// validRequest passes every rule.
func validRequest() CreateRequest {
	return CreateRequest{
		Amount:      "10.50",
		Currency:    USD,
		Customer:    &CustomerInput{Email: "jane@example.com", Name: "Jane Doe"},
		Description: "Order #1001",
		ExpiresIn:   ptr[Whole](3600),
		Metadata:    json.RawMessage(`{"order_id":"1001"}`),
		SuccessURL:  "https://shop.example/success",
		CancelURL:   "https://shop.example/cancel",
		MCC:         ptr[Whole](5734),
	}
}

// testCardNumber and testCVC are unusual enough that finding them anywhere
// in an output can only mean they leaked.
const (
	testCardNumber = "4242424242424242"
	testCVC        = "9731"
)

// validCardRequest is validRequest with a valid card, for pciMerchant at
// testNow.
func validCardRequest() CreateRequest {
	r := validRequest()
	r.PaymentMethod = &PaymentMethodInput{
		Type: "card",
		Card: &CardInput{Number: testCardNumber, ExpiryMonth: 12, ExpiryYear: 2030, CVC: testCVC},
		BillingDetails: &BillingDetails{
			Name:    "Jane Doe",
			Address: &Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"},
		},
	}
	return r
}

// pc is a violation without its message, for comparing lists.
type pc struct{ Param, Code string }

// violations returns the param/code pairs of err, which must be an
// invalid_request_error (or nil, giving nil).
func violations(t *testing.T, err error) []pc {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *paymock.Error", err, err)
	}
	if e.Type != InvalidRequest {
		t.Fatalf("error type = %q, want %q (error: %v)", e.Type, InvalidRequest, err)
	}
	out := make([]pc, len(e.Violations))
	for i, v := range e.Violations {
		if v.Message == "" {
			t.Errorf("violation %d (%s) has no message", i, v.Param)
		}
		out[i] = pc{v.Param, v.Code}
	}
	return out
}

func equalPCs(a, b []pc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
