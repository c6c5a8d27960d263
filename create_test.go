// The create rules, a table of requests for each field, and the card's.

package paymock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// createCase is one request against the create rules: start from base
// (validRequest when nil), apply edit, validate for merchant (pciMerchant
// when nil) at now (testNow when zero) and expect exactly the violations in
// want (none: the request is accepted).
type createCase struct {
	name     string
	base     func() CreateRequest
	edit     func(r *CreateRequest)
	merchant *Merchant
	now      time.Time
	want     []pc
}

func runCreateCases(t *testing.T, cases []createCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == nil {
				base = validRequest
			}
			r := base()
			if tc.edit != nil {
				tc.edit(&r)
			}
			m := tc.merchant
			if m == nil {
				m = pciMerchant()
			}
			now := tc.now
			if now.IsZero() {
				now = testNow
			}
			_, err := ValidateCreate(r, m, now)
			got := violations(t, err)
			if !equalPCs(got, tc.want) {
				t.Fatalf("violations = %v, want %v (error: %v)", got, tc.want, err)
			}
		})
	}
}

func TestValidateCreate_AcceptsValidRequests(t *testing.T) {
	runCreateCases(t, []createCase{
		{name: "mcc request"},
		{name: "account request", edit: func(r *CreateRequest) { r.MCC = nil; r.AccountID = ptr("acct_acme_main") }},
		{name: "card request from PCI merchant", base: validCardRequest},
		{name: "card without billing details", base: validCardRequest, edit: func(r *CreateRequest) { r.PaymentMethod.BillingDetails = nil }},
	})
}

func TestValidateCreate_ReturnsParsedValues(t *testing.T) {
	r := validRequest()
	r.Amount = "1234.5"
	r.ExpiresIn = ptr[Whole](900)
	v, err := ValidateCreate(r, pciMerchant(), testNow)
	if err != nil {
		t.Fatalf("ValidateCreate: %v", err)
	}
	if v.Amount != 123450 {
		t.Errorf("Amount = %d, want 123450", v.Amount)
	}
	if v.Expires != 15*time.Minute {
		t.Errorf("Expires = %v, want 15m", v.Expires)
	}
	if v.Request.Description != r.Description || v.Request.Customer != r.Customer {
		t.Errorf("Request not carried: %+v", v.Request)
	}
}

func TestValidateCreate_RejectsMissingRequiredFields(t *testing.T) {
	missing := func(param string) []pc { return []pc{{param, "parameter_missing"}} }
	runCreateCases(t, []createCase{
		{name: "amount", edit: func(r *CreateRequest) { r.Amount = "" }, want: missing("amount")},
		{name: "currency", edit: func(r *CreateRequest) { r.Currency = "" }, want: missing("currency")},
		{name: "customer", edit: func(r *CreateRequest) { r.Customer = nil }, want: missing("customer")},
		{name: "customer.email", edit: func(r *CreateRequest) { r.Customer.Email = "" }, want: missing("customer.email")},
		{name: "customer.name", edit: func(r *CreateRequest) { r.Customer.Name = "" }, want: missing("customer.name")},
		{name: "customer.name blank", edit: func(r *CreateRequest) { r.Customer.Name = " \t " }, want: missing("customer.name")},
		{name: "customer email and name", edit: func(r *CreateRequest) { r.Customer = &CustomerInput{} }, want: []pc{{"customer.email", "parameter_missing"}, {"customer.name", "parameter_missing"}}},
		{name: "description", edit: func(r *CreateRequest) { r.Description = "" }, want: missing("description")},
		{name: "description blank", edit: func(r *CreateRequest) { r.Description = "   " }, want: missing("description")},
		{name: "expires_in", edit: func(r *CreateRequest) { r.ExpiresIn = nil }, want: missing("expires_in")},
		{name: "metadata", edit: func(r *CreateRequest) { r.Metadata = nil }, want: missing("metadata")},
		{name: "success_url", edit: func(r *CreateRequest) { r.SuccessURL = "" }, want: missing("success_url")},
		{name: "cancel_url", edit: func(r *CreateRequest) { r.CancelURL = "" }, want: missing("cancel_url")},
	})
}

