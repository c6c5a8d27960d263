// A payment's JSON: the golden form and the amount's wire form.

package paymock

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// samplePayment is a pending checkout payment with fixed values.
func samplePayment() Payment {
	created := time.Date(2026, time.May, 15, 12, 34, 56, 0, time.UTC)
	return Payment{
		ID:          "pay_0123456789ABCDEFGHIJklmn",
		MerchantID:  "acme",
		Amount:      1050,
		Currency:    EUR,
		Status:      StatusPending,
		Customer:    Customer{ID: "cus_1", Email: "jane@example.com", Name: "Jane Doe"},
		Description: "Order #1001",
		Metadata:    json.RawMessage(`{"z":1,"a":"b"}`),
		SuccessURL:  "https://shop.example/success",
		CancelURL:   "https://shop.example/cancel",
		CheckoutURL: "https://pay.example/checkout/pay_0123456789ABCDEFGHIJklmn",
		CreatedAt:   created,
		UpdatedAt:   created,
		ExpiresAt:   created.Add(time.Hour),
	}
}

func cardPayment() Payment {
	p := samplePayment()
	p.CheckoutURL = "https://pay.example/3ds/" + p.ID
	p.PaymentMethod = &PaymentMethod{
		Type: "card",
		Card: CardSummary{Brand: "visa", Last4: "4242", ExpiryMonth: 12, ExpiryYear: 2030},
	}
	return p
}

// fields decodes an encoded payment into its top-level members.
func fields(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("payment JSON does not decode: %v\n%s", err, b)
	}
	return m
}

func encode(t *testing.T, p Payment, enc Encoding) map[string]json.RawMessage {
	t.Helper()
	b, err := p.Encode(enc)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return fields(t, b)
}

