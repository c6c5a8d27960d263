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
				if got := a.Take("k", n); got != tc.want[i] {
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
			if tc.used > 0 && !a.Take("k", tc.used) {
				t.Fatalf("the first take of %d bytes was refused", tc.used)
			}
			if got := a.TakeBetween("k", tc.least, tc.most); got != tc.want {
				t.Errorf("TakeBetween(%d, %d) = %d, want %d", tc.least, tc.most, got, tc.want)
			}
			if got := a.used - int64(max(tc.used, 0)); tc.max >= 0 && got != int64(tc.counts) {
				t.Errorf("counted %d bytes more, want %d", got, tc.counts)
			}
		})
	}
	if a := (*Answers)(nil); a.TakeBetween("k", big, 1<<40) != 1<<40 {
		t.Error("a nil Answers gave less than asked")
	}
}

func TestAnswers_GiveMakesRoomAgain(t *testing.T) {
	const big = SmallAnswer + 1
	a := NewAnswers(2 * big)
	if !a.Take("k", big) || !a.Take("k", big) || a.Take("k", big) {
		t.Fatal("two answers should fill the bound")
	}
	a.Give("k", big)
	if !a.Take("k", big) {
		t.Error("a given-back answer's room was not taken again")
	}
	// A refused take counted nothing.
	a.Give("k", big)
	a.Give("k", big)
	if a.used != 0 {
		t.Errorf("%d bytes still counted after every answer was given back", a.used)
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
				if !a.Take("k", big) {
					continue
				}
				mu.Lock()
				held++
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				a.Give("k", big)
			}
		})
	}
	wg.Wait()
	if most > slots {
		t.Errorf("%d answers held at once, past the bound of %d", most, slots)
	}
	if a.used != 0 {
		t.Errorf("%d bytes still counted", a.used)
	}
	if a := (*Answers)(nil); !a.Take("k", 1<<40) {
		t.Error("a nil Answers refused an answer")
	}
}

func TestNewAnswers_DefaultsItsBound(t *testing.T) {
	if got := NewAnswers(0).Max(); got != DefaultAnswerBytes {
		t.Errorf("NewAnswers(0).Max() = %d, want %d", got, DefaultAnswerBytes)
	}
}

func TestAnswers_AKeyHoldsAtMostItsShare(t *testing.T) {
	const mib = 1 << 20
	type take struct {
		key         string
		least, most int
		want        int // what TakeBetween returns
	}
	tests := []struct {
		name  string
		max   int64
		takes []take
	}{
		{"within its share", 64 * mib, []take{{"a", 8 * mib, 8 * mib, 8 * mib}, {"a", 8 * mib, 8 * mib, 8 * mib}}},
		{"not past its share", 64 * mib, []take{{"a", 16 * mib, 16 * mib, 16 * mib}, {"a", mib, mib, 0}}},
		{"the room its share leaves", 64 * mib, []take{{"a", 10 * mib, 10 * mib, 10 * mib}, {"a", mib, 16 * mib, 6 * mib}}},
		{"another key still gets room", 64 * mib, []take{
			{"a", 16 * mib, 16 * mib, 16 * mib}, {"a", mib, mib, 0},
			{"b", 16 * mib, 16 * mib, 16 * mib}, {"", 4 * mib, 16 * mib, 16 * mib}}},
		{"the bound still bounds the keys together", 64 * mib, []take{
			{"a", mib, 16 * mib, 16 * mib}, {"b", mib, 16 * mib, 16 * mib}, {"c", mib, 16 * mib, 16 * mib},
			{"d", mib, 10 * mib, 10 * mib}, {"e", mib, 16 * mib, 6 * mib}, {"f", mib, 16 * mib, 0}}},
		{"small answers past the share, uncounted", 64 * mib, []take{{"a", 16 * mib, 16 * mib, 16 * mib}, {"a", 1, SmallAnswer, SmallAnswer}}},
		{"a share of a small bound holds one large page", 6 * mib, []take{{"a", 4 * mib, 4 * mib, 4 * mib}, {"a", mib, mib, 0}, {"b", mib, 4 * mib, 2 * mib}}},
		{"a share no larger than a bound smaller than a page", 2 * mib, []take{{"a", mib, 4 * mib, 2 * mib}}},
		{"no bound, no share", -1, []take{{"a", 1 << 40, 1 << 40, 1 << 40}, {"a", 1 << 40, 1 << 40, 1 << 40}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnswers(tc.max)
			for i, tk := range tc.takes {
				if got := a.TakeBetween(tk.key, tk.least, tk.most); got != tk.want {
					t.Errorf("take %d: TakeBetween(%q, %d, %d) = %d, want %d", i, tk.key, tk.least, tk.most, got, tk.want)
				}
			}
		})
	}
}

