// Tests of the paging arithmetic every store's list relies on.

package paymock_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/paymock/paymock"
)

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