func TestValidateCreate_Currency(t *testing.T) {
	var cases []createCase
	for _, c := range Currencies {
		cases = append(cases, createCase{name: "accepts " + string(c), edit: func(r *CreateRequest) { r.Currency = c }})
	}
	invalid := []pc{{"currency", "parameter_invalid"}}
	for _, c := range []Currency{"usd", "JPY", "US", "USDD", "EUR "} {
		cases = append(cases, createCase{name: fmt.Sprintf("rejects %q", c), edit: func(r *CreateRequest) { r.Currency = c }, want: invalid})
	}
	runCreateCases(t, cases)
}

func TestValidateCreate_Amount(t *testing.T) {
	invalid := []pc{{"amount", "parameter_invalid"}}
	cases := []createCase{
		{name: "rejects 0", edit: func(r *CreateRequest) { r.Amount = "0" }, want: invalid},
		{name: "rejects -1", edit: func(r *CreateRequest) { r.Amount = "-1" }, want: invalid},
		{name: "rejects three decimals", edit: func(r *CreateRequest) { r.Amount = "0.001" }, want: invalid},
		{name: "rejects above max", edit: func(r *CreateRequest) { r.Amount = "1000000000" }, want: invalid},
		{name: "rejects non-number", edit: func(r *CreateRequest) { r.Amount = "ten" }, want: invalid},
	}
	for _, a := range []string{"0.01", "10", "10.5", "10.50", "10.500", "1e2", "999999999.99"} {
		cases = append(cases, createCase{name: "accepts " + a, edit: func(r *CreateRequest) { r.Amount = json.Number(a) }})
	}
	runCreateCases(t, cases)

	// The message names the field and the reason.
	r := validRequest()
	r.Amount = "0.001"
	_, err := ValidateCreate(r, pciMerchant(), testNow)
	if e, ok := AsError(err); !ok || e.Message != "amount "+ErrAmountPrecision.Error() {
		t.Errorf("error = %v, want message %q", err, "amount "+ErrAmountPrecision.Error())
	}
}

func TestValidateCreate_ExpiresInRange(t *testing.T) {
	invalid := []pc{{"expires_in", "parameter_invalid"}}
	runCreateCases(t, []createCase{
		{name: "rejects -1", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](-1) }, want: invalid},
		{name: "rejects 0", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](0) }, want: invalid},
		{name: "accepts 1", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](1) }},
		{name: "accepts 2592000", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](2592000) }},
		{name: "rejects 2592001", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](2592001) }, want: invalid},
		{name: "rejects huge", edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](1 << 62) }, want: invalid},
		// A clock advanced near its end: expires_at must stay a time an
		// answer can write (a year of four digits).
		{name: "accepts ending at the clock's last second", now: LastInstant().Add(-3600 * time.Second).Truncate(time.Second),
			edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](3600); r.PaymentMethod = nil }},
		{name: "rejects ending past the clock's last instant", now: LastInstant().Add(-3600 * time.Second),
			edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](3601); r.PaymentMethod = nil }, want: invalid},
		{name: "rejects 30 days from the clock's last week", now: LastInstant().Add(-7 * 24 * time.Hour),
			edit: func(r *CreateRequest) { r.ExpiresIn = ptr[Whole](MaxExpiresIn); r.PaymentMethod = nil }, want: invalid},
	})

	r := validRequest()
	r.ExpiresIn = ptr[Whole](MaxExpiresIn)
	v, err := ValidateCreate(r, pciMerchant(), testNow)
	if err != nil || v.Expires != 30*24*time.Hour {
		t.Errorf("Expires = %v, %v; want 720h, nil", v.Expires, err)
	}
}

