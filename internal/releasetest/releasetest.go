// Package releasetest is the conformance suite of paymock.Backend.Release:
// package memory and package postgres run the same tests, so that a
// merchant forgotten when idle or evicted at the cap is dropped by the
// backend only this process uses and kept whole by the one replicas share,
// as the Backend's documentation and docs/security.md promise.
package releasetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/storetest"
)

// Run runs the suite. open returns an empty Backend for one subtest; it
// registers its own cleanup with t. shared says the backend is one that
// replicas share, which keeps everything of a released merchant: another
// replica may be serving it.
func Run(t *testing.T, open func(t *testing.T) paymock.Backend, shared bool) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, b paymock.Backend, shared bool)
	}{
		{"a released merchant's payments, customers, clock, due work and ids go, or stay whole when shared", releasedGoesOrStays},
		{"a release touches no other merchant", touchesNoOther},
		{"a released merchant's token coming back stores and finds payments", comesBack},
		{"inserts racing a release are each wholly kept or wholly gone", racingInserts},
		{"releasing a merchant the backend never saw is no error", unknown},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t), shared) })
	}
}

// farFuture is past every expiry of the suite's payments.
var farFuture = storetest.StoredPayment("", 0).CreatedAt.Add(24 * time.Hour)

// realClock is a new merchant's clock as the sandbox makes it.
var realClock = paymock.ClockState{Mode: paymock.ClockReal}

// merchantState is what a backend holds of one merchant, as its callers
// read it.
type merchantState struct {
	listed, found, located, due, dueAll int
	customer                            string
	clock                               bool
	nextID                              uint64
}

// stateOf reads the merchant's state; n is the number of its payments the
// caller stored (storetest.StoredPayment 0..n-1). It takes one number of
// the merchant's id sequence and makes a customer if none is stored.
func stateOf(t *testing.T, b paymock.Backend, merchantID string, n int) merchantState {
	t.Helper()
	ctx := t.Context()
	var st merchantState
	var err error
	if _, st.listed, err = b.Payments.List(ctx, merchantID, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := storetest.StoredPayment(merchantID, i).ID
		if _, err := b.Payments.Get(ctx, merchantID, id); err == nil {
			st.found++
		} else if !errors.Is(err, paymock.ErrNotFound) {
			t.Fatal(err)
		}
		if p, err := b.Payments.Locate(ctx, id); err == nil && p.MerchantID == merchantID {
			st.located++
		} else if err != nil && !errors.Is(err, paymock.ErrNotFound) {
			t.Fatal(err)
		}
	}
	due, err := b.Due.Due(ctx, merchantID, farFuture, 100)
	if err != nil {
		t.Fatal(err)
	}
	st.due = len(due)
	// A merchant with no clock stored is swept at the base offset, one
	// with a clock at its own, raised to farFuture by hold.
	all, err := b.Due.DueAll(ctx, time.Now(), farFuture.Sub(time.Now()), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if d.MerchantID == merchantID {
			st.dueAll++
		}
	}
	if st.customer, err = b.Payments.CustomerID(ctx, merchantID, "jane@example.com", func() string { return "cus_new_" + merchantID }, -1); err != nil {
		t.Fatal(err)
	}
	if _, st.clock, err = b.Clocks.Clock(ctx, merchantID); err != nil {
		t.Fatal(err)
	}
	if st.nextID, err = b.Sequences.Next(ctx, merchantID); err != nil {
		t.Fatal(err)
	}
	return st
}

// hold stores n pending payments, a customer, a clock moved forward and
// two numbers of the id sequence for the merchant.
func hold(t *testing.T, b paymock.Backend, merchantID string, n int) {
	t.Helper()
	ctx := t.Context()
	storetest.Fill(t, b.Payments, merchantID, n)
	if _, err := b.Payments.CustomerID(ctx, merchantID, "jane@example.com", func() string { return "cus_old_" + merchantID }, -1); err != nil {
		t.Fatal(err)
	}
	// Raised past every expiry, so that the sweep of real clocks reaches
	// them whatever the real time.
	if _, err := b.Clocks.RaiseClock(ctx, merchantID, farFuture, time.Now(), realClock); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := b.Sequences.Next(ctx, merchantID); err != nil {
			t.Fatal(err)
		}
	}
}

