// The conformance cases of listing a merchant's payments a page at a time.

package storetest

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/paymock/paymock"
)

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
