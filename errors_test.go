package paymock

import (
	"errors"
	"fmt"
	"testing"
)

func TestInvalid_TakesCodeMessageParamFromFirstViolation(t *testing.T) {
	vs := []Violation{
		{Param: "customer.email", Code: "parameter_missing", Message: "customer.email is required"},
		{Param: "payment_method.card.cvc", Code: "parameter_invalid", Message: "payment_method.card.cvc must be 3 or 4 digits"},
	}
	e := Invalid(vs...)
	if e.Type != InvalidRequest || e.Code != vs[0].Code || e.Message != vs[0].Message || e.Param != vs[0].Param {
		t.Errorf("Invalid = %+v, want type invalid_request_error and the first violation's fields", e)
	}
	if len(e.Violations) != 2 || e.Violations[1] != vs[1] {
		t.Errorf("Violations = %+v", e.Violations)
	}
	if got, want := e.Error(), "customer.email is required; payment_method.card.cvc must be 3 or 4 digits"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestInvalid_SingleAndNoViolations(t *testing.T) {
	one := Invalid(Violation{Param: "amount", Code: "parameter_missing", Message: "amount is required"})
	if one.Error() != "amount is required" || one.Param != "amount" {
		t.Errorf("single violation: Error() = %q, Param %q", one.Error(), one.Param)
	}
	none := Invalid()
	if none.Type != InvalidRequest || none.Code == "" || none.Message == "" || none.Error() != none.Message {
		t.Errorf("no violations: %+v", none)
	}
}

func TestPaymentNotFound(t *testing.T) {
	e := PaymentNotFound("pay_123")
	if e.Type != NotFound || e.Code != "resource_missing" || e.Param != "id" || e.Message != "no such payment: 'pay_123'" {
		t.Errorf("PaymentNotFound = %+v", e)
	}
}

func TestAsError(t *testing.T) {
	inner := &Error{Type: Conflict, Code: "payment_final", Message: "final"}
	for _, tc := range []struct {
		name string
		err  error
		want *Error
	}{
		{"direct", inner, inner},
		{"wrapped", fmt.Errorf("complete: %w", inner), inner},
		{"joined", errors.Join(errors.New("x"), inner), inner},
		{"plain error", errors.New("boom"), nil},
		{"nil", nil, nil},
		{"ErrNotFound", fmt.Errorf("payment x: %w", ErrNotFound), nil},
	} {
		got, ok := AsError(tc.err)
		if got != tc.want || ok != (tc.want != nil) {
			t.Errorf("%s: AsError = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}
