// Tests that the journal's milliseconds are the printed three-decimal
// number, however they are computed.

package paymock

import (
	"strconv"
	"testing"
)

// printedMillis is JournalMillis by its definition: printed with three
// decimals and read back.
func printedMillis(us int64) float64 {
	ms, _ := strconv.ParseFloat(strconv.FormatFloat(float64(us)/1000, 'f', 3, 64), 64)
	return ms
}

func TestJournalMillis_IsThePrintedMilliseconds(t *testing.T) {
	for _, us := range []int64{0, 1, -1, 999, 1000, 1001, 123456789, 1<<40 - 1, -(1<<40 - 1), 1 << 40, 1 << 53, -1 << 62} {
		if got, want := JournalMillis(us), printedMillis(us); got != want {
			t.Errorf("JournalMillis(%d) = %v, want %v", us, got, want)
		}
	}
}

// FuzzJournalMillis_IsThePrintedMilliseconds compares the division with
// printing and parsing at any count of microseconds.
func FuzzJournalMillis_IsThePrintedMilliseconds(f *testing.F) {
	f.Add(int64(1234))
	f.Add(int64(1<<40 - 1))
	f.Fuzz(func(t *testing.T, us int64) {
		for _, v := range []int64{us, us % (1 << 40), us % 100_000_000} {
			if got, want := JournalMillis(v), printedMillis(v); got != want {
				t.Fatalf("JournalMillis(%d) = %v, want %v", v, got, want)
			}
		}
	})
}
