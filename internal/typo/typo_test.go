// Tests of the typo distance.

package typo_test

import (
	"testing"

	"github.com/paymock/paymock/internal/typo"
)

func TestDistance_CountsEachTypoOnce(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"addr", "addr", 0},
		{"", "addr", 4},
		{"addr", "", 4},
		{"adr", "addr", 1},                  // a byte dropped
		{"adddr", "addr", 1},                // a byte added
		{"payment", "payments", 1},          // the "s" a route misses
		{"paymnets", "payments", 1},         // two adjacent bytes swapped
		{"webhok-url", "webhook-url", 1},    // a flag's typo
		{"kitten", "sitting", 3},            // the textbook case
		{"ca", "abc", 3},                    // a swap is not edited again
		{"abc", "xyz", 3},                   // nothing alike
		{"seed", "sede", 1},                 // a swap at the end
		{"abcdef", "badcfe", 3},             // three swaps
		{"PAYMOCK_ADRR", "PAYMOCK_ADDR", 1}, // a replaced byte
		{"payments", "paymentss", 1},
	}
	for _, c := range cases {
		if got := typo.Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := typo.Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (it is symmetric)", c.b, c.a, got, c.want)
		}
	}
}
