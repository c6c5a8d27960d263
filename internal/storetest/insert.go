// The conformance cases of inserting and reading one payment back.

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func insertThenGet(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	p := StoredPayment("acme", 1)
	p.Metadata = []byte(`{"a":1}`)
	if err := s.Insert(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "acme", p.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ID != p.ID || got.Amount != p.Amount || !got.CreatedAt.Equal(p.CreatedAt) || string(got.Metadata) != `{"a":1}` {
		t.Errorf("Get = %+v, want %+v", got, p)
	}
	// The result is a copy: changing it changes nothing stored.
	got.Status = paymock.StatusFailed
	again, _ := s.Get(ctx, "acme", p.ID)
	if again.Status != paymock.StatusPending {
		t.Errorf("stored status changed through a returned copy: %s", again.Status)
	}
}

// fullPayment sets every field of a payment, so a store that drops or
// reshapes one is caught; times carry nanoseconds and metadata has keys out
// of order and characters JSON encoders like to escape.
func fullPayment() paymock.Payment {
	at := time.Date(2026, time.May, 15, 12, 34, 56, 123456789, time.UTC)
	return paymock.Payment{
		ID:          "pay_full",
		MerchantID:  "acme",
		Amount:      1050,
		Currency:    paymock.EUR,
		Status:      paymock.StatusCompleted,
		Customer:    paymock.Customer{ID: "cus_1", Email: "Jane@Example.com", Name: "Jane Doe"},
		Description: "Order #1001 <&> \x00 ☃",
		Metadata:    json.RawMessage(`{"z":1,"a":[1,2.50,"x&y"],"m":{"b":null,"a":"é"}}`),
		SuccessURL:  "https://shop.example/success?a=1&b=2",
		CancelURL:   "https://shop.example/cancel",
		CheckoutURL: "http://127.0.0.1:8080/pay/3ds/pay_full",
		PaymentMethod: &paymock.PaymentMethod{
			Type: "card",
			Card: paymock.CardSummary{Brand: "visa", Last4: "4242", ExpiryMonth: 12, ExpiryYear: 2030},
			BillingDetails: &paymock.BillingDetails{
				Name:    "Jane Doe",
				Address: &paymock.Address{Line1: "1 Main St", Line2: "Flat 2", City: "Springfield", State: "IL", PostalCode: "12345", Country: "US"},
			},
		},
		CreatedAt:   at,
		UpdatedAt:   at.Add(time.Second + 1),
		ExpiresAt:   at.Add(time.Hour),
		CompletedAt: at.Add(2*time.Second + 7),
		Declines3DS: true,
	}
}

// utc drops the location and monotonic reading of a payment's times, which
// say nothing about the instant, so that two equal payments compare equal.
func utc(p paymock.Payment) paymock.Payment {
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	p.ExpiresAt, p.CompletedAt = p.ExpiresAt.UTC(), p.CompletedAt.UTC()
	return p
}

func everyFieldSurvives(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	want := fullPayment()
	// A field added to Payment and left out of fullPayment would go
	// untested through every store: make that fail here.
	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullPayment leaves Payment.%s unset: set it so the stores are tested with it", v.Type().Field(i).Name)
		}
	}
	if err := s.Insert(ctx, want, -1); err != nil {
		t.Fatal(err)
	}
	check := func(how string, got paymock.Payment, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if !reflect.DeepEqual(utc(got), utc(want)) {
			t.Errorf("%s = %+v\nwant %+v", how, got, want)
		}
		if string(got.Metadata) != string(want.Metadata) {
			t.Errorf("%s: metadata %s, want it byte for byte: %s", how, got.Metadata, want.Metadata)
		}
	}
	got, err := s.Get(ctx, "acme", want.ID)
	check("Get", got, err)
	got, err = s.Locate(ctx, want.ID)
	check("Locate", got, err)
	items, _, err := s.List(ctx, "acme", 0, 1)
	if len(items) != 1 {
		t.Fatalf("List: %d items, %v", len(items), err)
	}
	check("List", items[0], err)
	got, err = s.Update(ctx, "acme", want.ID, func(*paymock.Payment) error { return nil })
	check("Update returning", got, err)
	got, err = s.Get(ctx, "acme", want.ID)
	check("Get after Update", got, err)

	// Empty metadata stays empty rather than becoming "null".
	bare := StoredPayment("acme", 7)
	if err := s.Insert(ctx, bare, -1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "acme", bare.ID); err != nil || len(got.Metadata) != 0 || got.PaymentMethod != nil || !got.CompletedAt.IsZero() {
		t.Errorf("bare payment came back as metadata %q, method %v, completed %v, %v", got.Metadata, got.PaymentMethod, got.CompletedAt, err)
	}
}

