// Benchmarks of the memory payments store (what a stored payment costs it, what a
// look-up costs), and tests of what its compact form adds to the
// conformance suite: ids whose hashes meet, and garbage left by updates.

package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// apiPayment is a payment shaped like the API's, with strings of their own
// as a decoded request would have them.
func apiPayment(id string, now time.Time) paymock.Payment {
	return paymock.Payment{ID: id, MerchantID: "mer_0000000000000000000000001", Amount: 1050, Currency: "USD", Status: paymock.StatusPending,
		Customer:    paymock.Customer{ID: "cus_IwedGhNUwYReemdqbSIibeTf", Email: fmt.Sprint("jane@example.com"), Name: fmt.Sprint("Jane Doe")},
		Description: fmt.Sprint("Order 1234"), Metadata: []byte(`{"order_id":"ord_1234"}`),
		SuccessURL: fmt.Sprint("https://shop.example.com/success"), CancelURL: fmt.Sprint("https://shop.example.com/cancel"),
		CheckoutURL: "http://localhost:8080/checkout/" + id, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// BenchmarkMemoryStore_BytesPerPayment reports the live heap the store
// holds per payment, for payments shaped like the API's.
func BenchmarkMemoryStore_BytesPerPayment(b *testing.B) {
	const n = 100_000
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for b.Loop() {
		s := NewPayments()
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		before := heap()
		for i := range n {
			if err := s.Insert(context.Background(), apiPayment(fmt.Sprintf("pay_%024d", i), now), -1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(heap()-before)/n, "B/payment")
		runtime.KeepAlive(s)
	}
}

// BenchmarkMemoryStore_Get decodes one payment out of 100,000.
func BenchmarkMemoryStore_Get(b *testing.B) {
	const n = 100_000
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	s := NewPayments()
	for i := range n {
		if err := s.Insert(context.Background(), apiPayment(fmt.Sprintf("pay_%024d", i), now), -1); err != nil {
			b.Fatal(err)
		}
	}
	id := fmt.Sprintf("pay_%024d", n/2)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(context.Background(), "mer_0000000000000000000000001", id); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryStore_IDsWhoseHashesMeet runs the store with one hash for every
// id, so every look-up goes through the collision paths: each id must
// still be found, and only under its own merchant.
func TestMemoryStore_IDsWhoseHashesMeet(t *testing.T) {
	ctx := context.Background()
	s := NewPayments()
	s.hash = func(string) uint64 { return 7 }
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	stored := map[string][]string{"m1": {"pay_a", "pay_b", "pay_c"}, "m2": {"pay_d", "pay_b"}}
	for m, ids := range stored {
		for _, id := range ids {
			p := apiPayment(id, now)
			p.MerchantID = m
			if err := s.Insert(ctx, p, -1); err != nil {
				t.Fatalf("Insert %s/%s: %v", m, id, err)
			}
		}
	}
	if err := s.Insert(ctx, paymock.Payment{ID: "pay_c", MerchantID: "m1"}, -1); err == nil {
		t.Error("a second pay_c of m1 was taken")
	}
	for _, tc := range []struct {
		merchant, id string
		found        bool
	}{
		{"m1", "pay_a", true}, {"m1", "pay_b", true}, {"m1", "pay_c", true}, {"m2", "pay_d", true}, {"m2", "pay_b", true},
		{"m2", "pay_a", false}, {"m1", "pay_d", false}, {"m1", "pay_e", false},
	} {
		p, err := s.Get(ctx, tc.merchant, tc.id)
		if tc.found != (err == nil) || (tc.found && (p.ID != tc.id || p.MerchantID != tc.merchant)) {
			t.Errorf("Get(%s, %s) = %s/%s, %v; found should be %v", tc.merchant, tc.id, p.MerchantID, p.ID, err, tc.found)
		}
	}
	p, err := s.Update(ctx, "m1", "pay_c", func(p *paymock.Payment) error { p.Amount = 1; return nil })
	if err != nil || p.ID != "pay_c" || p.Amount != 1 {
		t.Errorf("Update(m1, pay_c) = %s %d, %v", p.ID, p.Amount, err)
	}
	if p, err := s.Locate(ctx, "pay_d"); err != nil || p.MerchantID != "m2" {
		t.Errorf("Locate(pay_d) = %s, %v", p.MerchantID, err)
	}
	if err := s.Reset(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"pay_a": "", "pay_c": "", "pay_b": "m2", "pay_d": "m2"} {
		p, err := s.Locate(ctx, id)
		if want == "" && !errors.Is(err, paymock.ErrNotFound) || want != "" && (err != nil || p.MerchantID != want) {
			t.Errorf("after m1's reset, Locate(%s) = %s, %v; want merchant %q", id, p.MerchantID, err, want)
		}
	}
}

// TestMemoryStore_UpdatesLeaveBoundedGarbage updates every payment of a
// book many times: the arena is compacted whenever more of it is dead than
// alive, and every payment still reads back as last written.
func TestMemoryStore_UpdatesLeaveBoundedGarbage(t *testing.T) {
	ctx := context.Background()
	s := NewPayments()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	const n, rounds = 500, 40
	for i := range n {
		if err := s.Insert(ctx, apiPayment(fmt.Sprintf("pay_%06d", i), now), -1); err != nil {
			t.Fatal(err)
		}
	}
	b := s.book("mer_0000000000000000000000001", false)
	live := b.arena.used
	for r := range rounds {
		for i := range n {
			_, err := s.Update(ctx, b.merchantID, fmt.Sprintf("pay_%06d", i), func(p *paymock.Payment) error {
				p.Amount = paymock.Amount(r*n + i)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if limit := 2*live + compactAfter + 1024; b.arena.used > limit {
			t.Fatalf("round %d: arena holds %d bytes for %d live, more than %d", r, b.arena.used, live, limit)
		}
	}
	if b.arena.dead == 0 && b.arena.used > live {
		t.Errorf("the dead bytes went uncounted: %d used, %d live", b.arena.used, live)
	}
	items, total, err := s.List(ctx, b.merchantID, 0, n)
	if err != nil || total != n {
		t.Fatalf("List: %d, %v", total, err)
	}
	for k, p := range items {
		i := n - 1 - k
		if p.ID != fmt.Sprintf("pay_%06d", i) || p.Amount != paymock.Amount((rounds-1)*n+i) || p.Customer.Email != "jane@example.com" {
			t.Errorf("item %d = %s %d %q", k, p.ID, p.Amount, p.Customer.Email)
		}
	}
}

// TestMemoryStore_ValuesOutsideTheCodes keeps a currency and a status the
// store has no small number for, and a payment method without billing
// details, exactly.
func TestMemoryStore_ValuesOutsideTheCodes(t *testing.T) {
	ctx := context.Background()
	s := NewPayments()
	want := paymock.Payment{ID: "pay_odd", MerchantID: "m", Amount: -5, Currency: "XTS", Status: "on_hold",
		PaymentMethod: &paymock.PaymentMethod{Type: "card", Card: paymock.CardSummary{Brand: "visa", Last4: "0002", ExpiryMonth: 1, ExpiryYear: 2031},
			BillingDetails: &paymock.BillingDetails{Name: "Only A Name"}},
		CreatedAt: time.Unix(-86400*365*100, 5).UTC(), ExpiresAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	if err := s.Insert(ctx, want, -1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "m", "pay_odd")
	if err != nil {
		t.Fatal(err)
	}
	if got.Currency != want.Currency || got.Status != want.Status || got.Amount != want.Amount ||
		*got.PaymentMethod.BillingDetails != *want.PaymentMethod.BillingDetails || got.PaymentMethod.Card != want.PaymentMethod.Card ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.UpdatedAt.IsZero() {
		t.Errorf("Get = %+v\nwant %+v", got, want)
	}
}

// TestMemoryStore_CommonStringsRunOut stores more distinct URLs than a
// book spells once, and checkout URLs that end in their id and that do
// not: every one comes back as written.
func TestMemoryStore_CommonStringsRunOut(t *testing.T) {
	ctx := context.Background()
	s := NewPayments()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	const n = 3 * maxCommon
	want := make([]paymock.Payment, n)
	for i := range want {
		p := apiPayment(fmt.Sprintf("pay_%03d", i), now)
		p.SuccessURL = fmt.Sprintf("https://shop.example.com/success?order=%d", i)
		switch i % 3 {
		case 1:
			p.CheckoutURL = "https://elsewhere.example/pay" // does not end in the id
		case 2:
			p.CheckoutURL = p.ID // is nothing but the id
		}
		want[i] = p
		if err := s.Insert(ctx, p, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range want {
		got, err := s.Get(ctx, p.MerchantID, p.ID)
		if err != nil || got.SuccessURL != p.SuccessURL || got.CancelURL != p.CancelURL || got.CheckoutURL != p.CheckoutURL {
			t.Errorf("Get(%s) = %q %q %q, %v; want %q %q %q", p.ID, got.SuccessURL, got.CancelURL, got.CheckoutURL, err,
				p.SuccessURL, p.CancelURL, p.CheckoutURL)
		}
	}
	if b := s.book(want[0].MerchantID, false); len(b.common.s) != maxCommon {
		t.Errorf("the book spells %d strings once, want the cap of %d", len(b.common.s), maxCommon)
	}
}
