// Package duetest is the conformance suite of paymock.DueStore: package
// memory and package postgres run the same tests, so that the lifecycle's
// sweeps see one behaviour. A DueStore lists payments of a Store on the
// clocks of a ClockStore, so the suite runs on a whole Backend.
package duetest

import (
	"slices"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/storetest"
)

// Run runs the suite. open returns an empty Backend for one subtest whose
// Payments, Clocks and Due are one backend's; it registers its own cleanup
// with t.
func Run(t *testing.T, open func(t *testing.T) paymock.Backend) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, b paymock.Backend)
	}{
		{"pending payments are due at their expiry or earlier step, oldest first", byExpiryOrStep},
		{"a payment that moved is never due again", movedNeverDue},
		{"a step must be a final status", stepIsFinal},
		{"a reset merchant has nothing due", resetNothingDue},
		{"every merchant is due on its own real clock", eachOnItsOwnClock},
		{"a limit cuts the list of every merchant's, earliest first", dueAllLimit},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

func dueIDs(ds []paymock.DuePayment) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID + ":" + string(d.To)
	}
	return out
}

func p(merchantID string, n int) paymock.Payment { return storetest.StoredPayment(merchantID, n) }

func checkDue(t *testing.T, b paymock.Backend, merchantID, name string, until time.Time, limit int, want []string) {
	t.Helper()
	got, err := b.Due.Due(t.Context(), merchantID, until, limit)
	if err != nil || !slices.Equal(dueIDs(got), want) {
		t.Errorf("%s: Due = %v, %v; want %v", name, dueIDs(got), err, want)
	}
	for _, d := range got {
		if d.MerchantID != merchantID {
			t.Errorf("%s: %s listed for merchant %q", name, d.ID, d.MerchantID)
		}
	}
}

func byExpiryOrStep(t *testing.T, b paymock.Backend) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "acme", 4) // created a second apart, each expiring an hour later
	storetest.Fill(t, b.Payments, "globex", 1)
	// #3 completes 10 s after creation, before every expiry.
	if err := b.Due.SetDue(ctx, "acme", p("acme", 3).ID, p("acme", 3).CreatedAt.Add(10*time.Second), paymock.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	step := p("acme", 3).ID + ":completed"
	for _, tc := range []struct {
		name  string
		until time.Time
		limit int
		want  []string
	}{
		{"before anything", p("acme", 0).CreatedAt.Add(10 * time.Second), 10, nil},
		{"the step", p("acme", 3).CreatedAt.Add(10 * time.Second), 10, []string{step}},
		{"the first expiry exactly", p("acme", 0).ExpiresAt, 10, []string{step, p("acme", 0).ID + ":expired"}},
		{"all, the step listed once", p("acme", 3).ExpiresAt, 10,
			[]string{step, p("acme", 0).ID + ":expired", p("acme", 1).ID + ":expired", p("acme", 2).ID + ":expired"}},
		{"a limit", p("acme", 3).ExpiresAt, 2, []string{step, p("acme", 0).ID + ":expired"}},
	} {
		checkDue(t, b, "acme", tc.name, tc.until, tc.limit, tc.want)
	}
	checkDue(t, b, "nobody", "a merchant with no payments", p("acme", 3).ExpiresAt, 10, nil)
	if _, err := b.Due.Due(ctx, "acme", p("acme", 3).ExpiresAt, 0); err == nil {
		t.Error("Due with limit 0 succeeded")
	}
}