func TestValidateCreate_MetadataMustBeObject(t *testing.T) {
	meta := func(s string) func(r *CreateRequest) {
		return func(r *CreateRequest) { r.Metadata = json.RawMessage(s) }
	}
	invalid := []pc{{"metadata", "parameter_invalid"}}
	runCreateCases(t, []createCase{
		{name: "accepts empty object", edit: meta(`{}`)},
		{name: "accepts nested object", edit: meta(`{"a":{"b":[1,2]},"c":null}`)},
		{name: "accepts object with spaces", edit: meta(" \n{ \"a\" : 1 }\n")},
		{name: "rejects array", edit: meta(`[]`), want: invalid},
		{name: "rejects array of objects", edit: meta(`[{"a":1}]`), want: invalid},
		{name: "rejects string", edit: meta(`"order 1"`), want: invalid},
		{name: "rejects number", edit: meta(`42`), want: invalid},
		{name: "rejects bool", edit: meta(`true`), want: invalid},
		{name: "rejects null", edit: meta(`null`), want: []pc{{"metadata", "parameter_missing"}}},
		{name: "rejects blank", edit: meta(`  `), want: []pc{{"metadata", "parameter_missing"}}},
	})
}

func TestValidateCreate_RedirectURLs(t *testing.T) {
	good := []string{
		"https://shop.example/success",
		"http://localhost:3000/callback?order=1&x=y",
		"HTTPS://SHOP.EXAMPLE/OK",
		"Http://shop.example",
		"http://127.0.0.1:8080/",
		"http://[::1]:8080/x",
	}
	bad := []string{
		"ftp://shop.example/file",
		"/relative/path",
		"success",
		"shop.example/success",
		"//shop.example/success",
		"https://",
		"http:///path-only",
		"http://:8080/port-only",
		"https://user:secret@shop.example/",
		"https://user@shop.example/",
		"javascript:alert(1)",
		"mailto:jane@example.com",
		"http:shop.example",
		"http://shop example/",
	}
	for _, field := range []string{"success_url", "cancel_url"} {
		set := func(u string) func(r *CreateRequest) {
			if field == "success_url" {
				return func(r *CreateRequest) { r.SuccessURL = u }
			}
			return func(r *CreateRequest) { r.CancelURL = u }
		}
		var cases []createCase
		for _, u := range good {
			cases = append(cases, createCase{name: fmt.Sprintf("%s accepts %q", field, u), edit: set(u)})
		}
		for _, u := range bad {
			cases = append(cases, createCase{name: fmt.Sprintf("%s rejects %q", field, u), edit: set(u), want: []pc{{field, "parameter_invalid"}}})
		}
		runCreateCases(t, cases)
	}
}

func TestValidRedirectURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://shop.example/ok", true},
		{"HTTP://shop.example", true},
		{"https://shop.example:8443/a/b?c=d#e", true},
		{"ftp://shop.example", false},
		{"https:/shop.example", false},
		{"http://:80", false},
		{"http://u:p@shop.example", false},
		{"", false},
		{"http://%zz", false},
		{"https://shop.example/caf%C3%A9?q=a%20b", true},
		{"https://[2001:db8::1]:8443/ok", true},
		// Characters no URI holds (RFC 3986), which url.Parse takes and
		// the contract's uri format, in every strict client, refuses.
		{"https://shop.example/a b", false},
		{"https://shop.example/?x=a b", false},
		{"https://shop.example/a|b", false},
		{`https://shop.example/<"x">`, false},
		{`https://shop.example/a\b`, false},
		{"https://shop.example/é", false},
		{"https://bücher.example/", false},
		{"https://shop.example/100%", false},
		// Brackets only around an IPv6 host, one # at most, a host of a
		// registered name's characters (RFC 3986): url.Parse takes these.
		{"http://a]/x", false},
		{"http://a/#x#y", false},
		{"http://a/x[1]", false},
		{"http://a/x]", false},
		{"http://a?q=[", false},
		{"http://[::1]x/", false},
		{"http://[fe80::1%25eth0]/", false},
		{"http://[v1.x]/", false},
		{"http://%41/x", false},
		{"http://%C3%A9.example/", false},
		{"http://a:8x/", false},
		{"http://a/x?q=1#f?g/h:@", true},
		{"http://[::ffff:192.0.2.1]/", true},
	} {
		if got := ValidRedirectURL(tc.url); got != tc.want {
			t.Errorf("ValidRedirectURL(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

func TestValidateCreate_CustomerEmail(t *testing.T) {
	email := func(s string) func(r *CreateRequest) { return func(r *CreateRequest) { r.Customer.Email = s } }
	invalid := []pc{{"customer.email", "parameter_invalid"}}
	runCreateCases(t, []createCase{
		{name: "accepts plain", edit: email("jane@example.com")},
		{name: "accepts plus and subdomain", edit: email("jane.doe+test@mail.example.co.uk")},
		{name: "rejects no at", edit: email("jane.example.com"), want: invalid},
		{name: "rejects no domain dot", edit: email("jane@localhost"), want: invalid},
		{name: "rejects display name", edit: email("Jane <jane@example.com>"), want: invalid},
		{name: "rejects surrounding space", edit: email(" jane@example.com"), want: invalid},
		{name: "rejects two ats", edit: email("jane@@example.com"), want: invalid},
	})
}

func TestValidEmail(t *testing.T) {
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("b", 57) + ".com" // 254 characters
	for _, tc := range []struct {
		email string
		want  bool
	}{
		{"a@b.co", true},
		{"jane@example.com", true},
		{"first.last+tag@sub.example.org", true},
		{long, true},
		{"x" + long, false}, // 255 characters
		{"", false},
		{"jane", false},
		{"@example.com", false},
		{"jane@", false},
		{"jane@example", false},
		{"jane@.example.com", false},
		{"jane@example.com.", false},
		{"Jane <jane@example.com>", false},
		{"<jane@example.com>", false},
		{"jane@example.com ", false},
		{"ja ne@example.com", false},
		// The contract's email format is ASCII dot-atoms: strict clients
		// refuse the rest in every answer that holds it.
		{"o'brien{x}@example.com", true},
		{"jöhn@example.com", false},
		{"john@bücher.example", false},
		{`"john doe"@example.com`, false},
		{"john@[192.0.2.1]", false},
		// Labels of letters, digits and inner dashes (RFC 5321), which
		// the email format asks for and net/mail does not.
		{"a@x-y.co", true},
		{"a@-x.co", false},
		{"a@x-.co", false},
		{"a@x_y.co", false},
		{"a@" + strings.Repeat("x", 63) + ".co", true},
		{"a@" + strings.Repeat("x", 64) + ".co", false},
	} {
		if got := ValidEmail(tc.email); got != tc.want {
			t.Errorf("ValidEmail(%q) = %v, want %v", tc.email, got, tc.want)
		}
	}
}

func TestValidateCreate_MccXorAccountID(t *testing.T) {
	both := func(r *CreateRequest) { r.MCC = ptr[Whole](5734); r.AccountID = ptr("acct_acme_main") }
	neither := func(r *CreateRequest) { r.MCC = nil; r.AccountID = nil }
	account := func(id string) func(r *CreateRequest) {
		return func(r *CreateRequest) { r.MCC = nil; r.AccountID = ptr(id) }
	}
	mcc := func(v Whole) func(r *CreateRequest) {
		return func(r *CreateRequest) { r.MCC = ptr(v); r.AccountID = nil }
	}
	runCreateCases(t, []createCase{
		{name: "rejects both mcc and account", edit: both, want: []pc{{"mcc", "parameter_conflict"}}},
		{name: "rejects neither mcc nor account", edit: neither, want: []pc{{"mcc", "parameter_missing"}}},
		{name: "accepts mcc 0", edit: mcc(0)},
		{name: "accepts mcc 9999", edit: mcc(9999)},
		{name: "rejects mcc -1", edit: mcc(-1), want: []pc{{"mcc", "parameter_invalid"}}},
		{name: "rejects mcc 10000", edit: mcc(10000), want: []pc{{"mcc", "parameter_invalid"}}},
		{name: "accepts active account", edit: account("acct_acme_main")},
		{name: "rejects inactive account", edit: account("acct_acme_old"), want: []pc{{"account_id", "account_inactive"}}},
		{name: "rejects unknown account", edit: account("acct_nope"), want: []pc{{"account_id", "account_unknown"}}},
		{name: "rejects empty account id", edit: account(""), want: []pc{{"account_id", "account_unknown"}}},
		{name: "rejects another merchant's account", edit: account("acct_plain_main"), want: []pc{{"account_id", "account_unknown"}}},
		{name: "account of the merchant itself", edit: account("acct_plain_main"), merchant: plainMerchant()},
	})
}

func TestValidateCreate_RejectsBothMccAndAccount(t *testing.T) {
	r := validRequest()
	r.AccountID = ptr("acct_acme_main")
	_, err := ValidateCreate(r, pciMerchant(), testNow)
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error = %v, want *Error", err)
	}
	if e.Type != InvalidRequest || e.Code != "parameter_conflict" || e.Param != "mcc" {
		t.Errorf("error = {%s %s %s}, want {invalid_request_error parameter_conflict mcc}", e.Type, e.Code, e.Param)
	}
}

func TestValidateCreate_PCIGate(t *testing.T) {
	tests := []struct {
		name     string
		req      func() CreateRequest
		merchant *Merchant
		wantPerm bool
	}{
		{"plain merchant with valid card", validCardRequest, plainMerchant(), true},
		{"plain merchant with card and other problems", func() CreateRequest {
			r := validCardRequest()
			r.Amount = ""
			r.Currency = "JPY"
			r.PaymentMethod.Card.CVC = "1"
			r.MCC = nil
			return r
		}, plainMerchant(), true},
		{"plain merchant with empty payment_method", func() CreateRequest {
			r := validRequest()
			r.PaymentMethod = &PaymentMethodInput{}
			return r
		}, plainMerchant(), true},
		{"plain merchant without card", validRequest, plainMerchant(), false},
		{"PCI merchant with card", validCardRequest, pciMerchant(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req()
			_, err := ValidateCreate(r, tc.merchant, testNow)
			e, isErr := AsError(err)
			gotPerm := isErr && e.Type == Permission
			if gotPerm != tc.wantPerm {
				t.Fatalf("permission error = %v (error %v), want %v", gotPerm, err, tc.wantPerm)
			}
			if gotPerm && (e.Param != "payment_method" || e.Code == "" || e.Message == "") {
				t.Errorf("permission error = %+v, want param payment_method with code and message", e)
			}
			if !tc.wantPerm && err != nil {
				t.Errorf("unexpected error %v", err)
			}
		})
	}
}

func TestValidateCreate_Card(t *testing.T) {
	card := func(f func(c *CardInput)) func(r *CreateRequest) {
		return func(r *CreateRequest) { f(r.PaymentMethod.Card) }
	}
	country := func(s string) func(r *CreateRequest) {
		return func(r *CreateRequest) { r.PaymentMethod.BillingDetails.Address.Country = s }
	}
	const (
		pNumber  = "payment_method.card.number"
		pMonth   = "payment_method.card.expiry_month"
		pYear    = "payment_method.card.expiry_year"
		pCVC     = "payment_method.card.cvc"
		pCountry = "payment_method.billing_details.address.country"
	)
	cases := []createCase{
		// Luhn and length.
		{name: "accepts 4242424242424242", edit: card(func(c *CardInput) { c.Number = "4242424242424242" })},
		{name: "accepts amex 15 digits", edit: card(func(c *CardInput) { c.Number = "378282246310005" })},
		{name: "accepts 19 digits", edit: card(func(c *CardInput) { c.Number = "6200000000000000000" })},
		{name: "rejects 4242424242424241 (Luhn)", edit: card(func(c *CardInput) { c.Number = "4242424242424241" }), want: []pc{{pNumber, "card_number_invalid"}}},
		{name: "rejects spaces", edit: card(func(c *CardInput) { c.Number = "4242 4242 4242 4242" }), want: []pc{{pNumber, "card_number_invalid"}}},
		// An empty required string is missing, as the contract says it.
		{name: "rejects empty number as missing", edit: card(func(c *CardInput) { c.Number = "" }), want: []pc{{pNumber, "parameter_missing"}}},
		{name: "rejects 11 Luhn-valid digits", edit: card(func(c *CardInput) { c.Number = "42424242420" }), want: []pc{{pNumber, "card_number_invalid"}}},
		{name: "accepts 12 digits", edit: card(func(c *CardInput) { c.Number = "424242424242" })},
		{name: "rejects 20 Luhn-valid digits", edit: card(func(c *CardInput) { c.Number = "42424242424242424242" }), want: []pc{{pNumber, "card_number_invalid"}}},
		// Expiry month.
		{name: "rejects month 0", edit: card(func(c *CardInput) { c.ExpiryMonth = 0 }), want: []pc{{pMonth, "parameter_invalid"}}},
		{name: "accepts month 1", edit: card(func(c *CardInput) { c.ExpiryMonth = 1 })},
		{name: "accepts month 12", edit: card(func(c *CardInput) { c.ExpiryMonth = 12 })},
		{name: "rejects month 13", edit: card(func(c *CardInput) { c.ExpiryMonth = 13 }), want: []pc{{pMonth, "parameter_invalid"}}},
		// Expiry year: four digits.
		{name: "rejects two-digit year", edit: card(func(c *CardInput) { c.ExpiryYear = 30 }), want: []pc{{pYear, "parameter_invalid"}}},
		{name: "rejects five-digit year", edit: card(func(c *CardInput) { c.ExpiryYear = 20300 }), want: []pc{{pYear, "parameter_invalid"}}},
		{name: "rejects three-digit year as malformed, not expired", edit: card(func(c *CardInput) { c.ExpiryYear = 999 }), want: []pc{{pYear, "parameter_invalid"}}},
		{name: "rejects year 1486, four digits but no card's", edit: card(func(c *CardInput) { c.ExpiryYear = 1486 }), want: []pc{{pYear, "parameter_invalid"}}},
		{name: "rejects year 1999 as malformed, not expired", edit: card(func(c *CardInput) { c.ExpiryYear = 1999 }), want: []pc{{pYear, "parameter_invalid"}}},
		// The spec asks four digits, DESIGN.md not in the past: any year
		// up to 9999, the last of four digits.
		{name: "accepts year 2101", edit: card(func(c *CardInput) { c.ExpiryYear = 2101 })},
		{name: "accepts year 9999", edit: card(func(c *CardInput) { c.ExpiryYear = 9999 })},
		{name: "rejects year 10000", edit: card(func(c *CardInput) { c.ExpiryYear = 10000 }), want: []pc{{pYear, "parameter_invalid"}}},
		{name: "rejects month and year together", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 0, 0 }), want: []pc{{pMonth, "parameter_invalid"}, {pYear, "parameter_invalid"}}},
		{name: "accepts year 2100", edit: card(func(c *CardInput) { c.ExpiryYear = 2100 })},
		// Not expired (testNow is May 2026; valid through the end of the month).
		{name: "rejects last month", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 4, 2026 }), want: []pc{{pYear, "card_expired"}}},
		{name: "accepts this month", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 5, 2026 })},
		{name: "accepts next month", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 6, 2026 })},
		{name: "rejects last year later month", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 12, 2025 }), want: []pc{{pYear, "card_expired"}}},
		{name: "accepts next year earlier month", edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 1, 2027 })},
		{name: "accepts this month on its last second", now: time.Date(2026, time.May, 31, 23, 59, 59, 0, time.UTC),
			edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 5, 2026 })},
		{name: "rejects a month once it is over", now: time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC),
			edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 5, 2026 }), want: []pc{{pYear, "card_expired"}}},
		{name: "judges expiry in UTC (local June 1st is UTC May 31st)", now: time.Date(2026, time.June, 1, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
			edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 5, 2026 })},
		{name: "judges expiry in UTC (local May 31st is UTC June 1st)", now: time.Date(2026, time.May, 31, 23, 0, 0, 0, time.FixedZone("BRT", -3*3600)),
			edit: card(func(c *CardInput) { c.ExpiryMonth, c.ExpiryYear = 5, 2026 }), want: []pc{{pYear, "card_expired"}}},
		// CVC.
		{name: "rejects 2-digit cvc", edit: card(func(c *CardInput) { c.CVC = "12" }), want: []pc{{pCVC, "parameter_invalid"}}},
		{name: "accepts 3-digit cvc", edit: card(func(c *CardInput) { c.CVC = "123" })},
		{name: "accepts 4-digit cvc", edit: card(func(c *CardInput) { c.CVC = "1234" })},
		{name: "rejects 5-digit cvc", edit: card(func(c *CardInput) { c.CVC = "12345" }), want: []pc{{pCVC, "parameter_invalid"}}},
		{name: "rejects non-digit cvc", edit: card(func(c *CardInput) { c.CVC = "12a" }), want: []pc{{pCVC, "parameter_invalid"}}},
		{name: "rejects empty cvc as missing", edit: card(func(c *CardInput) { c.CVC = "" }), want: []pc{{pCVC, "parameter_missing"}}},
		// Billing country.
		{name: "accepts country GB", edit: country("GB")},
		{name: "accepts country left out", edit: country("")},
		{name: "accepts address left out", edit: func(r *CreateRequest) { r.PaymentMethod.BillingDetails.Address = nil }},
		{name: "rejects lower-case country", edit: country("us"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects three-letter country", edit: country("USA"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects one-letter country", edit: country("U"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects digits as country", edit: country("12"), want: []pc{{pCountry, "parameter_invalid"}}},
		// "Two-letter ISO 3166-1 country code": one ISO has assigned.
		{name: "accepts country US", edit: country("US")},
		{name: "accepts country DE", edit: country("DE")},
		{name: "accepts Antarctica, AQ", edit: country("AQ")},
		{name: "accepts Bouvet Island, BV", edit: country("BV")},
		{name: "accepts South Sudan, SS", edit: country("SS")},
		{name: "accepts the Åland Islands, AX", edit: country("AX")},
		{name: "rejects ZZ, unassigned", edit: country("ZZ"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects UK, reserved for the United Kingdom, whose code is GB", edit: country("UK"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects EU, reserved, no country", edit: country("EU"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects XK, user-assigned", edit: country("XK"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects QO, user-assigned", edit: country("QO"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects AA, user-assigned", edit: country("AA"), want: []pc{{pCountry, "parameter_invalid"}}},
		{name: "rejects AN, withdrawn", edit: country("AN"), want: []pc{{pCountry, "parameter_invalid"}}},
		// Shape of payment_method.
		{name: "rejects type other than card", edit: func(r *CreateRequest) { r.PaymentMethod.Type = "sepa_debit" }, want: []pc{{"payment_method.type", "parameter_invalid"}}},
		{name: "rejects missing type as missing, as the contract does", edit: func(r *CreateRequest) { r.PaymentMethod.Type = "" }, want: []pc{{"payment_method.type", "parameter_missing"}}},
		{name: "rejects missing card", edit: func(r *CreateRequest) { r.PaymentMethod.Card = nil }, want: []pc{{"payment_method.card", "parameter_missing"}}},
	}
	for i := range cases {
		cases[i].base = validCardRequest
	}
	runCreateCases(t, cases)
}

func TestValidateCreate_ReportsAllViolationsTogether(t *testing.T) {
	r := validCardRequest()
	r.Currency = "JPY"
	r.ExpiresIn = ptr[Whole](0)
	r.PaymentMethod.Card.CVC = "12"
	_, err := ValidateCreate(r, pciMerchant(), testNow)
	want := []pc{
		{"currency", "parameter_invalid"},
		{"expires_in", "parameter_invalid"},
		{"payment_method.card.cvc", "parameter_invalid"},
	}
	if got := violations(t, err); !equalPCs(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	e, _ := AsError(err)
	first := e.Violations[0]
	if e.Code != first.Code || e.Message != first.Message || e.Param != first.Param {
		t.Errorf("error {%s %q %s} does not match its first violation %+v", e.Code, e.Message, e.Param, first)
	}
	for _, v := range e.Violations {
		if !strings.Contains(err.Error(), v.Message) {
			t.Errorf("Error() = %q lacks %q", err.Error(), v.Message)
		}
	}
}

func TestValidateCreate_EmptyRequestListsEveryMissingField(t *testing.T) {
	_, err := ValidateCreate(CreateRequest{}, pciMerchant(), testNow)
	want := []pc{
		{"amount", "parameter_missing"},
		{"currency", "parameter_missing"},
		{"customer", "parameter_missing"},
		{"description", "parameter_missing"},
		{"expires_in", "parameter_missing"},
		{"metadata", "parameter_missing"},
		{"success_url", "parameter_missing"},
		{"cancel_url", "parameter_missing"},
		{"mcc", "parameter_missing"},
	}
	if got := violations(t, err); !equalPCs(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
	if e, _ := AsError(err); e.Param != "amount" || e.Message != "amount is required" {
		t.Errorf("error param/message = %q/%q, want amount/%q", e.Param, e.Message, "amount is required")
	}
}

func TestValidateCreate_CardAndRequestViolationsTogether(t *testing.T) {
	r := validCardRequest()
	r.Customer.Email = "not-an-email"
	r.PaymentMethod.Card.Number = "4242424242424241"
	r.PaymentMethod.Card.ExpiryMonth = 13
	r.PaymentMethod.BillingDetails.Address.Country = "usa"
	_, err := ValidateCreate(r, pciMerchant(), testNow)
	want := []pc{
		{"customer.email", "parameter_invalid"},
		{"payment_method.card.number", "card_number_invalid"},
		{"payment_method.card.expiry_month", "parameter_invalid"},
		{"payment_method.billing_details.address.country", "parameter_invalid"},
	}
	if got := violations(t, err); !equalPCs(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
}

func TestValidateCreate_ErrorsNeverCarryCardData(t *testing.T) {
	r := validCardRequest()
	r.PaymentMethod.Card.ExpiryYear = 2020
	r.Currency = "JPY"
	_, err := ValidateCreate(r, pciMerchant(), testNow)
	if err == nil {
		t.Fatal("want an error")
	}
	e, _ := AsError(err)
	text := fmt.Sprintf("%v %+v %#v", err, *e, e.Violations)
	for _, secret := range []string{testCardNumber, testCVC} {
		if strings.Contains(text, secret) {
			t.Errorf("error text contains card data %q: %s", secret, text)
		}
	}
}

func TestCardInput_FormattingRedactsCardData(t *testing.T) {
	c := CardInput{Number: testCardNumber, ExpiryMonth: 12, ExpiryYear: 2030, CVC: testCVC}
	pm := PaymentMethodInput{Type: "card", Card: &c}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{c, &c, pm.Card} {
			out := fmt.Sprintf(format, v)
			if strings.Contains(out, testCardNumber) || strings.Contains(out, testCVC) {
				t.Errorf("Sprintf(%q, %T) = %q leaks card data", format, v, out)
			}
		}
	}
}

func TestValidateCreate_ErrorIsAnError(t *testing.T) {
	_, err := ValidateCreate(CreateRequest{}, pciMerchant(), testNow)
	var e *Error
	if !errors.As(fmt.Errorf("wrapped: %w", err), &e) {
		t.Fatalf("wrapped create error is not a *Error")
	}
}
