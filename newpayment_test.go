// Making a payment of a validated create request: its fields, metadata
// kept byte for byte and not shared with the request, and no payment
// method without a card.

package paymock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNewPayment(t *testing.T) {
	r := validCardRequest()
	r.Metadata = json.RawMessage(" {\n  \"zeta\": 1,\n  \"alpha\": [1, 2, {\"b\": \"x  y\", \"a\": null}],\n  \"mid\": {\"k\": \"v\"}\n} ")
	r.ExpiresIn = ptr[Whole](3600)
	m := pciMerchant()
	v, err := ValidateCreate(r, m, testNow)
	if err != nil {
		t.Fatalf("ValidateCreate: %v", err)
	}
	cust := Customer{ID: "cus_1", Email: "jane@example.com", Name: "Jane Doe"}
	// now in another zone, with nanoseconds: the payment's times are UTC
	// whole seconds.
	now := testNow.In(time.FixedZone("X", -7*3600))
	p := NewPayment(v, NewPaymentInput{ID: "pay_1", Merchant: m, Customer: cust, PublicURL: "https://pay.example", Now: now})

	wantCreated := time.Date(2026, time.May, 15, 12, 34, 56, 0, time.UTC)
	checks := []struct {
		name      string
		got, want any
	}{
		{"ID", p.ID, "pay_1"},
		{"MerchantID", p.MerchantID, "acme"},
		{"Amount", p.Amount, Amount(1050)},
		{"Currency", p.Currency, USD},
		{"Status", p.Status, StatusPending},
		{"Customer", p.Customer, cust},
		{"Description", p.Description, "Order #1001"},
		{"SuccessURL", p.SuccessURL, "https://shop.example/success"},
		{"CancelURL", p.CancelURL, "https://shop.example/cancel"},
		{"CheckoutURL", p.CheckoutURL, "https://pay.example/3ds/pay_1"},
		{"CreatedAt", p.CreatedAt, wantCreated},
		{"UpdatedAt", p.UpdatedAt, wantCreated},
		{"ExpiresAt", p.ExpiresAt, wantCreated.Add(time.Hour)},
		{"CreatedAt location", p.CreatedAt.Location(), time.UTC},
		{"CompletedAt zero", p.CompletedAt.IsZero(), true},
		{"Metadata", string(p.Metadata), `{"zeta":1,"alpha":[1,2,{"b":"x  y","a":null}],"mid":{"k":"v"}}`},
		{"PaymentMethod.Type", p.PaymentMethod.Type, "card"},
		{"PaymentMethod.Card", p.PaymentMethod.Card, CardSummary{Brand: "visa", Last4: "4242", ExpiryMonth: 12, ExpiryYear: 2030}},
		{"BillingDetails.Name", p.PaymentMethod.BillingDetails.Name, "Jane Doe"},
		{"BillingDetails.Country", p.PaymentMethod.BillingDetails.Address.Country, "US"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !p.CreatedAt.Equal(p.UpdatedAt) {
		t.Errorf("created_at %v != updated_at %v", p.CreatedAt, p.UpdatedAt)
	}

	for _, enc := range []Encoding{{}, {AmountAsString: true}, {StatusSucceeded: true, OmitPaymentLink: true}} {
		b, err := p.Encode(enc)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", enc, err)
		}
		for _, secret := range []string{testCardNumber, testCVC, `"number"`, `"cvc"`} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("Encode(%+v) contains %s: %s", enc, secret, b)
			}
		}
		if !bytes.Contains(b, []byte(`"last4":"4242"`)) || !bytes.Contains(b, []byte(`"brand":"visa"`)) {
			t.Errorf("Encode(%+v) lacks brand/last4: %s", enc, b)
		}
	}
	if s := fmt.Sprintf("%+v", p); strings.Contains(s, testCardNumber) || strings.Contains(s, testCVC) {
		t.Errorf("%%+v of the payment leaks card data: %s", s)
	}
}

func TestNewPayment_MetadataKeptByteForByte(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{` { "b" : 1 , "a" : 2 } `, `{"b":1,"a":2}`},
		{`{"n":1.50,"e":1E+2,"big":12345678901234567890}`, `{"n":1.50,"e":1E+2,"big":12345678901234567890}`},
		{`{"s":"a  b\n\u00e9 \"q\" <&>"}`, `{"s":"a  b\n\u00e9 \"q\" <&>"}`},
		{`{"dup":1,"dup":2}`, `{"dup":1,"dup":2}`},
	} {
		r := validRequest()
		r.Metadata = json.RawMessage(tc.in)
		v, err := ValidateCreate(r, pciMerchant(), testNow)
		if err != nil {
			t.Fatalf("ValidateCreate(%s): %v", tc.in, err)
		}
		p := NewPayment(v, NewPaymentInput{ID: "pay_1", Merchant: pciMerchant(), PublicURL: "https://pay.example", Now: testNow})
		if string(p.Metadata) != tc.want {
			t.Errorf("metadata %s stored as %s, want %s", tc.in, p.Metadata, tc.want)
		}
	}
}

func TestNewPayment_WithoutCardHasNoPaymentMethod(t *testing.T) {
	v, err := ValidateCreate(validRequest(), pciMerchant(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPayment(v, NewPaymentInput{ID: "pay_1", Merchant: pciMerchant(), PublicURL: "https://pay.example", Now: testNow})
	if p.PaymentMethod != nil {
		t.Errorf("PaymentMethod = %+v, want nil", p.PaymentMethod)
	}
	if p.CheckoutURL != "https://pay.example/checkout/pay_1" {
		t.Errorf("CheckoutURL = %q", p.CheckoutURL)
	}
}

func TestNewPayment_DoesNotAliasRequestMetadata(t *testing.T) {
	r := validRequest()
	r.Metadata = json.RawMessage(`{"a":1}`)
	v, err := ValidateCreate(r, pciMerchant(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPayment(v, NewPaymentInput{ID: "pay_1", Merchant: pciMerchant(), PublicURL: "u", Now: testNow})
	r.Metadata[5] = '9'
	if string(p.Metadata) != `{"a":1}` {
		t.Errorf("payment metadata changed with the request's buffer: %s", p.Metadata)
	}
}
