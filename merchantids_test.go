// Seeded merchants' ids: reproducible for one merchant, independent of others.

package paymock

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// counters numbers ids as a backend does, in the test.
type counters map[string]uint64

func (c counters) Next(_ context.Context, merchantID string) (uint64, error) {
	n := c[merchantID]
	c[merchantID] = n + 1
	return n, nil
}

type brokenSequences struct{}

func (brokenSequences) Next(context.Context, string) (uint64, error) {
	return 0, ErrUnavailable
}

func merchantWith(id, key string) *Merchant {
	return &Merchant{ID: id, APIKeys: []string{key}}
}

func payments(t *testing.T, g *MerchantIDs, m *Merchant, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		id, err := g.New(t.Context(), m, "pay")
		if err != nil {
			t.Fatal(err)
		}
		if idPattern.FindStringSubmatch(id) == nil {
			t.Fatalf("id %q is not pay_ + 24 base62 characters", id)
		}
		out[i] = id
	}
	return out
}

func TestMerchantIDs_SeededAMerchantsIDsDoNotDependOnOthers(t *testing.T) {
	seed := uint64(42)
	a, b := merchantWith("a", "key of a"), merchantWith("b", "key of b")
	alone := payments(t, NewMerchantIDs(&seed, counters{}, nil), a, 20)

	g := NewMerchantIDs(&seed, counters{}, nil)
	var mixed []string
	for range 20 {
		payments(t, g, b, 3)
		mixed = append(mixed, payments(t, g, a, 1)...)
	}
	if !slices.Equal(alone, mixed) {
		t.Errorf("another merchant's creates changed a's ids: %v... vs %v...", alone[:2], mixed[:2])
	}
}

func TestMerchantIDs_SeededOthersCannotBeComputedFromTheSeedAndTheirID(t *testing.T) {
	seed := uint64(42)
	// Same merchant id, same seed, same position: only the key differs,
	// which is what another merchant does not hold.
	x := payments(t, NewMerchantIDs(&seed, counters{}, nil), merchantWith("m", "the real key"), 50)
	y := payments(t, NewMerchantIDs(&seed, counters{}, nil), merchantWith("m", "a guessed key"), 50)
	for i := range x {
		if slices.Contains(y, x[i]) {
			t.Fatalf("id %s drawn with another key", x[i])
		}
	}
	other := uint64(43)
	z := payments(t, NewMerchantIDs(&other, counters{}, nil), merchantWith("m", "the real key"), 50)
	if slices.Equal(x, z) {
		t.Error("another seed drew the same ids")
	}
}

func TestMerchantIDs_OneDrawMakesDistinctIDsPerPrefix(t *testing.T) {
	seed := uint64(1)
	for _, g := range []*MerchantIDs{NewMerchantIDs(&seed, counters{}, nil), NewMerchantIDs(nil, nil, nil)} {
		d, err := g.Draw(t.Context(), merchantWith("m", "k"))
		if err != nil {
			t.Fatal(err)
		}
		pay, cus := d.ID("pay"), d.ID("cus")
		if pay[len("pay_"):] == cus[len("cus_"):] {
			t.Errorf("pay and cus of one draw share their characters: %s %s", pay, cus)
		}
	}
}

func TestMerchantIDs_UnseededAreDistinctAndNeedNoSequence(t *testing.T) {
	g := NewMerchantIDs(nil, brokenSequences{}, nil)
	ids := payments(t, g, merchantWith("m", "k"), 1000)
	seen := make(map[string]bool)
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s drawn twice", id)
		}
		seen[id] = true
	}
}

func TestMerchantIDs_SeededFailsWhenTheSequenceCannotBeRead(t *testing.T) {
	seed := uint64(1)
	_, err := NewMerchantIDs(&seed, brokenSequences{}, nil).New(t.Context(), merchantWith("m", "k"), "pay")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v, want one wrapping ErrUnavailable", err)
	}
}

// An open-mode merchant has no configured key: its ids are drawn from its
// token, which only the token store knows.
func TestMerchantIDs_SeededOpenMerchantNeedsItsToken(t *testing.T) {
	seed := uint64(1)
	open := &Merchant{ID: "key_0123456789ab"}
	if _, err := NewMerchantIDs(&seed, counters{}, nil).New(t.Context(), open, "pay"); err == nil {
		t.Error("drew a seeded id for an open-mode merchant with no token store")
	}
	if id, err := NewMerchantIDs(nil, nil, nil).New(t.Context(), open, "pay"); err != nil || idPattern.FindStringSubmatch(id) == nil {
		t.Errorf("unseeded: %q, %v", id, err)
	}
}