func TestNewAnswers_SharesItsBound(t *testing.T) {
	tests := []struct {
		max, share int64
	}{
		{0, DefaultAnswerBytes / 4},
		{DefaultAnswerBytes, 32 << 20},
		{64 << 20, 16 << 20},
		{8 << 20, 4 << 20}, // a quarter would not hold one large page
		{5 << 20, 4 << 20},
		{1 << 20, 1 << 20}, // nor the bound
		{-1, -1},
	}
	for _, tc := range tests {
		if got := NewAnswers(tc.max).Share(); got != tc.share {
			t.Errorf("NewAnswers(%d).Share() = %d, want %d", tc.max, got, tc.share)
		}
	}
}

func TestAnswers_AKeyHoldingNothingIsForgotten(t *testing.T) {
	const mib = 1 << 20
	a := NewAnswers(64 * mib)
	if a.Take("a", 2*mib) != true || a.Take("a", 3*mib) != true || a.Take("b", 20*mib) {
		t.Fatal("the takes: want two taken and one past the share refused")
	}
	if _, ok := a.keys["b"]; ok {
		t.Error("a key refused room was kept")
	}
	a.Give("a", 2*mib)
	if a.keys["a"] != 3*mib {
		t.Errorf("the key holds %d bytes after giving part back, want %d", a.keys["a"], 3*mib)
	}
	a.Give("a", 3*mib)
	if len(a.keys) != 0 || a.used != 0 {
		t.Errorf("after every answer was given back: keys %v, %d bytes counted; want none", a.keys, a.used)
	}
	// Small answers never make an entry.
	a.Take("c", SmallAnswer)
	a.TakeBetween("c", 1, SmallAnswer)
	if len(a.keys) != 0 {
		t.Errorf("small answers made entries: %v", a.keys)
	}
	var none *Answers
	none.Give("a", 4*mib) // a nil Answers gives nothing back, and does not panic
}

func TestAnswers_ConcurrentKeysNeverPassTheirShares(t *testing.T) {
	const mib, keys, workers = 1 << 20, 6, 4
	a := NewAnswers(64 * mib) // a share of 16 MiB: four keys fill the bound
	var mu sync.Mutex
	held := map[string]int64{}
	var total, most int64
	mostKey := map[string]int64{}
	var wg sync.WaitGroup
	for k := range keys {
		key := string(rune('a' + k))
		for w := range workers {
			wg.Go(func() {
				for i := range 1000 {
					n := a.TakeBetween(key, 2*mib, (2+(i+w)%6)*mib)
					if n == 0 {
						continue
					}
					mu.Lock()
					held[key] += int64(n)
					total += int64(n)
					most = max(most, total)
					mostKey[key] = max(mostKey[key], held[key])
					mu.Unlock()
					mu.Lock()
					held[key] -= int64(n)
					total -= int64(n)
					mu.Unlock()
					a.Give(key, n)
				}
			})
		}
	}
	wg.Wait()
	if most > a.Max() {
		t.Errorf("%d bytes held at once, past the bound of %d", most, a.Max())
	}
	for key, m := range mostKey {
		if m > a.Share() {
			t.Errorf("key %s held %d bytes at once, past its share of %d", key, m, a.Share())
		}
	}
	if a.used != 0 || len(a.keys) != 0 {
		t.Errorf("%d bytes and keys %v still counted", a.used, a.keys)
	}
}
