// Bounded clocks over HTTP (issue 21, item 8): an advance past what a
// clock can show is a 400 naming seconds, and a clock never wraps.

package sandbox

import (
	"net/http"
	"testing"
	"time"
)

func TestAdvance_PastTheLastInstantIsRefusedAndNeverWraps(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  envOption
		// by is an advance that fits, to which a second more does not.
		by       int
		reached  string
		refused  int
		stillNow func(now string) bool
	}{
		{
			name: "frozen: up to 9999-12-31T23:59:59Z",
			opt:  withStart(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)),
			by:   86399, reached: "9999-12-31T23:59:59Z", refused: 1,
		},
		{
			// A real clock is an offset from the real time, which holds
			// 292 years: one starting 400 days short of that goes a year
			// on, not two.
			name: "real: up to 292 years from the real time",
			opt:  withRealClockAt(time.Now().Add(time.Duration(1<<63-1) - 400*24*time.Hour)),
			by:   31536000, refused: 31536000,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.opt)
			_, before, _ := env.do("GET", "/_sandbox/clock", keyA, nil)
			moved := env.advance(keyA, tc.by)
			if tc.reached != "" && moved["now"] != tc.reached {
				t.Fatalf("advanced to %v, want %s", moved["now"], tc.reached)
			}
			st, body, _ := env.do("POST", "/_sandbox/clock/advance", keyA, map[string]any{"seconds": tc.refused})
			if st != http.StatusBadRequest || errorOf(t, body)["param"] != "seconds" {
				t.Fatalf("an advance past the last instant: %d %v, want 400 naming seconds", st, body)
			}
			_, after, _ := env.do("GET", "/_sandbox/clock", keyA, nil)
			if tc.reached != "" && after["now"] != tc.reached {
				t.Errorf("after the refused advance the clock shows %v, want %s", after["now"], tc.reached)
			}
			// Never wrapped: the clock is later than it started.
			b, _ := time.Parse(time.RFC3339, before["now"].(string))
			a, err := time.Parse(time.RFC3339, after["now"].(string))
			if err != nil || !a.After(b) {
				t.Errorf("the clock went from %v to %v", before["now"], after["now"])
			}
			// The merchant's other calls still work.
			if st, body, _ := env.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusOK {
				t.Errorf("list after a refused advance: %d %v", st, body)
			}
		})
	}
}
