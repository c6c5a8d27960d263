// The error shape: codes, messages and params from violations, and their bounds.

package paymock

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
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

func TestBoundViolation_CutsAtACharacterBoundaryAndKeepsTheWordsAfterTheParam(t *testing.T) {
	tests := []struct {
		name      string
		in        Violation
		wantParam string
		wantMsg   string
	}{
		{"within the bounds, as it is",
			Violation{Param: "customer.email", Message: "customer.email is required"},
			"customer.email", "customer.email is required"},
		{"a param of 200 bytes, as it is",
			Violation{Param: strings.Repeat("p", 200), Message: "x"},
			strings.Repeat("p", 200), "x"},
		{"a long param, cut in the message too",
			Violation{Param: strings.Repeat("p", 1000), Message: strings.Repeat("p", 1000) + " is not a known field"},
			strings.Repeat("p", 197) + "…", strings.Repeat("p", 197) + "… is not a known field"},
		{"four-byte characters are not split",
			Violation{Param: strings.Repeat("𝄞", 100), Message: "m"},
			strings.Repeat("𝄞", 49) + "…", "m"},
		{"a long message that echoes no param is cut at its end",
			Violation{Message: "no such route: " + strings.Repeat("X", 1000)},
			"", "no such route: " + strings.Repeat("X", 300-len("no such route: ")-len("…")) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BoundViolation(tc.in)
			if got.Param != tc.wantParam || got.Message != tc.wantMsg {
				t.Errorf("BoundViolation = %.80q / %.80q, want %.80q / %.80q", got.Param, got.Message, tc.wantParam, tc.wantMsg)
			}
			if len(got.Param) > MaxEchoedParam || len(got.Message) > MaxEchoedMessage || !utf8.ValidString(got.Param) {
				t.Errorf("out of bounds: param %d bytes, message %d bytes", len(got.Param), len(got.Message))
			}
		})
	}
}

func TestError_BoundedLeavesTheErrorItCutsUnchangedAndIsIdempotent(t *testing.T) {
	vs := make([]Violation, 60)
	for i := range vs {
		vs[i] = Violation{Param: fmt.Sprintf("f%02d", i), Code: "parameter_unknown", Message: "m"}
	}
	e := Invalid(vs...)
	b := e.Bounded()
	if len(e.Violations) != 60 {
		t.Errorf("the original now lists %d", len(e.Violations))
	}
	if len(b.Violations) != MaxListedViolations+1 || b.Violations[MaxListedViolations].Code != MoreViolations ||
		b.Violations[MaxListedViolations].Message != "and 10 more violations, not listed: only the first 50 are" {
		t.Errorf("bounded: %d violations, last %+v", len(b.Violations), b.Violations[len(b.Violations)-1])
	}
	if again := b.Bounded(); again != b {
		t.Errorf("bounding a bounded error again changed it: %d violations, last %+v", len(again.Violations), again.Violations[len(again.Violations)-1])
	}
	small := Invalid(vs[:3]...)
	if small.Bounded() != small {
		t.Error("an error within the bounds was copied")
	}
}
