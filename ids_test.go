// Payment ids: their format, seeded sequences and concurrent use.

package paymock

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"testing"
)

var idPattern = regexp.MustCompile(`^([a-z]+)_([0-9A-Za-z]{24})$`)

func TestIDs_Format(t *testing.T) {
	seed := uint64(7)
	for _, g := range []*IDs{NewIDs(nil), NewIDs(&seed)} {
		for _, prefix := range []string{"pay", "cus", "evt"} {
			for range 100 {
				id := g.New(prefix)
				m := idPattern.FindStringSubmatch(id)
				if m == nil || m[1] != prefix {
					t.Fatalf("New(%q) = %q, want %s_ + 24 base62 characters", prefix, id, prefix)
				}
			}
		}
	}
}

func sequence(g *IDs, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.New("pay")
	}
	return out
}

func TestIDs_SameSeedSameSequence(t *testing.T) {
	a, b := uint64(42), uint64(42)
	s1, s2 := sequence(NewIDs(&a), 1000), sequence(NewIDs(&b), 1000)
	if !slices.Equal(s1, s2) {
		t.Fatalf("same seed gave different sequences: %v... vs %v...", s1[:3], s2[:3])
	}
}

func TestIDs_DifferentSeedsDifferentSequences(t *testing.T) {
	seeds := []uint64{0, 1, 2, 42, 1 << 63}
	seen := make(map[string]uint64)
	for _, s := range seeds {
		for _, id := range sequence(NewIDs(&s), 100) {
			if prev, dup := seen[id]; dup {
				t.Fatalf("seeds %d and %d both produced %s", prev, s, id)
			}
			seen[id] = s
		}
	}
}

func TestIDs_UnseededAreDistinct(t *testing.T) {
	g := NewIDs(nil)
	seen := make(map[string]bool, 10000)
	for range 10000 {
		id := g.New("pay")
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	// Two unseeded generators do not share a sequence either.
	if a, b := NewIDs(nil).New("pay"), NewIDs(nil).New("pay"); a == b {
		t.Fatalf("two unseeded generators both started with %s", a)
	}
}

// With a seed, concurrent callers get exactly the ids of the sequential
// sequence, each once: every id is drawn whole under the lock.
func TestIDs_ConcurrentUseIsSafe(t *testing.T) {
	const workers, per = 8, 500
	seed := uint64(99)
	want := sequence(NewIDs(&seed), workers*per)

	g := NewIDs(&seed)
	unseeded := NewIDs(nil)
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range per {
				got[w] = append(got[w], g.New("pay"))
				unseeded.New("evt")
			}
		})
	}
	wg.Wait()
	all := slices.Concat(got...)
	slices.Sort(all)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatalf("concurrent ids differ from the seeded sequence")
	}
}

// Every base62 character is about equally likely (rejection sampling, no
// modulo bias). Seeded, so the outcome is fixed and the test cannot flake.
func TestIDs_CharactersUniform(t *testing.T) {
	seed := uint64(2024)
	g := NewIDs(&seed)
	const ids = 20000
	counts := make(map[byte]int)
	for range ids {
		id := g.New("p")
		for i := 2; i < len(id); i++ {
			counts[id[i]]++
		}
	}
	if len(counts) != 62 {
		t.Fatalf("saw %d distinct characters, want 62", len(counts))
	}
	expected := float64(ids*IDLength) / 62
	for c, n := range counts {
		if dev := (float64(n) - expected) / expected; dev > 0.05 || dev < -0.05 {
			t.Errorf("character %q seen %d times, expected about %.0f", c, n, expected)
		}
	}
}

// Unseeded ids come from pooled ChaCha8 generators keyed from crypto/rand:
// drawn from many goroutines at once (so several generators are in use),
// they are well formed, never repeat, and every character is about
// equally likely, as with ids read from crypto/rand directly.
func TestIDs_UnseededFromPooledStreamsAreDistinctAndUniform(t *testing.T) {
	const workers, per = 8, 4000
	g := NewIDs(nil)
	d, _ := NewMerchantIDs(nil, brokenSequences{}, nil).Draw(t.Context(), nil)
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				if i%2 == 0 {
					got[w] = append(got[w], g.New("req"))
				} else {
					got[w] = append(got[w], d.ID("req"))
				}
			}
		})
	}
	wg.Wait()
	counts := make(map[byte]int)
	seen := make(map[string]bool, workers*per)
	for _, id := range slices.Concat(got...) {
		if len(id) != len("req_")+IDLength || id[:4] != "req_" {
			t.Fatalf("malformed id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		for i := 4; i < len(id); i++ {
			counts[id[i]]++
		}
	}
	if len(counts) != 62 {
		t.Fatalf("saw %d distinct characters, want 62", len(counts))
	}
	// 768,000 characters: about 12,387 each, a standard deviation of
	// about 110, so 6% is over six deviations away.
	expected := float64(workers*per*IDLength) / 62
	for c, n := range counts {
		if dev := (float64(n) - expected) / expected; dev > 0.06 || dev < -0.06 {
			t.Errorf("character %q seen %d times, expected about %.0f", c, n, expected)
		}
	}
}

// BenchmarkIDs_Unseeded compares an unguessable id drawn from the pooled
// generators with one read from crypto/rand, which the pool replaced.
func BenchmarkIDs_Unseeded(b *testing.B) {
	b.Run("pooled", func(b *testing.B) {
		g := NewIDs(nil)
		b.ReportAllocs()
		for b.Loop() {
			g.New("req")
		}
	})
	b.Run("crypto-rand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drawID(rand.Reader, "req")
		}
	})
}

// FuzzDrawChaCha_DrawsWhatDrawIDDraws: from generators of the same key,
// the stack-bound draw gives the ids drawID gives through the reader,
// draw after draw, so seeded runs keep their ids.
func FuzzDrawChaCha_DrawsWhatDrawIDDraws(f *testing.F) {
	f.Add([]byte("seed"), "req", uint8(3))
	f.Add([]byte{}, "", uint8(1))
	f.Add([]byte{1, 2, 3}, "a_prefix_long_enough_to_leave_the_stack_buffer", uint8(2))
	f.Fuzz(func(t *testing.T, seed []byte, prefix string, draws uint8) {
		var key [32]byte
		copy(key[:], seed)
		fast, slow := mrand.NewChaCha8(key), mrand.NewChaCha8(key)
		for range draws % 8 {
			if got, want := drawChaCha(fast, prefix), drawID(slow, prefix); got != want {
				t.Fatalf("drawChaCha = %q, drawID = %q", got, want)
			}
		}
	})
}
