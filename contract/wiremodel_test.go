// Tests that checking a payment answer from its values passes exactly
// what the compiled check of its bytes passes, and nothing kin-openapi
// refuses.

package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/paymock/paymock"
)

// modelCase is an operation whose answer is a payment.
type modelCase struct {
	name   string
	d      *Document
	r      *http.Request
	rt     *Route
	status int
}

func modelCases(t testing.TB) []modelCase {
	t.Helper()
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var out []modelCase
	for _, c := range []struct {
		d              *Document
		method, path   string
		status         int
		needsModelName string
	}{
		{docs.Service, http.MethodGet, "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", 200, "retrievePayment"},
		{docs.Service, http.MethodPost, "/api/v1/payments", 201, "createPayment"},
		{docs.Sandbox, http.MethodPost, "/_sandbox/payments/pay_eX4wfP3t53uWYeLytOXuTdQK/complete", 200, "complete"},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		rt, err := c.d.Match(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, modelCase{name: c.needsModelName, d: c.d, r: r, rt: rt, status: c.status})
	}
	return out
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// kinResponse is kin-openapi's own verdict on an answer, without the
// compiled checks.
func kinResponse(c modelCase, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: c.r, PathParams: c.rt.Params, Route: c.rt.Route, Options: c.d.respOpts},
		Status:                 c.status,
		Header:                 jsonHeader,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                c.d.respOpts,
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// modelVerdict is the model's verdict on w, or false where no model
// applies.
func modelVerdict(c modelCase, w *paymock.WirePayment) bool {
	k := c.d.responseCheck(c.rt, c.status, jsonHeader)
	m := c.d.payModels[k]
	return k != nil && m != nil && m.valid(w)
}

func modelPayment() paymock.Payment {
	at := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	return paymock.Payment{ID: "pay_eX4wfP3t53uWYeLytOXuTdQK", MerchantID: "mer_1", Amount: 1050, Currency: "USD",
		Status: paymock.StatusPending, Customer: paymock.Customer{ID: "cus_IwedGhNUwYReemdqbSIibeTf", Email: "jane@example.com", Name: "Jane"},
		Description: "Order 1", Metadata: json.RawMessage(`{"order_id":"ord_1"}`), SuccessURL: "https://shop.example.com/ok",
		CancelURL: "https://shop.example.com/no", CheckoutURL: "http://localhost:8080/checkout/pay_eX4wfP3t53uWYeLytOXuTdQK",
		CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
}

// agree fails when the model and the byte check disagree on p under
// enc, or the model passes what kin refuses.
func agree(t *testing.T, c modelCase, p paymock.Payment, enc paymock.Encoding) (modelValid bool) {
	t.Helper()
	b, w, plain, err := p.EncodePlain(enc)
	if err != nil || !plain {
		return false
	}
	got := modelVerdict(c, &w)
	if want := c.d.responseValid(c.rt, c.status, jsonHeader, b); got != want {
		t.Fatalf("%s: the model says valid=%v, the byte check %v:\n%s", c.name, got, want, b)
	}
	if got {
		if err := kinResponse(c, b); err != nil {
			t.Fatalf("%s: the model passed what kin refuses (%v):\n%s", c.name, err, b)
		}
	}
	return got
}

var modelEncodings = []paymock.Encoding{{}, {AmountAsString: true}, {StatusSucceeded: true}, {OmitPaymentLink: true}}

func TestPaymentModel_CoversThePaymentAnswers(t *testing.T) {
	// A payment answer that falls back to reading its bytes again is a
	// slower server: this test names it.
	for _, c := range modelCases(t) {
		for _, status := range []paymock.Status{paymock.StatusPending, paymock.StatusCompleted} {
			p := modelPayment()
			if status == paymock.StatusCompleted {
				p.Status, p.CompletedAt = status, p.CreatedAt.Add(time.Minute)
			}
			for _, enc := range modelEncodings {
				if !agree(t, c, p, enc) {
					t.Errorf("%s: a %s payment under %+v is not checked from its values", c.name, status, enc)
				}
			}
		}
	}
}

func TestPaymentModel_RefusesEveryBrokenPayment(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(*paymock.Payment)
		encs  []paymock.Encoding // all of modelEncodings when nil
	}{
		{"empty id", func(p *paymock.Payment) { p.ID = "" }, nil},
		{"empty customer id", func(p *paymock.Payment) { p.Customer.ID = "" }, nil},
		{"broken email", func(p *paymock.Payment) { p.Customer.Email = "jane" }, nil},
		{"broken uri", func(p *paymock.Payment) { p.SuccessURL = "no scheme" }, nil},
		{"broken checkout uri", func(p *paymock.Payment) { p.CheckoutURL = "no scheme" }, nil},
		{"currency not in the enum", func(p *paymock.Payment) { p.Currency = "XXX" }, nil},
		{"status not in the enum", func(p *paymock.Payment) { p.Status = "paid" }, nil},
		// Both wire forms of the amount are bounded alike: 0.00 and
		// "0.00" are out.
		{"amount zero", func(p *paymock.Payment) { p.Amount = 0 }, nil},
		{"amount negative", func(p *paymock.Payment) { p.Amount = -1 }, nil},
		{"amount past the maximum", func(p *paymock.Payment) { p.Amount = paymock.MaxAmount + 1 }, nil},
		{"metadata not an object", func(p *paymock.Payment) { p.Metadata = json.RawMessage(`["a"]`) }, nil},
		{"metadata null", func(p *paymock.Payment) { p.Metadata = json.RawMessage(`null`) }, nil},
		{"metadata with a duplicated key", func(p *paymock.Payment) { p.Metadata = json.RawMessage(`{"a":1,"a":2}`) }, nil},
		{"time before year 0", func(p *paymock.Payment) { p.CreatedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, nil},
		{"completed time past year 9999", func(p *paymock.Payment) {
			p.Status, p.CompletedAt = paymock.StatusCompleted, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		}, nil},
	}
	for _, c := range modelCases(t) {
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				p := modelPayment()
				tc.spoil(&p)
				encs := tc.encs
				if encs == nil {
					encs = modelEncodings
				}
				for _, enc := range encs {
					if _, _, plain, _ := p.EncodePlain(enc); !plain {
						t.Fatalf("not written by hand under %+v: the model is not asked", enc)
					}
					if agree(t, c, p, enc) {
						t.Errorf("passed under %+v", enc)
					}
				}
			})
		}
	}
}