func movedNeverDue(t *testing.T, b paymock.Backend) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "acme", 3)
	// #0 has a step, and completes before it: neither is due.
	if err := b.Due.SetDue(ctx, "acme", p("acme", 0).ID, p("acme", 0).CreatedAt.Add(time.Minute), paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1} {
		if _, err := b.Payments.Update(ctx, "acme", p("acme", n).ID, func(q *paymock.Payment) error {
			return q.Transition(paymock.StatusCompleted, q.CreatedAt)
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A final payment keeps no step; an unknown one has none.
	if err := b.Due.SetDue(ctx, "acme", p("acme", 1).ID, p("acme", 1).CreatedAt, paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	if err := b.Due.SetDue(ctx, "acme", "pay_unknown", p("acme", 1).CreatedAt, paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	checkDue(t, b, "acme", "after two moved", p("acme", 2).ExpiresAt, 10, []string{p("acme", 2).ID + ":expired"})
	// Listed while pending, then moved: gone from the next list.
	if _, err := b.Payments.Update(ctx, "acme", p("acme", 2).ID, func(q *paymock.Payment) error {
		return q.Transition(paymock.StatusExpired, q.ExpiresAt)
	}); err != nil {
		t.Fatal(err)
	}
	checkDue(t, b, "acme", "after the last expired", p("acme", 2).ExpiresAt, 10, nil)
}

func stepIsFinal(t *testing.T, b paymock.Backend) {
	storetest.Fill(t, b.Payments, "acme", 1)
	if err := b.Due.SetDue(t.Context(), "acme", p("acme", 0).ID, p("acme", 0).CreatedAt, paymock.StatusPending); err == nil {
		t.Error("SetDue to pending succeeded")
	}
	checkDue(t, b, "acme", "after a refused step", p("acme", 0).CreatedAt.Add(time.Minute), 10, nil)
}

func resetNothingDue(t *testing.T, b paymock.Backend) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "acme", 2)
	storetest.Fill(t, b.Payments, "globex", 1)
	if err := b.Payments.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	checkDue(t, b, "acme", "after a reset", p("acme", 1).ExpiresAt, 10, nil)
	checkDue(t, b, "globex", "another merchant after a reset", p("globex", 0).ExpiresAt, 10, []string{p("globex", 0).ID + ":expired"})
	// The merchant's payments after the reset are due as before.
	storetest.Fill(t, b.Payments, "acme", 1)
	checkDue(t, b, "acme", "a payment after a reset", p("acme", 0).ExpiresAt, 10, []string{p("acme", 0).ID + ":expired"})
}

func eachOnItsOwnClock(t *testing.T, b paymock.Backend) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "plain", 1)  // no stored clock
	storetest.Fill(t, b.Payments, "ahead", 1)  // real clock 2 h ahead
	storetest.Fill(t, b.Payments, "frozen", 1) // frozen: only an advance fires it
	expires := p("plain", 0).ExpiresAt
	if _, err := b.Clocks.AdvanceClock(ctx, "ahead", 2*time.Hour, paymock.ClockState{Mode: paymock.ClockReal}); err != nil {
		t.Fatal(err)
	}
	frozen := paymock.ClockState{Mode: paymock.ClockFrozen, Frozen: expires.Add(24 * time.Hour)}
	if _, err := b.Clocks.AdvanceClock(ctx, "frozen", 0, frozen); err != nil {
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
		got, err := b.Due.DueAll(ctx, tc.now, tc.base, 10)
		if err != nil || !slices.Equal(dueIDs(got), tc.want) {
			t.Errorf("%s: DueAll = %v, %v; want %v", tc.name, dueIDs(got), err, tc.want)
		}
	}
	// The frozen merchant's payment is due on its own clock, for an advance.
	checkDue(t, b, "frozen", "the frozen merchant", frozen.Frozen, 10, []string{"pay_frozen_000000:expired"})
}

func dueAllLimit(t *testing.T, b paymock.Backend) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "acme", 3)
	storetest.Fill(t, b.Payments, "globex", 3)
	// globex's #2 has a step before everything.
	if err := b.Due.SetDue(ctx, "globex", p("globex", 2).ID, p("globex", 0).CreatedAt, paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	got, err := b.Due.DueAll(ctx, p("acme", 2).ExpiresAt, 0, 3)
	want := []string{"pay_globex_000002:failed", "pay_acme_000000:expired", "pay_globex_000000:expired"}
	if err != nil || !slices.Equal(dueIDs(got), want) {
		t.Errorf("DueAll limit 3 = %v, %v; want %v", dueIDs(got), err, want)
	}
	if _, err := b.Due.DueAll(ctx, p("acme", 2).ExpiresAt, 0, 0); err == nil {
		t.Error("DueAll with limit 0 succeeded")
	}
}