func TestPayment_MarshalJSONGolden(t *testing.T) {
	b, err := json.Marshal(samplePayment())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"pay_0123456789ABCDEFGHIJklmn","amount":10.50,"currency":"EUR","status":"pending",` +
		`"customer":{"id":"cus_1","email":"jane@example.com","name":"Jane Doe"},"description":"Order #1001",` +
		`"metadata":{"z":1,"a":"b"},"success_url":"https://shop.example/success","cancel_url":"https://shop.example/cancel",` +
		`"next_action":{"url":"https://pay.example/checkout/pay_0123456789ABCDEFGHIJklmn"},` +
		`"payment_link":"https://pay.example/checkout/pay_0123456789ABCDEFGHIJklmn","payment_method":null,` +
		`"completed_at":null,"created_at":"2026-05-15T12:34:56Z","updated_at":"2026-05-15T12:34:56Z","expires_at":"2026-05-15T13:34:56Z"}`
	if string(b) != want {
		t.Errorf("json.Marshal(payment) =\n%s\nwant\n%s", b, want)
	}
	// MerchantID and CheckoutURL are internal.
	m := fields(t, b)
	for _, k := range []string{"merchant_id", "MerchantID", "checkout_url", "CheckoutURL"} {
		if _, ok := m[k]; ok {
			t.Errorf("internal field %q is on the wire", k)
		}
	}
}

func TestPayment_AmountWireForm(t *testing.T) {
	tests := []struct {
		amount Amount
		enc    Encoding
		want   string
	}{
		{1050, Encoding{}, `10.50`},
		{5, Encoding{}, `0.05`},
		{123400, Encoding{}, `1234.00`},
		{MaxAmount, Encoding{}, `999999999.99`},
		{1050, Encoding{AmountAsString: true}, `"10.50"`},
		{5, Encoding{AmountAsString: true}, `"0.05"`},
		{123400, Encoding{AmountAsString: true}, `"1234.00"`},
	}
	for _, tc := range tests {
		p := samplePayment()
		p.Amount = tc.amount
		if got := string(encode(t, p, tc.enc)["amount"]); got != tc.want {
			t.Errorf("amount %d with %+v = %s, want %s", tc.amount, tc.enc, got, tc.want)
		}
	}

	// The default form is a JSON number that decodes exactly.
	b, err := json.Marshal(samplePayment())
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Amount any }
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if n, ok := v.Amount.(json.Number); !ok || n != "10.50" {
		t.Errorf("amount decodes as %T %v, want json.Number 10.50", v.Amount, v.Amount)
	}
}

func TestPayment_StatusSpelling(t *testing.T) {
	for _, tc := range []struct {
		status    Status
		succeeded bool
		want      string
	}{
		{StatusPending, false, `"pending"`},
		{StatusPending, true, `"pending"`},
		{StatusCompleted, false, `"completed"`},
		{StatusCompleted, true, `"succeeded"`},
		{StatusExpired, false, `"expired"`},
		{StatusExpired, true, `"expired"`},
		{StatusFailed, false, `"failed"`},
		{StatusFailed, true, `"failed"`},
	} {
		p := samplePayment()
		p.Status = tc.status
		if got := string(encode(t, p, Encoding{StatusSucceeded: tc.succeeded})["status"]); got != tc.want {
			t.Errorf("status %s with StatusSucceeded=%v = %s, want %s", tc.status, tc.succeeded, got, tc.want)
		}
	}
}

func TestStatus_Final(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		want bool
	}{
		{StatusPending, false},
		{StatusCompleted, true},
		{StatusSucceeded, true},
		{StatusExpired, true},
		{StatusFailed, true},
	} {
		if got := tc.s.Final(); got != tc.want {
			t.Errorf("%s.Final() = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestPayment_NextActionOnlyWhilePending(t *testing.T) {
	for _, tc := range []struct {
		status Status
		card   bool
		want   string
	}{
		{StatusPending, false, `{"url":"https://pay.example/checkout/pay_0123456789ABCDEFGHIJklmn"}`},
		{StatusPending, true, `{"url":"https://pay.example/3ds/pay_0123456789ABCDEFGHIJklmn"}`},
		{StatusCompleted, false, `null`},
		{StatusCompleted, true, `null`},
		{StatusExpired, false, `null`},
		{StatusFailed, true, `null`},
	} {
		p := samplePayment()
		if tc.card {
			p = cardPayment()
		}
		p.Status = tc.status
		got, ok := encode(t, p, Encoding{})["next_action"]
		if !ok {
			t.Errorf("%s card=%v: next_action missing, want %s", tc.status, tc.card, tc.want)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s card=%v: next_action = %s, want %s", tc.status, tc.card, got, tc.want)
		}
	}
}

func TestPayment_PaymentLink(t *testing.T) {
	link := `"https://pay.example/checkout/pay_0123456789ABCDEFGHIJklmn"`
	for _, tc := range []struct {
		name   string
		card   bool
		status Status
		enc    Encoding
		want   string // "" means absent
	}{
		{"card-less pending", false, StatusPending, Encoding{}, link},
		{"card-less completed keeps the link", false, StatusCompleted, Encoding{}, link},
		{"card-less with OmitPaymentLink", false, StatusPending, Encoding{OmitPaymentLink: true}, ""},
		{"card payment", true, StatusPending, Encoding{}, ""},
		{"card payment with OmitPaymentLink", true, StatusPending, Encoding{OmitPaymentLink: true}, ""},
	} {
		p := samplePayment()
		if tc.card {
			p = cardPayment()
		}
		p.Status = tc.status
		got, ok := encode(t, p, tc.enc)["payment_link"]
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s: payment_link = %s, want absent", tc.name, got)
		case tc.want != "" && string(got) != tc.want:
			t.Errorf("%s: payment_link = %s (present %v), want %s", tc.name, got, ok, tc.want)
		}
	}
}

func TestPayment_PaymentMethodWireForm(t *testing.T) {
	got := string(encode(t, cardPayment(), Encoding{})["payment_method"])
	want := `{"type":"card","card":{"brand":"visa","last4":"4242","expiry_month":12,"expiry_year":2030}}`
	if got != want {
		t.Errorf("payment_method = %s, want %s", got, want)
	}
	p := cardPayment()
	p.PaymentMethod.BillingDetails = &BillingDetails{Name: "Jane Doe", Address: &Address{Country: "US", City: "Springfield"}}
	got = string(encode(t, p, Encoding{})["payment_method"])
	want = `{"type":"card","card":{"brand":"visa","last4":"4242","expiry_month":12,"expiry_year":2030},` +
		`"billing_details":{"name":"Jane Doe","address":{"city":"Springfield","country":"US"}}}`
	if got != want {
		t.Errorf("payment_method = %s, want %s", got, want)
	}
	if got := string(encode(t, samplePayment(), Encoding{})["payment_method"]); got != "null" {
		t.Errorf("card-less payment_method = %s, want null", got)
	}
}

func TestPayment_CompletedAt(t *testing.T) {
	p := samplePayment()
	if got := string(encode(t, p, Encoding{})["completed_at"]); got != "null" {
		t.Errorf("completed_at while pending = %s, want null", got)
	}
	p.Status = StatusCompleted
	p.CompletedAt = time.Date(2026, time.May, 15, 13, 0, 1, 999_999_999, time.FixedZone("X", 3600))
	if got := string(encode(t, p, Encoding{})["completed_at"]); got != `"2026-05-15T12:00:01Z"` {
		t.Errorf("completed_at = %s, want \"2026-05-15T12:00:01Z\"", got)
	}
}

func TestPayment_TimestampsAreUTCWholeSeconds(t *testing.T) {
	zone := time.FixedZone("UTC-7", -7*3600)
	p := samplePayment()
	p.CreatedAt = time.Date(2026, time.December, 31, 20, 59, 59, 999_000_000, zone)
	p.UpdatedAt = time.Date(2027, time.January, 1, 0, 0, 0, 1, time.UTC)
	p.ExpiresAt = time.Date(2027, time.January, 1, 1, 2, 3, 0, time.UTC)
	p.CompletedAt = time.Date(2026, time.December, 31, 21, 0, 0, 0, zone)
	m := encode(t, p, Encoding{})
	layout := regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"$`)
	for k, want := range map[string]string{
		"created_at":   `"2027-01-01T03:59:59Z"`,
		"updated_at":   `"2027-01-01T00:00:00Z"`,
		"expires_at":   `"2027-01-01T01:02:03Z"`,
		"completed_at": `"2027-01-01T04:00:00Z"`,
	} {
		got := string(m[k])
		if got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
		if !layout.MatchString(got) {
			t.Errorf("%s = %s does not match YYYY-MM-DDThh:mm:ssZ", k, got)
		}
	}
}

