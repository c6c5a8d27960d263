package paymock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"
)

var _ Store = (*MemoryStore)(nil)

// storedPayment is payment number n of a merchant, created n seconds after
// testNow.
func storedPayment(merchantID string, n int) Payment {
	at := testNow.Truncate(time.Second).Add(time.Duration(n) * time.Second)
	return Payment{
		ID:         fmt.Sprintf("pay_%s_%06d", merchantID, n),
		MerchantID: merchantID,
		Amount:     Amount(100 + n),
		Currency:   USD,
		Status:     StatusPending,
		CreatedAt:  at,
		UpdatedAt:  at,
		ExpiresAt:  at.Add(time.Hour),
	}
}

// fill inserts payments 0..n-1 for the merchant.
func fill(t testing.TB, s *MemoryStore, merchantID string, n int) {
	t.Helper()
	for i := range n {
		if err := s.Insert(context.Background(), storedPayment(merchantID, i)); err != nil {
			t.Fatalf("Insert %d: %v", i, err)
		}
	}
}

func ids(ps []Payment) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestMemoryStore_InsertThenGet(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	p := storedPayment("acme", 1)
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
	got.Status = StatusFailed
	again, _ := s.Get(ctx, "acme", p.ID)
	if again.Status != StatusPending {
		t.Errorf("stored status changed through a returned copy: %s", again.Status)
	}
}

func TestMemoryStore_GetNotFound(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	fill(t, s, "acme", 3)
	fill(t, s, "globex", 1)
	own := storedPayment("acme", 0).ID
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
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Get error = %v, want ErrNotFound", tc.name, err)
		}
		if p.ID != "" {
			t.Errorf("%s: Get returned payment %s with the error", tc.name, p.ID)
		}
	}
}

