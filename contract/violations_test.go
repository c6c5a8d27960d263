// Tests of how refused requests read: kin-openapi's errors in the user's
// words, the choice of mcc or account_id above all.

package contract_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

// refusal validates a create body against the service contract and
// returns what it is refused for, by param (the last violation of each).
func refusal(t *testing.T, edit func(map[string]any)) map[string]paymock.Violation {
	t.Helper()
	out := map[string]paymock.Violation{}
	for _, v := range refusals(t, edit) {
		out[v.Param] = v
	}
	return out
}

// refusals is every violation of the edited create body, in order.
func refusals(t *testing.T, edit func(map[string]any)) []paymock.Violation {
	t.Helper()
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{
		"amount": 10.5, "currency": "USD", "description": "Order 1", "expires_in": 3600, "mcc": 5732,
		"customer":    map[string]any{"email": "jane@example.com", "name": "Jane"},
		"metadata":    map[string]any{"order_id": "1"},
		"success_url": "https://shop.example.com/ok", "cancel_url": "https://shop.example.com/no",
	}
	edit(body)
	raw, _ := json.Marshal(body)
	r := httptest.NewRequest("POST", "/api/v1/payments", strings.NewReader(string(raw)))
	r.Header.Set("Content-Type", "application/json")
	rt, err := docs.Service.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	err = docs.Service.ValidateRequest(context.Background(), r, rt, raw, true)
	if err == nil {
		return nil
	}
	de, ok := paymock.AsError(err)
	if !ok {
		t.Fatalf("not a domain error: %v", err)
	}
	return de.Violations
}

// A value past both the integer's format and the field's own bounds is
// told the range the field takes, not the format's.
func TestViolations_AnIntegerPastItsFormatIsToldTheFieldsRange(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  []string
	}{
		{"past int32", 99999999999, []string{"expires_in must be an integer from 1 to 2592000", "expires_in must be at most 2592000"}},
		{"below int32", -99999999999, []string{"expires_in must be an integer from 1 to 2592000", "expires_in must be at least 1"}},
		{"inside int32, past the maximum", 2592001, []string{"expires_in must be at most 2592000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range refusals(t, func(b map[string]any) { b["expires_in"] = tc.value }) {
				if v.Param == "expires_in" {
					got = append(got, v.Message)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("messages %q, want %q", got, tc.want)
			}
		})
	}
}

func TestViolations_ReadInTheUsersWords(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(map[string]any)
		param, code string
		message     string
	}{
		{"both mcc and account_id", func(b map[string]any) { b["account_id"] = "acct_sandbox_active" },
			"mcc", "parameter_conflict", "give exactly one of mcc or account_id, not both"},
		{"neither mcc nor account_id", func(b map[string]any) { delete(b, "mcc") },
			"mcc", "parameter_missing", "one of mcc or account_id is required"},
		{"a cvc of letters", func(b map[string]any) {
			b["payment_method"] = map[string]any{"type": "card", "card": map[string]any{"number": "4242424242424242", "expiry_month": 12, "expiry_year": 2030, "cvc": "abc"}}
		}, "payment_method.card.cvc", "parameter_invalid", "3 or 4 digits"},
		{"a redirect URL without a host", func(b map[string]any) { b["success_url"] = "HTtP://" },
			"success_url", "parameter_invalid", "an absolute http or https URL with a host"},
		{"an amount of zero", func(b map[string]any) { b["amount"] = 0 },
			"amount", "parameter_invalid", "amount must be at least 0.01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := refusal(t, tc.edit)
			v, ok := got[tc.param]
			if !ok {
				t.Fatalf("no violation of %s in %v", tc.param, got)
			}
			if v.Code != tc.code || !strings.Contains(v.Message, tc.message) {
				t.Errorf("%s: %+v, want code %s and a message with %q", tc.param, v, tc.code, tc.message)
			}
			for _, v := range got {
				if strings.Contains(v.Message, "Schema:") || strings.Contains(v.Message, "^") || strings.Contains(v.Message, "oneOf") || strings.Contains(v.Message, "match") {
					t.Errorf("a message shows the machinery: %q", v.Message)
				}
			}
		})
	}
}

func TestViolations_AFailedChoiceStillListsTheRest(t *testing.T) {
	got := refusal(t, func(b map[string]any) {
		b["account_id"] = "acct_sandbox_active" // the choice fails...
		b["currency"] = "XYZ"                   // ...and these are still named
		b["colour"] = "blue"
	})
	for _, p := range []string{"mcc", "currency", "colour"} {
		if _, ok := got[p]; !ok {
			t.Errorf("no violation of %s in %v", p, got)
		}
	}
}

