// Tests of the in-memory store: the conformance suite every store runs, and
// what is particular to MemoryStore. An external test package, because the
// suite itself imports paymock.

package paymock_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/storetest"
)

var _ paymock.Store = (*paymock.MemoryStore)(nil)

func TestMemoryStore_Conformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) paymock.Store { return paymock.NewMemoryStore() })
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
		got := paymock.PageOf(tc.page, tc.perPage)
		if int64(got.Offset) != tc.wantOffset || int64(got.Limit) != tc.wantLimit {
			t.Errorf("PageOf(%d, %d) = %+v, want {Offset:%d Limit:%d}", tc.page, tc.perPage, got, tc.wantOffset, tc.wantLimit)
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
		if got := paymock.TotalPages(tc.total, tc.perPage); got != tc.want {
			t.Errorf("TotalPages(%d, %d) = %d, want %d", tc.total, tc.perPage, got, tc.want)
		}
	}
}

// BenchmarkMemoryStore_List shows that a page costs the same whatever the
// number of payments stored.
func BenchmarkMemoryStore_List(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			s := paymock.NewMemoryStore()
			storetest.Fill(b, s, "acme", n)
			storetest.Fill(b, s, "globex", 10)
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