func TestFormatTime(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC), "2026-01-02T03:04:05Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("+0530", 5*3600+1800)), "2026-01-01T21:34:05Z"},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("-1", -3600)), "2026-01-01T01:00:00Z"},
	} {
		if got := FormatTime(tc.t); got != tc.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestPayment_Metadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta json.RawMessage
		want string
	}{
		{"nil becomes {}", nil, `{}`},
		{"empty becomes {}", json.RawMessage{}, `{}`},
		{"kept in key order", json.RawMessage(`{"z":1,"a":{"y":2,"b":3}}`), `{"z":1,"a":{"y":2,"b":3}}`},
		{"empty object", json.RawMessage(`{}`), `{}`},
	} {
		p := samplePayment()
		p.Metadata = tc.meta
		b, err := p.Encode(Encoding{})
		if err != nil {
			t.Errorf("%s: Encode: %v", tc.name, err)
			continue
		}
		if got := string(fields(t, b)["metadata"]); got != tc.want {
			t.Errorf("%s: metadata = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPayment_MarshalJSONIsTheDefaultEncoding(t *testing.T) {
	for _, p := range []Payment{samplePayment(), cardPayment()} {
		a, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Encode(Encoding{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("json.Marshal = %s\nEncode(Encoding{}) = %s", a, b)
		}
		// A pointer marshals the same, as inside a list envelope.
		c, err := json.Marshal(&p)
		if err != nil || !bytes.Equal(a, c) {
			t.Errorf("json.Marshal(&p) = %s, %v", c, err)
		}
	}
}
