// Tests of due payments: the conformance suite, and payments stored by an
// older schema.

package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/duetest"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/internal/storetest"
)

func dueIDs(ds []paymock.DuePayment) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID + ":" + string(d.To)
	}
	return out
}

func TestDue_Conformance(t *testing.T) {
	duetest.Run(t, func(t *testing.T) paymock.Backend {
		s, _ := openStore(t)
		return s.Backend()
	})
}

// TestMigration_PendingPaymentsOfThePreviousVersionAreDue: payments stored
// before due instants existed are due at their expiry.
func TestMigration_PendingPaymentsOfThePreviousVersionAreDue(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	old, err := open(ctx, Config{URL: url}, 3)
	if err != nil {
		t.Fatal(err)
	}
	fillAsBefore(t, old, "acme", 2)
	old.Close()
	s, err := Open(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Due(ctx, "acme", storetest.StoredPayment("acme", 1).ExpiresAt, 10)
	if want := []string{"pay_acme_000000:expired", "pay_acme_000001:expired"}; err != nil || !slices.Equal(dueIDs(got), want) {
		t.Errorf("Due = %v, %v; want %v", dueIDs(got), err, want)
	}
}