func release(t *testing.T, b paymock.Backend, merchantID string) {
	t.Helper()
	if err := b.Release(t.Context(), merchantID); err != nil {
		t.Fatalf("Release(%s): %v", merchantID, err)
	}
}

func releasedGoesOrStays(t *testing.T, b paymock.Backend, shared bool) {
	const n = 3
	hold(t, b, "acme", n)
	release(t, b, "acme")
	want := merchantState{customer: "cus_new_acme"} // a new merchant's
	if shared {
		want = merchantState{listed: n, found: n, located: n, due: n, dueAll: n, customer: "cus_old_acme", clock: true, nextID: 2}
	}
	if got := stateOf(t, b, "acme", n); got != want {
		t.Errorf("after the release, acme holds %+v; want %+v", got, want)
	}
}

func touchesNoOther(t *testing.T, b paymock.Backend, _ bool) {
	const n = 2
	hold(t, b, "acme", n)
	hold(t, b, "globex", n)
	release(t, b, "acme")
	want := merchantState{listed: n, found: n, located: n, due: n, dueAll: n, customer: "cus_old_globex", clock: true, nextID: 2}
	if got := stateOf(t, b, "globex", n); got != want {
		t.Errorf("after acme's release, globex holds %+v; want %+v", got, want)
	}
}

// comesBack releases merchants in turn and brings the first back, so that
// on a store that reuses what a released merchant left (its place in an
// index) the newcomer's payments are still found by id alone.
func comesBack(t *testing.T, b paymock.Backend, shared bool) {
	ctx := t.Context()
	storetest.Fill(t, b.Payments, "acme", 2)
	release(t, b, "acme")
	storetest.Fill(t, b.Payments, "globex", 1)
	release(t, b, "globex")
	// acme again, with ids of its own numbered past the first two, and
	// globex's first id stored again, now under acme's name.
	for _, p := range []paymock.Payment{storetest.StoredPayment("acme", 2), storetest.StoredPayment("acme", 3), storetest.StoredPayment("globex", 0)} {
		p.MerchantID = "acme"
		if err := b.Payments.Insert(ctx, p, -1); err != nil {
			t.Fatal(err)
		}
	}
	wantTotal := 3
	if shared {
		wantTotal = 5
	}
	items, total, err := b.Payments.List(ctx, "acme", 0, 10)
	if err != nil || total != wantTotal || len(items) != wantTotal {
		t.Fatalf("acme lists %d of %d, %v; want %d", len(items), total, err, wantTotal)
	}
	for _, id := range []string{storetest.StoredPayment("acme", 3).ID, storetest.StoredPayment("globex", 0).ID} {
		if p, err := b.Payments.Locate(ctx, id); err != nil || (p.MerchantID != "acme" && !shared) {
			t.Errorf("Locate(%s) = %s, %v; want acme's", id, p.MerchantID, err)
		}
		if _, err := b.Payments.Get(ctx, "acme", id); err != nil {
			t.Errorf("acme's Get(%s): %v", id, err)
		}
	}
}

// racingInserts releases a merchant again and again while its payments
// and customers are stored from several goroutines: each payment ends up
// wholly kept (Get, Locate and List agree it is there) or wholly gone,
// never written where nobody reads it.
func racingInserts(t *testing.T, b paymock.Backend, _ bool) {
	ctx := t.Context()
	const writers, per = 4, 100
	var inserting sync.WaitGroup
	for w := range writers {
		inserting.Go(func() {
			for i := range per {
				if err := b.Payments.Insert(ctx, storetest.StoredPayment("acme", w*per+i), -1); err != nil {
					t.Error(err)
				}
				if _, err := b.Payments.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_acme" }, -1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	done := make(chan struct{})
	var releasing sync.WaitGroup
	releasing.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := b.Release(ctx, "acme"); err != nil {
				t.Error(err)
				return
			}
		}
	})
	inserting.Wait()
	close(done)
	releasing.Wait()
	storetest.ListedAreFound(t, b.Payments, "acme", writers*per)
}

func unknown(t *testing.T, b paymock.Backend, _ bool) {
	release(t, b, "nobody")
	if got := stateOf(t, b, "nobody", 0); got != (merchantState{customer: "cus_new_nobody"}) {
		t.Errorf("after releasing a merchant never seen, it holds %+v", got)
	}
}
