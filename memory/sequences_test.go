// The id sequences in memory: the conformance suite and release.

package memory

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/sequencestest"
)

func TestSequences_Conformance(t *testing.T) {
	sequencestest.Run(t, func(*testing.T) paymock.Sequences { return NewSequences() })
}

func TestRelease_DropsTheMerchantsSequence(t *testing.T) {
	b := New()
	for range 3 {
		if _, err := b.Sequences.Next(t.Context(), "key_a"); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Release(t.Context(), "key_a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Sequences.Next(t.Context(), "key_a"); n != 0 {
		t.Errorf("after release the next number is %d, want 0 as in a new process", n)
	}
}
