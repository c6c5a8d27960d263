// Package storetest is the conformance suite of paymock.Store: every
// implementation runs the same tests through Run, so that handlers can rely
// on one behaviour whichever backend holds the payments.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// testNow is the instant the suite's payments are created around: whole
// seconds, as NewPayment makes them.
var testNow = time.Date(2026, time.May, 15, 12, 34, 56, 0, time.UTC)

// Run runs the suite. open returns an empty store for one subtest; it
// registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.Store) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s paymock.Store)
	}{
		{"InsertThenGetReturnsACopy", insertThenGet},
		{"EveryFieldSurvivesTheStore", everyFieldSurvives},
		{"GetOfAnotherMerchantIsNotFound", getNotFound},
		{"InsertRejectsDuplicateID", insertRejectsDuplicate},
		{"ListNewestFirstWithOffsetAndLimit", listNewestFirst},
		{"ListPagesCoverEverythingOnce", listPagesCoverEverything},
		{"ListEmptyAndOtherMerchants", listEmptyAndOtherMerchants},
		{"ListRejectsNegativeArguments", listRejectsNegative},
		{"ListHugePageIsEmpty", listHugePage},
		{"CustomerIDStablePerMerchantAndEmail", customerID},
		{"UpdateAppliesOrChangesNothing", update},
		{"UpdateKeepsIdentityAndOrder", updateKeepsIdentity},
		{"ConcurrentInsertsListsAndCustomers", concurrentUse},
		{"ConcurrentUpdatesLoseNothing", concurrentUpdates},
		{"ResetForgetsOneMerchant", reset},
		{"ResetRacingInsertsLeavesEachWholeOrGone", resetRacingInserts},
		{"LocateFindsAnyMerchantsPaymentByID", locate},
		{"IDsNoPaymentCanHaveAreNotFound", oddIDsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// StoredPayment is payment number n of a merchant, created n seconds after
// the suite's reference instant; benchmarks of a store use it too.
func StoredPayment(merchantID string, n int) paymock.Payment {
	at := testNow.Add(time.Duration(n) * time.Second)
	return paymock.Payment{
		ID:         fmt.Sprintf("pay_%s_%06d", merchantID, n),
		MerchantID: merchantID,
		Amount:     paymock.Amount(100 + n),
		Currency:   paymock.USD,
		Status:     paymock.StatusPending,
		CreatedAt:  at,
		UpdatedAt:  at,
		ExpiresAt:  at.Add(time.Hour),
	}
}

// Fill inserts payments 0..n-1 of StoredPayment for the merchant.
func Fill(t testing.TB, s paymock.Store, merchantID string, n int) {
	t.Helper()
	for i := range n {
		if err := s.Insert(context.Background(), StoredPayment(merchantID, i)); err != nil {
			t.Fatalf("Insert %d: %v", i, err)
		}
	}
}

func ids(ps []paymock.Payment) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func insertThenGet(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	p := StoredPayment("acme", 1)
	p.Metadata = []byte(`{"a":1}`)
	if err := s.Insert(ctx, p); err != nil {
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
	if err := s.Insert(ctx, want); err != nil {
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
	if err := s.Insert(ctx, bare); err != nil {
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
	if err := s.Insert(ctx, p); err != nil {
		t.Fatal(err)
	}
	dup := p
	dup.Amount = 999
	if err := s.Insert(ctx, dup); err == nil {
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
	if err := s.Insert(ctx, other); err != nil {
		t.Errorf("same id for another merchant: %v", err)
	}
}

func listNewestFirst(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 25)
	Fill(t, s, "globex", 3)
	// want returns the ids of payments n, n-1, ... (newest first), count of them.
	want := func(from, count int) []string {
		out := make([]string, 0, count)
		for i := range count {
			out = append(out, StoredPayment("acme", from-i).ID)
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		offset, limit int
		want          []string
	}{
		{"first page", 0, 10, want(24, 10)},
		{"second page", 10, 10, want(14, 10)},
		{"last partial page", 20, 10, want(4, 5)},
		{"limit larger than all", 0, 100, want(24, 25)},
		{"exact end", 25, 10, []string{}},
		{"past the end", 30, 10, []string{}},
		{"far past the end", math.MaxInt / 2, 10, []string{}},
		{"single item", 24, 1, want(0, 1)},
		{"newest only", 0, 1, want(24, 1)},
		{"zero limit", 0, 0, []string{}},
	} {
		got, total, err := s.List(ctx, "acme", tc.offset, tc.limit)
		if err != nil {
			t.Errorf("%s: List: %v", tc.name, err)
			continue
		}
		if total != 25 {
			t.Errorf("%s: total = %d, want 25", tc.name, total)
		}
		if got == nil {
			t.Errorf("%s: List returned a nil slice (encodes as null)", tc.name)
		}
		if g := ids(got); fmt.Sprint(g) != fmt.Sprint(tc.want) {
			t.Errorf("%s: List(%d, %d) = %v, want %v", tc.name, tc.offset, tc.limit, g, tc.want)
		}
	}
}

func listPagesCoverEverything(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	// One merchant per size, so that one store serves every case.
	for _, n := range []int{0, 1, 9, 10, 11, 30} {
		merchant := "m" + strconv.Itoa(n)
		Fill(t, s, merchant, n)
		seen := make(map[string]bool)
		pages := paymock.TotalPages(n, 10)
		for page := int64(1); page <= pages+1; page++ {
			pg := paymock.PageOf(page, 10)
			got, total, err := s.List(ctx, merchant, pg.Offset, pg.Limit)
			if err != nil || total != n {
				t.Fatalf("n=%d page %d: total %d, err %v", n, page, total, err)
			}
			if page == pages+1 && len(got) != 0 {
				t.Errorf("n=%d: page %d past the end has %d items", n, page, len(got))
			}
			for _, p := range got {
				if seen[p.ID] {
					t.Errorf("n=%d: %s listed twice", n, p.ID)
				}
				seen[p.ID] = true
			}
		}
		if len(seen) != n {
			t.Errorf("n=%d: pages listed %d payments", n, len(seen))
		}
	}
}

func listEmptyAndOtherMerchants(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	got, total, err := s.List(ctx, "acme", 0, 10)
	if err != nil || total != 0 || got == nil || len(got) != 0 {
		t.Errorf("empty store: List = %v (nil %v), %d, %v; want empty, 0, nil", got, got == nil, total, err)
	}
	Fill(t, s, "globex", 5)
	got, total, err = s.List(ctx, "acme", 0, 10)
	if err != nil || total != 0 || len(got) != 0 {
		t.Errorf("another merchant's payments listed: %v, %d, %v", ids(got), total, err)
	}
	Fill(t, s, "acme", 2)
	got, total, _ = s.List(ctx, "acme", 0, 10)
	for _, p := range got {
		if p.MerchantID != "acme" {
			t.Errorf("acme's list holds %s of %s", p.ID, p.MerchantID)
		}
	}
	if total != 2 {
		t.Errorf("acme total = %d, want 2", total)
	}
}

func listRejectsNegative(t *testing.T, s paymock.Store) {
	Fill(t, s, "acme", 3)
	for _, tc := range []struct{ offset, limit int }{{-1, 10}, {0, -1}, {-5, -5}} {
		if _, _, err := s.List(t.Context(), "acme", tc.offset, tc.limit); err == nil {
			t.Errorf("List(%d, %d) succeeded", tc.offset, tc.limit)
		}
	}
}

func listHugePage(t *testing.T, s paymock.Store) {
	Fill(t, s, "acme", 3)
	for _, page := range []int64{2147483647, math.MaxInt64} {
		pg := paymock.PageOf(page, 100)
		items, total, err := s.List(t.Context(), "acme", pg.Offset, pg.Limit)
		if err != nil || len(items) != 0 || total != 3 {
			t.Errorf("page %d: %d items, total %d, %v; want 0, 3, nil", page, len(items), total, err)
		}
	}
}

func customerID(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	n := 0
	newID := func() string { n++; return "cus_" + strconv.Itoa(n) }
	get := func(merchant, email string) string {
		t.Helper()
		id, err := s.CustomerID(ctx, merchant, email, newID)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	jane := get("acme", "jane@example.com")
	for _, tc := range []struct {
		name, merchant, email string
		same                  bool
	}{
		{"same email", "acme", "jane@example.com", true},
		{"upper-case email", "acme", "Jane@Example.COM", true},
		{"other email", "acme", "john@example.com", false},
		{"other merchant", "globex", "jane@example.com", false},
	} {
		got := get(tc.merchant, tc.email)
		if (got == jane) != tc.same {
			t.Errorf("%s: CustomerID = %s, jane's is %s; want same=%v", tc.name, got, jane, tc.same)
		}
	}
	if g1, g2 := get("globex", "jane@example.com"), get("globex", "JANE@example.com"); g1 != g2 {
		t.Errorf("globex's jane has two ids: %s, %s", g1, g2)
	}
	if n != 3 {
		t.Errorf("newID called %d times, want 3 (acme jane, acme john, globex jane)", n)
	}
}

func update(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	errNo := errors.New("refused")
	Fill(t, s, "acme", 3)
	Fill(t, s, "globex", 1)
	target := StoredPayment("acme", 1).ID
	// The cases run in order on one store: each expects the status the
	// ones before it left.
	for _, tc := range []struct {
		name       string
		merchant   string
		id         string
		fn         func(p *paymock.Payment) error
		wantErr    error
		wantStatus paymock.Status // as stored afterwards
	}{
		{"failing fn changes nothing", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return errNo }, errNo, paymock.StatusPending},
		{"another merchant's payment", "globex", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"unknown merchant", "initech", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"unknown id", "acme", "pay_nope",
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"applies the change", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusCompleted; return nil }, nil, paymock.StatusCompleted},
		{"failing fn after a change keeps the change", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusExpired; return errNo }, errNo, paymock.StatusCompleted},
	} {
		got, err := s.Update(ctx, tc.merchant, tc.id, tc.fn)
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: Update error = %v, want %v", tc.name, err, tc.wantErr)
		}
		if tc.wantErr == nil && got.Status != tc.wantStatus {
			t.Errorf("%s: Update returned status %s, want %s", tc.name, got.Status, tc.wantStatus)
		}
		stored, _ := s.Get(ctx, "acme", target)
		if stored.Status != tc.wantStatus {
			t.Errorf("%s: stored status = %s, want %s", tc.name, stored.Status, tc.wantStatus)
		}
		if errors.Is(tc.wantErr, errNo) && got.Status != tc.wantStatus {
			t.Errorf("%s: failed Update returned %s, want the unchanged payment", tc.name, got.Status)
		}
	}
}

func updateKeepsIdentity(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 3)
	id := StoredPayment("acme", 0).ID
	got, err := s.Update(ctx, "acme", id, func(p *paymock.Payment) error {
		p.ID = "pay_other"
		p.MerchantID = "globex"
		p.Amount = 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.MerchantID != "acme" || got.Amount != 1 {
		t.Errorf("Update = %s/%s/%d, want %s/acme/1", got.ID, got.MerchantID, got.Amount, id)
	}
	if _, err := s.Get(ctx, "acme", "pay_other"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("fn renamed the payment: %v", err)
	}
	if _, total, _ := s.List(ctx, "globex", 0, 10); total != 0 {
		t.Errorf("fn moved the payment to another merchant")
	}
	if p, err := s.Locate(ctx, id); err != nil || p.MerchantID != "acme" || p.Amount != 1 {
		t.Errorf("Locate after update = %s/%d, %v", p.MerchantID, p.Amount, err)
	}
	// An update does not make a payment newer in the list.
	items, _, _ := s.List(ctx, "acme", 0, 10)
	if len(items) != 3 || ids(items)[2] != id {
		t.Errorf("list order after update = %v", ids(items))
	}
}

func concurrentUse(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const merchants, writers, per = 3, 4, 100
	var wg sync.WaitGroup
	for m := range merchants {
		mid := "m" + strconv.Itoa(m)
		for w := range writers {
			wg.Go(func() {
				for i := range per {
					p := StoredPayment(mid, w*per+i)
					if err := s.Insert(ctx, p); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Get(ctx, mid, p.ID); err != nil {
						t.Errorf("Get right after Insert: %v", err)
					}
					if _, err := s.CustomerID(ctx, mid, fmt.Sprintf("c%d@example.com", i%7), func() string { return "cus_" + p.ID }); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Go(func() {
			last := 0
			for range 200 {
				items, total, err := s.List(ctx, mid, 0, 10)
				if err != nil {
					t.Error(err)
					return
				}
				if total < last {
					t.Errorf("total went down from %d to %d", last, total)
				}
				last = total
				if len(items) > min(10, total) {
					t.Errorf("%d items with total %d", len(items), total)
				}
			}
		})
	}
	wg.Wait()
	for m := range merchants {
		mid := "m" + strconv.Itoa(m)
		items, total, err := s.List(ctx, mid, 0, 100)
		if err != nil || total != writers*per || len(items) != 100 {
			t.Errorf("%s: %d items, total %d, %v; want 100, %d", mid, len(items), total, err, writers*per)
		}
		for _, p := range items {
			if p.MerchantID != mid {
				t.Errorf("%s lists %s of %s", mid, p.ID, p.MerchantID)
			}
		}
		// One customer id per email, whichever writer came first.
		ids := make(map[string]bool)
		for i := range 7 {
			id, _ := s.CustomerID(ctx, mid, fmt.Sprintf("C%d@EXAMPLE.com", i), func() string { return "new" })
			if id == "new" || ids[id] {
				t.Errorf("%s: customer %d has id %q", mid, i, id)
			}
			ids[id] = true
		}
	}
}

func concurrentUpdates(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 1)
	id := StoredPayment("acme", 0).ID
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := s.Update(ctx, "acme", id, func(p *paymock.Payment) error { p.Amount++; return nil }); err != nil {
					t.Error(err)
				}
				if _, err := s.Get(ctx, "acme", id); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	p, _ := s.Get(ctx, "acme", id)
	if want := StoredPayment("acme", 0).Amount + 800; p.Amount != want {
		t.Errorf("amount after 800 increments = %d, want %d (lost updates)", p.Amount, want)
	}
}

func reset(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 3)
	Fill(t, s, "globex", 2)
	acmeJane, _ := s.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_old" })
	globexJane, _ := s.CustomerID(ctx, "globex", "jane@example.com", func() string { return "cus_globex" })
	if err := s.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 0 {
		t.Errorf("acme still has %d payments after reset", total)
	}
	if _, err := s.Get(ctx, "acme", StoredPayment("acme", 0).ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("Get after reset: %v", err)
	}
	if id, _ := s.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_new" }); id != "cus_new" || acmeJane != "cus_old" {
		t.Errorf("acme customer after reset = %s, want a new id", id)
	}
	if _, total, _ := s.List(ctx, "globex", 0, 10); total != 2 {
		t.Errorf("globex lost payments to acme's reset: total %d", total)
	}
	if id, _ := s.CustomerID(ctx, "globex", "jane@example.com", func() string { return "cus_x" }); id != globexJane {
		t.Errorf("globex customer changed by acme's reset: %s", id)
	}
	// The merchant starts again cleanly, ids of before included.
	Fill(t, s, "acme", 1)
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 1 {
		t.Errorf("after reset and one insert, total = %d", total)
	}
	if err := s.Reset(ctx, "nobody"); err != nil {
		t.Errorf("Reset of an unknown merchant: %v", err)
	}
}

func locate(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	for _, p := range []paymock.Payment{{ID: "pay_a", MerchantID: "m1"}, {ID: "pay_b", MerchantID: "m2"}} {
		if err := s.Insert(ctx, p); err != nil {
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

// resetRacingInserts checks that a payment inserted while its merchant is
// reset ends up wholly kept or wholly forgotten: Get, Locate and List agree.
func resetRacingInserts(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const n = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			if err := s.Insert(ctx, StoredPayment("acme", i)); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		for range 20 {
			if err := s.Reset(ctx, "acme"); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	items, total, err := s.List(ctx, "acme", 0, n)
	if err != nil || total != len(items) {
		t.Fatalf("List: %d items, total %d, %v", len(items), total, err)
	}
	listed := make(map[string]bool)
	for _, p := range items {
		listed[p.ID] = true
	}
	for i := range n {
		id := StoredPayment("acme", i).ID
		_, getErr := s.Get(ctx, "acme", id)
		_, locErr := s.Locate(ctx, id)
		if (getErr == nil) != listed[id] || (locErr == nil) != listed[id] {
			t.Errorf("%s: listed %v, Get %v, Locate %v", id, listed[id], getErr, locErr)
		}
	}
}

// oddIDsNotFound: a path id may carry any bytes (NUL, bytes that are not
// UTF-8, kilobytes); it is no payment's id, so every look-up of it is
// ErrNotFound, never another error.
func oddIDsNotFound(t *testing.T, s paymock.Store) {
	ctx := context.Background()
	if err := s.Insert(ctx, StoredPayment("acme", 0)); err != nil {
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
