// Tests of due payments and raised clocks: what the lifecycle's sweeps
// read on every replica.

package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/internal/storetest"
	"github.com/paymock/paymock/lifecycle"
)

func dueIDs(ds []lifecycle.DuePayment) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID + ":" + string(d.To)
	}
	return out
}

func TestDue_PendingPaymentsByExpiryOrEarlierStepOldestFirst(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	storetest.Fill(t, s, "acme", 4) // created a second apart, each expiring an hour later
	storetest.Fill(t, s, "globex", 1)
	p := func(n int) paymock.Payment { return storetest.StoredPayment("acme", n) }
	// #3 completes 10 s after creation, before every expiry.
	if err := s.SetDue(ctx, "acme", p(3).ID, p(3).CreatedAt.Add(10*time.Second), paymock.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	// #1 is completed already: never due again.
	if _, err := s.Update(ctx, "acme", p(1).ID, func(q *paymock.Payment) error { return q.Transition(paymock.StatusCompleted, q.CreatedAt) }); err != nil {
		t.Fatal(err)
	}
	// A final payment keeps no step.
	if err := s.SetDue(ctx, "acme", p(1).ID, p(1).CreatedAt, paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		until time.Time
		limit int
		want  []string
	}{
		{"before anything", p(0).CreatedAt.Add(10 * time.Second), 10, nil},
		{"the step", p(3).CreatedAt.Add(10 * time.Second), 10, []string{p(3).ID + ":completed"}},
		{"the first expiry exactly", p(0).ExpiresAt, 10, []string{p(3).ID + ":completed", p(0).ID + ":expired"}},
		{"all", p(3).ExpiresAt, 10, []string{p(3).ID + ":completed", p(0).ID + ":expired", p(2).ID + ":expired"}},
		{"a limit", p(3).ExpiresAt, 2, []string{p(3).ID + ":completed", p(0).ID + ":expired"}},
	} {
		got, err := s.Due(ctx, "acme", tc.until, tc.limit)
		if err != nil || !slices.Equal(dueIDs(got), tc.want) {
			t.Errorf("%s: Due = %v, %v; want %v", tc.name, dueIDs(got), err, tc.want)
		}
	}
	if err := s.SetDue(ctx, "acme", p(0).ID, p(0).CreatedAt, "pending"); err == nil {
		t.Error("SetDue to pending succeeded")
	}
}

func TestDueAll_EachMerchantOnItsOwnRealClock(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	storetest.Fill(t, s, "plain", 1)  // no stored clock
	storetest.Fill(t, s, "ahead", 1)  // real clock 2 h ahead
	storetest.Fill(t, s, "frozen", 1) // frozen: only an advance fires it
	expires := storetest.StoredPayment("plain", 0).ExpiresAt
	if _, err := s.AdvanceClock(ctx, "ahead", 2*time.Hour, Clock{Mode: ClockReal}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClock(ctx, "frozen", Clock{Mode: ClockFrozen, Frozen: expires.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		now  time.Time
		base time.Duration
		want []string
	}{
		{"an hour before: only the clock ahead", expires.Add(-time.Hour), 0, []string{"pay_ahead_000000:expired"}},
		// Equal instants in creation order.
		{"at the expiry: both real clocks", expires, 0, []string{"pay_plain_000000:expired", "pay_ahead_000000:expired"}},
		{"a start offset moves clocks with none stored", expires.Add(-time.Minute), time.Minute, []string{"pay_plain_000000:expired", "pay_ahead_000000:expired"}},
		{"a day before: none", expires.Add(-24 * time.Hour), 0, nil},
	} {
		got, err := s.DueAll(ctx, tc.now, tc.base, 10)
		if err != nil || !slices.Equal(dueIDs(got), tc.want) {
			t.Errorf("%s: DueAll = %v, %v; want %v", tc.name, dueIDs(got), err, tc.want)
		}
	}
}

func TestRaiseClock_OnlyForwardAndAtomically(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	other, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	start := time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC)
	real := start.Add(-time.Hour)
	frozen := Clock{Mode: ClockFrozen, Frozen: start}
	if c, err := s.RaiseClock(ctx, "f", start.Add(-time.Second), real, frozen); err != nil || !c.Frozen.Equal(start) {
		t.Errorf("raising a new clock to before its start: %+v, %v", c, err)
	}
	// Raised from two replicas to many instants at once: the latest wins.
	var wg sync.WaitGroup
	for i := range 100 {
		replica := []*Store{s, other}[i%2]
		wg.Go(func() {
			if _, err := replica.RaiseClock(ctx, "f", start.Add(time.Duration(i)*time.Second), real, frozen); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if c, _, err := s.Clock(ctx, "f"); err != nil || !c.Frozen.Equal(start.Add(99*time.Second)) {
		t.Errorf("after raising to 0..99 s: %+v, %v", c, err)
	}
	// A real clock's offset becomes t - realNow, never less than it was.
	if c, err := s.RaiseClock(ctx, "r", real.Add(90*time.Minute), real, Clock{Mode: ClockReal, Offset: time.Hour}); err != nil || c.Offset != 90*time.Minute {
		t.Errorf("raising a real clock: %+v, %v", c, err)
	}
	if c, err := s.RaiseClock(ctx, "r", real.Add(time.Minute), real, Clock{Mode: ClockReal}); err != nil || c.Offset != 90*time.Minute {
		t.Errorf("raising a real clock to the past moved it: %+v, %v", c, err)
	}
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
	storetest.Fill(t, old, "acme", 2)
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
