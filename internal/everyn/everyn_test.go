// Tests of when a key's use is due.

package everyn

import (
	"fmt"
	"testing"
)

func TestDue_EachKeyIsDueAtItsFirstUseThenEveryNOfItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name        string
		every, keys int
	}{
		{"one key, every 1", 1, 1},
		{"one key, every 5", 5, 1},
		{"two keys in turn, every 100", 100, 2},
		{"three times the slots, every 5", 5, 3 * Slots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(tc.every)
			since := map[string]int{}
			for round := range 3 * tc.every {
				for k := range tc.keys {
					key := fmt.Sprintf("key_%06d", k)
					due := c.Due(key)
					if round == 0 && !due {
						t.Fatalf("%s: its first use is not due", key)
					}
					if due {
						since[key] = 0
						continue
					}
					if since[key]++; since[key] >= tc.every {
						t.Fatalf("%s: %d uses since its last due one, want fewer than %d", key, since[key], tc.every)
					}
				}
			}
		})
	}
}

func TestDue_AKeyUsedMoreThanAnotherIsStillDueEveryNOfItsOwn(t *testing.T) {
	// One count for all would make due only the key whose use is the
	// 100th of all: here always "b".
	c := New(100)
	dueA := 0
	for range 10 {
		for range 99 {
			if c.Due("a") {
				dueA++
			}
		}
		c.Due("b")
	}
	if dueA < 9 {
		t.Errorf("a was due %d times in 990 uses, want at least 9", dueA)
	}
}

func TestNew_BoundsEvery(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{-3, 1}, {0, 1}, {1, 1}, {1000, 1000}, {1 << 20, 1<<16 - 1}} {
		if got := int(New(tc.in).every); got != tc.want {
			t.Errorf("New(%d).every = %d, want %d", tc.in, got, tc.want)
		}
	}
}
