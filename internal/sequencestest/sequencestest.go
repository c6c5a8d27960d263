// Package sequencestest is the conformance suite of paymock.Sequences:
// package memory and package postgres run the same tests, so that a seeded
// run numbers each merchant's ids alike on both.
package sequencestest

import (
	"sync"
	"testing"

	"github.com/paymock/paymock"
)

// Run runs the suite. open returns a store that has numbered nothing, for
// one subtest; it registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.Sequences) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s paymock.Sequences)
	}{
		{"a merchant's numbers start at 0 and count up", countsUp},
		{"each merchant has a sequence of its own", perMerchant},
		{"numbers taken at once are never handed out twice", concurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

func next(t *testing.T, s paymock.Sequences, merchantID string) uint64 {
	t.Helper()
	n, err := s.Next(t.Context(), merchantID)
	if err != nil {
		t.Fatalf("Next(%s): %v", merchantID, err)
	}
	return n
}

func countsUp(t *testing.T, s paymock.Sequences) {
	for want := range uint64(5) {
		if got := next(t, s, "acme"); got != want {
			t.Fatalf("number %d of acme = %d", want, got)
		}
	}
}

func perMerchant(t *testing.T, s paymock.Sequences) {
	next(t, s, "acme")
	next(t, s, "acme")
	if got := next(t, s, "globex"); got != 0 {
		t.Errorf("globex's first number = %d after acme took two, want 0", got)
	}
	if got := next(t, s, "acme"); got != 2 {
		t.Errorf("acme's third number = %d, want 2", got)
	}
}

func concurrent(t *testing.T, s paymock.Sequences) {
	const workers, each = 8, 25
	var mu sync.Mutex
	seen := make(map[uint64]bool)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				n, err := s.Next(t.Context(), "acme")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[n] {
					t.Errorf("number %d handed out twice", n)
				}
				seen[n] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for n := range uint64(workers * each) {
		if !seen[n] {
			t.Errorf("number %d skipped: %d handed out", n, len(seen))
			break
		}
	}
}
