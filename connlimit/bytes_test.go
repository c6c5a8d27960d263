// The bound on the bytes of answers being written at once.

package connlimit

import (
	"sync"
	"testing"
)

func TestAnswers_TakesWithinTheBoundAndSmallAnswersAlways(t *testing.T) {
	const big = SmallAnswer + 1
	tests := []struct {
		name string
		max  int64
		take []int // sizes taken in turn
		want []bool
	}{
		{"within the bound", 3 * big, []int{big, big, big}, []bool{true, true, true}},
		{"past it", 2*big + 10, []int{big, big, big}, []bool{true, true, false}},
		{"one answer larger than the bound", big - 1, []int{big}, []bool{false}},
		{"small answers while full", big, []int{big, SmallAnswer, 1, big}, []bool{true, true, true, false}},
		{"no bound", -1, []int{1 << 40, 1 << 40}, []bool{true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnswers(tc.max)
			for i, n := range tc.take {
				if got := a.Take(n); got != tc.want[i] {
					t.Errorf("take %d of %d bytes = %v, want %v", i, n, got, tc.want[i])
				}
			}
		})
	}
}

func TestAnswers_GiveMakesRoomAgain(t *testing.T) {
	const big = SmallAnswer + 1
	a := NewAnswers(2 * big)
	if !a.Take(big) || !a.Take(big) || a.Take(big) {
		t.Fatal("two answers should fill the bound")
	}
	a.Give(big)
	if !a.Take(big) {
		t.Error("a given-back answer's room was not taken again")
	}
	// A refused take counted nothing.
	a.Give(big)
	a.Give(big)
	if a.used.Load() != 0 {
		t.Errorf("%d bytes still counted after every answer was given back", a.used.Load())
	}
}

func TestAnswers_ConcurrentTakesNeverPassTheBound(t *testing.T) {
	const big, slots = SmallAnswer + 1, 4
	a := NewAnswers(slots * big)
	var mu sync.Mutex
	held, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				if !a.Take(big) {
					continue
				}
				mu.Lock()
				held++
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				a.Give(big)
			}
		})
	}
	wg.Wait()
	if most > slots {
		t.Errorf("%d answers held at once, past the bound of %d", most, slots)
	}
	if a.used.Load() != 0 {
		t.Errorf("%d bytes still counted", a.used.Load())
	}
	if a := (*Answers)(nil); !a.Take(1 << 40) {
		t.Error("a nil Answers refused an answer")
	}
}

func TestNewAnswers_DefaultsItsBound(t *testing.T) {
	if got := NewAnswers(0).Max(); got != DefaultAnswerBytes {
		t.Errorf("NewAnswers(0).Max() = %d, want %d", got, DefaultAnswerBytes)
	}
}
