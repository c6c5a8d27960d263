// The id sequences on PostgreSQL: the conformance suite and replicas never repeating a number.

package postgres

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/sequencestest"
)

func TestSequences_Conformance(t *testing.T) {
	sequencestest.Run(t, func(t *testing.T) paymock.Sequences {
		s, _ := openStore(t)
		return s
	})
}

func TestSequences_ReplicasAndReleaseNeverRepeatANumber(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	other, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	seen := make(map[uint64]bool)
	for i := range 6 {
		st := s
		if i%2 == 1 {
			st = other
		}
		if i == 3 {
			// One replica forgetting the merchant leaves its sequence to the other.
			if err := s.Backend().Release(ctx, "acme"); err != nil {
				t.Fatal(err)
			}
		}
		n, err := st.Next(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if seen[n] {
			t.Fatalf("number %d handed out twice", n)
		}
		seen[n] = true
	}
}