func getNotFound(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 3)
	Fill(t, s, "globex", 1)
	own := StoredPayment("acme", 0).ID
	for _, tc := range []struct {
		name, merchant, id string
		found              bool
	}{
		{"own payment", "acme", own, true},
		{"another merchant's payment", "globex", own, false},
		{"merchant with no payments", "initech", own, false},
		{"unknown id", "acme", "pay_nope", false},
		{"empty id", "acme", "", false},
	} {
		p, err := s.Get(ctx, tc.merchant, tc.id)
		if tc.found {
			if err != nil || p.ID != tc.id {
				t.Errorf("%s: Get = %v, %v; want the payment", tc.name, p.ID, err)
			}
			continue
		}
		if !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("%s: Get error = %v, want ErrNotFound", tc.name, err)
		}
		if p.ID != "" {
			t.Errorf("%s: Get returned payment %s with the error", tc.name, p.ID)
		}
	}
}

func insertRejectsDuplicate(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	p := StoredPayment("acme", 1)
	if err := s.Insert(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
	dup := p
	dup.Amount = 999
	if err := s.Insert(ctx, dup, -1); err == nil {
		t.Fatal("second insert of the same id succeeded")
	}
	got, _ := s.Get(ctx, "acme", p.ID)
	if got.Amount != p.Amount {
		t.Errorf("rejected insert replaced the payment: amount %d", got.Amount)
	}
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 1 {
		t.Errorf("total after rejected insert = %d, want 1", total)
	}
	// The same id under another merchant is that merchant's business.
	other := p
	other.MerchantID = "globex"
	if err := s.Insert(ctx, other, -1); err != nil {
		t.Errorf("same id for another merchant: %v", err)
	}
}

func locate(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	for _, p := range []paymock.Payment{{ID: "pay_a", MerchantID: "m1"}, {ID: "pay_b", MerchantID: "m2"}} {
		if err := s.Insert(ctx, p, -1); err != nil {
			t.Fatal(err)
		}
	}
	for id, m := range map[string]string{"pay_a": "m1", "pay_b": "m2"} {
		p, err := s.Locate(ctx, id)
		if err != nil || p.MerchantID != m {
			t.Errorf("Locate(%s) = %+v, %v", id, p, err)
		}
	}
	if _, err := s.Locate(ctx, "pay_none"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if err := s.Reset(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Locate(ctx, "pay_a"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("after reset: %v", err)
	}
	if _, err := s.Locate(ctx, "pay_b"); err != nil {
		t.Errorf("m2's payment after m1's reset: %v", err)
	}
}

// oddIDsNotFound: a path id may carry any bytes (NUL, bytes that are not
// UTF-8, kilobytes); it is no payment's id, so every look-up of it is
// ErrNotFound, never another error.
func oddIDsNotFound(t *testing.T, s paymock.Store) {
	ctx := context.Background()
	if err := s.Insert(ctx, StoredPayment("acme", 0), -1); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"\x00", "pay_\x00x", "\xff\xfe", strings.Repeat("x", 3000), ""} {
		if _, err := s.Get(ctx, "acme", id); !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("Get(%q): %v, want ErrNotFound", id, err)
		}
		if _, err := s.Locate(ctx, id); !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("Locate(%q): %v, want ErrNotFound", id, err)
		}
		_, err := s.Update(ctx, "acme", id, func(*paymock.Payment) error { return nil })
		if !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("Update(%q): %v, want ErrNotFound", id, err)
		}
	}
}
