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

func TestAnswers_TakeBetweenTakesWhatRoomIsLeft(t *testing.T) {
	const big = SmallAnswer + 1
	tests := []struct {
		name         string
		max          int64
		used         int // taken first
		least, most  int
		want, counts int // what it returns, and counts
	}{
		{"all it asks for", 10 * big, 0, big, 4 * big, 4 * big, 4 * big},
		{"the room left, less than it asks for", 10 * big, 7 * big, big, 4 * big, 3 * big, 3 * big},
		{"nothing, when less than least is left", 10 * big, 9*big + 10, big, 4 * big, 0, 0},
		{"at least more than a small answer", 10 * big, 10*big - SmallAnswer, 1, 4 * big, 0, 0},
		{"a small answer always, uncounted", 10 * big, 10 * big, 1, SmallAnswer, SmallAnswer, 0},
		{"no bound", -1, 0, big, 1 << 40, 1 << 40, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnswers(tc.max)
			if tc.used > 0 && !a.Take(tc.used) {
				t.Fatalf("the first take of %d bytes was refused", tc.used)
			}
			if got := a.TakeBetween(tc.least, tc.most); got != tc.want {
				t.Errorf("TakeBetween(%d, %d) = %d, want %d", tc.least, tc.most, got, tc.want)
			}
			if got := a.used.Load() - int64(max(tc.used, 0)); tc.max >= 0 && got != int64(tc.counts) {
				t.Errorf("counted %d bytes more, want %d", got, tc.counts)
			}
		})
	}
	if a := (*Answers)(nil); a.TakeBetween(big, 1<<40) != 1<<40 {
		t.Error("a nil Answers gave less than asked")
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