func TestValidatePaymentResponse_ChecksTheBytesWhereTheModelRefuses(t *testing.T) {
	c := modelCases(t)[0]
	p := modelPayment()
	p.Currency = "XXX"
	b, w, plain, err := p.EncodePlain(paymock.Encoding{})
	if err != nil || !plain {
		t.Fatalf("not plain: %v", err)
	}
	err = c.d.ValidatePaymentResponse(context.Background(), c.r, c.rt, c.status, jsonHeader, b, &w)
	if err == nil || !strings.Contains(err.Error(), "currency") {
		t.Errorf("got %v, want kin's violation of currency", err)
	}
}

// FuzzPaymentModel_AgreesWithTheByteCheck compares the model with the
// compiled check of the encoder's bytes, and with kin-openapi, on
// payments of arbitrary strings, amounts, times and metadata.
func FuzzPaymentModel_AgreesWithTheByteCheck(f *testing.F) {
	f.Add("pay_eX4wfP3t53uWYeLytOXuTdQK", "cus_IwedGhNUwYReemdqbSIibeTf", "a@b.co", "A B", "d", "USD", "pending",
		"https://a.example/x?y=1", []byte(`{"k":"v"}`), int64(1050), int64(0), uint8(0))
	f.Add("pay_", "cus_", "a", "", "", "XXX", "succeeded", "http://[::1]:80/", []byte(`{"k":[1,{"a":null}]}`), int64(0), int64(-62135596801), uint8(0xff))
	f.Add("pay_aaaaaaaaaaaaaaaaaaaaaaaa", "cus_aaaaaaaaaaaaaaaaaaaaaaaa", "x@y", "n", "<&>", "EUR", "completed",
		"https://a", []byte(`{}`), int64(99999999999), int64(253402300800), uint8(3))
	cases := modelCases(f)
	f.Fuzz(func(t *testing.T, id, cusID, email, name, desc, currency, status, url string, metadata []byte, amount, unix int64, flags uint8) {
		p := modelPayment()
		p.ID, p.Customer.ID, p.Customer.Email, p.Customer.Name, p.Description = id, cusID, email, name, desc
		p.Currency, p.Status, p.Metadata, p.Amount = paymock.Currency(currency), paymock.Status(status), metadata, paymock.Amount(amount)
		switch flags % 4 {
		case 1:
			p.SuccessURL = url
		case 2:
			p.CancelURL = url
		case 3:
			p.CheckoutURL = url
		}
		if flags&4 != 0 {
			p.CompletedAt = time.Unix(unix, 0)
		} else if flags&8 != 0 {
			p.ExpiresAt = time.Unix(unix, 0)
		}
		enc := modelEncodings[flags>>4%4]
		for _, c := range cases {
			agree(t, c, p, enc)
		}
	})
}

// BenchmarkValidatePaymentResponse compares the two checks of a retrieve
// answer: from the encoder's values, and from the bytes.
func BenchmarkValidatePaymentResponse(b *testing.B) {
	c := modelCases(b)[0]
	body, w, plain, err := modelPayment().EncodePlain(paymock.Encoding{})
	if err != nil || !plain {
		b.Fatal("not plain")
	}
	ctx := context.Background()
	b.Run("values", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.d.ValidatePaymentResponse(ctx, c.r, c.rt, c.status, jsonHeader, body, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.d.ValidateResponse(ctx, c.r, c.rt, c.status, jsonHeader, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The decimal string form passes the amount's pattern as well.
	sbody, sw, plain, err := modelPayment().EncodePlain(paymock.Encoding{AmountAsString: true})
	if err != nil || !plain {
		b.Fatal("not plain")
	}
	b.Run("values_amount=string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.d.ValidatePaymentResponse(ctx, c.r, c.rt, c.status, jsonHeader, sbody, &sw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestObjectKeys_AValueTwoSchemasOfAnAllOfCheckMustPassBoth(t *testing.T) {
	short := uint64(3)
	payment := &check{types: typeString}                    // the Payment's own check of the key
	created := &check{types: typeString, maxLength: &short} // a second schema's stricter one
	k := &check{types: typeObject, additional: true, props: map[string]*check{"cancel_url": payment},
		allOf: []*check{{types: typeObject, additional: true, required: []string{"cancel_url"},
			props: map[string]*check{"cancel_url": created}}}}
	subs, also, ok := objectKeys(k, []string{"id", "cancel_url"})
	if !ok {
		t.Fatal("objectKeys gave up on a value two schemas check")
	}
	if subs[1] != payment || len(also) != 1 || also[0].key != 1 || also[0].k != created {
		t.Fatalf("subs %v also %v, want the Payment's check and the second schema's beside it", subs, also)
	}
	w := &paymock.WirePayment{CancelURL: "https://shop.example.com/no"}
	if scalarValid(also[0].k, w, wkCancelURL) {
		t.Error("a cancel_url the second schema refuses passed its check")
	}
	if w.CancelURL = "abc"; !scalarValid(also[0].k, w, wkCancelURL) {
		t.Error("a cancel_url both schemas take was refused")
	}
}