// refusalsOfBody is every violation of a create whose body is raw.
func refusalsOfBody(t *testing.T, raw string) []paymock.Violation {
	t.Helper()
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/api/v1/payments", strings.NewReader(raw))
	r.Header.Set("Content-Type", "application/json")
	rt, err := docs.Service.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	de, ok := paymock.AsError(docs.Service.ValidateRequest(context.Background(), r, rt, []byte(raw), true))
	if !ok {
		t.Fatalf("%s: not refused with a domain error", raw)
	}
	return de.Violations
}

func TestViolations_ABodyThatIsNoObjectIsToldSo(t *testing.T) {
	for _, raw := range []string{`[]`, `1`, `"x"`, `true`, `[{"amount":1}]`} {
		got := refusalsOfBody(t, raw)
		if len(got) != 1 || got[0].Message != "the request body must be an object" {
			t.Errorf("%s: %+v, want one violation: the request body must be an object", raw, got)
		}
	}
}

func TestViolations_TheSameWordsOfOneFieldAreListedOnce(t *testing.T) {
	for _, bad := range []string{"", "x", "https://shop.example/a b"} {
		var n int
		for _, v := range refusals(t, func(b map[string]any) { b["cancel_url"] = bad }) {
			if v.Param == "cancel_url" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("cancel_url %q: %d violations of cancel_url, want 1", bad, n)
		}
	}
}

// Values url.Parse and net/mail take but a URI and the contract's ASCII
// email format do not: a strict client refuses them in every answer that
// would hold them, so the request is refused.
func TestViolations_WhatStrictClientsRefuseIsRefused(t *testing.T) {
	tests := []struct {
		param string
		value any
	}{
		{"success_url", "https://shop.example/a b"},
		{"success_url", "https://shop.example/a|b"},
		{"success_url", `https://shop.example/<"x">`},
		{"success_url", "https://shop.example/é"},
		{"success_url", "https://bücher.example/"},
		{"cancel_url", "https://shop.example/?q=%zz"},
		{"customer.email", "jöhn@example.com"},
		{"customer.email", `"john doe"@example.com`},
		{"cancel_url", "http://a]/x"},
		{"cancel_url", "http://a/#x#y"},
		{"cancel_url", "http://a/x[1]"},
		{"cancel_url", "http://a?q=["},
		{"success_url", "http://%41/x"},
		{"customer.email", "a@-x.co"},
		{"customer.email", "a@x-.co"},
		{"customer.email", "a@x_y.co"},
	}
	for _, tc := range tests {
		got := refusal(t, func(b map[string]any) {
			if tc.param == "customer.email" {
				b["customer"] = map[string]any{"email": tc.value, "name": "Jane"}
			} else {
				b[tc.param] = tc.value
			}
		})
		if _, ok := got[tc.param]; !ok {
			t.Errorf("%s %q: not refused (%v)", tc.param, tc.value, got)
		}
	}
	for _, ok := range []string{"https://shop.example/caf%C3%A9?q=a%20b", "https://[2001:db8::1]:8443/ok", "https://xn--bcher-kva.example/"} {
		if got := refusal(t, func(b map[string]any) { b["success_url"] = ok }); len(got) != 0 {
			t.Errorf("success_url %q refused: %v", ok, got)
		}
	}
}

func TestViolations_AnEmptyRequiredStringIsMissingWhateverRuleItBreaks(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(map[string]any)
		param string
		code  string
	}{
		{"minLength", func(b map[string]any) { b["description"] = "" }, "description", "parameter_missing"},
		{"enum", func(b map[string]any) { b["currency"] = "" }, "currency", "parameter_missing"},
		{"format", func(b map[string]any) { b["customer"].(map[string]any)["email"] = "" }, "customer.email", "parameter_missing"},
		{"pattern and format, named once", func(b map[string]any) { b["success_url"] = "" }, "success_url", "parameter_missing"},
		{"nested, in an optional object", func(b map[string]any) {
			b["payment_method"] = map[string]any{"type": "card", "card": map[string]any{"number": "4242424242424242", "expiry_month": 12, "expiry_year": 2030, "cvc": ""}}
		}, "payment_method.card.cvc", "parameter_missing"},
		{"beside the choice of mcc or account_id", func(b map[string]any) { b["account_id"] = "acct_1"; b["description"] = "" }, "description", "parameter_missing"},
		// An optional string sent empty is a value it may not take.
		{"optional", func(b map[string]any) { delete(b, "mcc"); b["account_id"] = "" }, "account_id", "parameter_invalid"},
		// Not a string: what is wrong is its type.
		{"a required string sent as a number", func(b map[string]any) { b["description"] = 0 }, "description", "parameter_invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mine []paymock.Violation
			for _, v := range refusals(t, tc.edit) {
				if v.Param == tc.param {
					mine = append(mine, v)
				}
			}
			if len(mine) != 1 || mine[0].Code != tc.code || tc.code == "parameter_missing" && mine[0].Message != tc.param+" is required" {
				t.Errorf("violations of %s: %+v, want one %s", tc.param, mine, tc.code)
			}
		})
	}
}