func TestMemoryStore_InsertRejectsDuplicateID(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	p := storedPayment("acme", 1)
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

func TestMemoryStore_ListNewestFirstWithOffsetAndLimit(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	fill(t, s, "acme", 25)
	fill(t, s, "globex", 3)
	// want returns the ids of payments n, n-1, ... (newest first), count of them.
	want := func(from, count int) []string {
		out := make([]string, 0, count)
		for i := range count {
			out = append(out, storedPayment("acme", from-i).ID)
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

func TestMemoryStore_ListPagesCoverEverythingOnce(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 9, 10, 11, 30} {
		s := NewMemoryStore()
		fill(t, s, "acme", n)
		seen := make(map[string]bool)
		pages := TotalPages(n, 10)
		for page := int64(1); page <= pages+1; page++ {
			pg := PageOf(page, 10)
			got, total, err := s.List(ctx, "acme", pg.Offset, pg.Limit)
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

func TestMemoryStore_ListEmptyAndOtherMerchants(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	got, total, err := s.List(ctx, "acme", 0, 10)
	if err != nil || total != 0 || got == nil || len(got) != 0 {
		t.Errorf("empty store: List = %v (nil %v), %d, %v; want empty, 0, nil", got, got == nil, total, err)
	}
	fill(t, s, "globex", 5)
	got, total, err = s.List(ctx, "acme", 0, 10)
	if err != nil || total != 0 || len(got) != 0 {
		t.Errorf("another merchant's payments listed: %v, %d, %v", ids(got), total, err)
	}
	fill(t, s, "acme", 2)
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

func TestMemoryStore_ListRejectsNegativeArguments(t *testing.T) {
	s := NewMemoryStore()
	fill(t, s, "acme", 3)
	for _, tc := range []struct{ offset, limit int }{{-1, 10}, {0, -1}, {-5, -5}} {
		if _, _, err := s.List(context.Background(), "acme", tc.offset, tc.limit); err == nil {
			t.Errorf("List(%d, %d) succeeded", tc.offset, tc.limit)
		}
	}
}

func TestMemoryStore_CustomerID(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
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

func TestMemoryStore_ConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	const merchants, writers, per = 3, 4, 100
	var wg sync.WaitGroup
	for m := range merchants {
		mid := "m" + strconv.Itoa(m)
		for w := range writers {
			wg.Go(func() {
				for i := range per {
					p := storedPayment(mid, w*per+i)
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

func TestPageOf(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("the table's offsets assume a 64-bit int")
	}
	const maxOffset = int64(^uint(0) >> 2)
	for _, tc := range []struct {
		page, perPage         int64
		wantOffset, wantLimit int64
	}{
		{1, 10, 0, 10},
		{2, 10, 10, 10},
		{3, 7, 14, 7},
		{1, 100, 0, 100},
		{2147483647, 100, 214748364600, 100},
		{math.MaxInt64, 100, maxOffset, 100},
		{math.MaxInt64, math.MaxInt64, maxOffset, math.MaxInt64},
		{math.MaxInt64 / 100, 100, maxOffset, 100},
		{0, 10, 0, 0},
		{-1, 10, 0, 0},
		{1, 0, 0, 0},
		{1, -1, 0, 0},
	} {
		got := PageOf(tc.page, tc.perPage)
		if int64(got.Offset) != tc.wantOffset || int64(got.Limit) != tc.wantLimit {
			t.Errorf("PageOf(%d, %d) = %+v, want {Offset:%d Limit:%d}", tc.page, tc.perPage, got, tc.wantOffset, tc.wantLimit)
		}
	}
}

func TestPageOf_HugePageListsNothing(t *testing.T) {
	s := NewMemoryStore()
	fill(t, s, "acme", 3)
	for _, page := range []int64{2147483647, math.MaxInt64} {
		pg := PageOf(page, 100)
		items, total, err := s.List(context.Background(), "acme", pg.Offset, pg.Limit)
		if err != nil || len(items) != 0 || total != 3 {
			t.Errorf("page %d: %d items, total %d, %v; want 0, 3, nil", page, len(items), total, err)
		}
	}
}

func TestTotalPages(t *testing.T) {
	for _, tc := range []struct {
		total   int
		perPage int64
		want    int64
	}{
		{0, 10, 0},
		{1, 10, 1},
		{9, 10, 1},
		{10, 10, 1},
		{11, 10, 2},
		{20, 10, 2},
		{21, 10, 3},
		{1, 1, 1},
		{100, 1, 100},
		{250, 100, 3},
		{5, math.MaxInt64, 1},
		{math.MaxInt, 1, math.MaxInt},
		{math.MaxInt, 100, math.MaxInt/100 + 1},
		{10, 0, 0},
		{10, -1, 0},
	} {
		if got := TotalPages(tc.total, tc.perPage); got != tc.want {
			t.Errorf("TotalPages(%d, %d) = %d, want %d", tc.total, tc.perPage, got, tc.want)
		}
	}
}

// BenchmarkMemoryStore_List shows that a page costs the same whatever the
// number of payments stored.
func BenchmarkMemoryStore_List(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			s := NewMemoryStore()
			fill(b, s, "acme", n)
			fill(b, s, "globex", 10)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				items, _, err := s.List(ctx, "acme", 50, 10)
				if err != nil || len(items) != 10 {
					b.Fatalf("List: %d items, %v", len(items), err)
				}
			}
		})
	}
}

func TestMemoryStore_Update(t *testing.T) {
	ctx := context.Background()
	errNo := errors.New("refused")
	for _, tc := range []struct {
		name       string
		merchant   string
		id         string
		fn         func(p *Payment) error
		wantErr    error
		wantStatus Status // as stored afterwards
	}{
		{"applies the change", "acme", storedPayment("acme", 1).ID,
			func(p *Payment) error { p.Status = StatusCompleted; return nil }, nil, StatusCompleted},
		{"failing fn changes nothing", "acme", storedPayment("acme", 1).ID,
			func(p *Payment) error { p.Status = StatusFailed; return errNo }, errNo, StatusPending},
		{"another merchant's payment", "globex", storedPayment("acme", 1).ID,
			func(p *Payment) error { p.Status = StatusFailed; return nil }, ErrNotFound, StatusPending},
		{"unknown merchant", "initech", storedPayment("acme", 1).ID,
			func(p *Payment) error { p.Status = StatusFailed; return nil }, ErrNotFound, StatusPending},
		{"unknown id", "acme", "pay_nope",
			func(p *Payment) error { p.Status = StatusFailed; return nil }, ErrNotFound, StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewMemoryStore()
			fill(t, s, "acme", 3)
			fill(t, s, "globex", 1)
			got, err := s.Update(ctx, tc.merchant, tc.id, tc.fn)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Update error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && got.Status != tc.wantStatus {
				t.Errorf("Update returned status %s, want %s", got.Status, tc.wantStatus)
			}
			stored, _ := s.Get(ctx, "acme", storedPayment("acme", 1).ID)
			if stored.Status != tc.wantStatus {
				t.Errorf("stored status = %s, want %s", stored.Status, tc.wantStatus)
			}
			if errors.Is(tc.wantErr, errNo) && got.Status != StatusPending {
				t.Errorf("failed Update returned %s, want the unchanged payment", got.Status)
			}
		})
	}
}

func TestMemoryStore_UpdateKeepsIdentityAndOrder(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	fill(t, s, "acme", 3)
	id := storedPayment("acme", 0).ID
	got, err := s.Update(ctx, "acme", id, func(p *Payment) error {
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
	if _, err := s.Get(ctx, "acme", "pay_other"); !errors.Is(err, ErrNotFound) {
		t.Errorf("fn renamed the payment: %v", err)
	}
	if _, total, _ := s.List(ctx, "globex", 0, 10); total != 0 {
		t.Errorf("fn moved the payment to another merchant")
	}
	// An update does not make a payment newer in the list.
	items, _, _ := s.List(ctx, "acme", 0, 10)
	if ids(items)[2] != id {
		t.Errorf("list order after update = %v", ids(items))
	}
}

func TestMemoryStore_ConcurrentUpdates(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	fill(t, s, "acme", 1)
	id := storedPayment("acme", 0).ID
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := s.Update(ctx, "acme", id, func(p *Payment) error { p.Amount++; return nil }); err != nil {
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
	if want := storedPayment("acme", 0).Amount + 800; p.Amount != want {
		t.Errorf("amount after 800 increments = %d, want %d (lost updates)", p.Amount, want)
	}
}

func TestMemoryStore_Reset(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	fill(t, s, "acme", 3)
	fill(t, s, "globex", 2)
	acmeJane, _ := s.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_old" })
	globexJane, _ := s.CustomerID(ctx, "globex", "jane@example.com", func() string { return "cus_globex" })
	if err := s.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 0 {
		t.Errorf("acme still has %d payments after reset", total)
	}
	if _, err := s.Get(ctx, "acme", storedPayment("acme", 0).ID); !errors.Is(err, ErrNotFound) {
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
	fill(t, s, "acme", 1)
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 1 {
		t.Errorf("after reset and one insert, total = %d", total)
	}
	if err := s.Reset(ctx, "nobody"); err != nil {
		t.Errorf("Reset of an unknown merchant: %v", err)
	}
}

func TestMemoryStore_LocateFindsAnyMerchantsPaymentByID(t *testing.T) {
	s := NewMemoryStore()
	ctx := t.Context()
	for _, p := range []Payment{{ID: "pay_a", MerchantID: "m1"}, {ID: "pay_b", MerchantID: "m2"}} {
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
	if _, err := s.Locate(ctx, "pay_none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if err := s.Reset(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Locate(ctx, "pay_a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after reset: %v", err)
	}
}
