// Package storetest is the conformance suite of paymock.Store: every
// implementation runs the same tests through Run, so that handlers can rely
// on one behaviour whichever backend holds the payments.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// testNow is the instant the suite's payments are created around: whole
// seconds, as NewPayment makes them.
var testNow = time.Date(2026, time.May, 15, 12, 34, 56, 0, time.UTC)

// Run runs the suite. open returns an empty store for one subtest; it
// registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.Store) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s paymock.Store)
	}{
		{"InsertThenGetReturnsACopy", insertThenGet},
		{"EveryFieldSurvivesTheStore", everyFieldSurvives},
		{"GetOfAnotherMerchantIsNotFound", getNotFound},
		{"InsertRejectsDuplicateID", insertRejectsDuplicate},
		{"InsertStopsAtTheMerchantsLimit", insertStopsAtLimit},
		{"ConcurrentInsertsPassTheLimitByLessThanTheRacers", concurrentInsertsAtLimit},
		{"CustomerIDMakesNoCustomerAtTheLimit", customerAtLimit},
		{"ListNewestFirstWithOffsetAndLimit", listNewestFirst},
		{"ListPagesCoverEverythingOnce", listPagesCoverEverything},
		{"ListEmptyAndOtherMerchants", listEmptyAndOtherMerchants},
		{"ListRejectsNegativeArguments", listRejectsNegative},
		{"ListHugePageIsEmpty", listHugePage},
		{"CustomerIDStablePerMerchantAndEmail", customerID},
		{"UpdateAppliesOrChangesNothing", update},
		{"UpdateKeepsIdentityAndOrder", updateKeepsIdentity},
		{"ConcurrentInsertsListsAndCustomers", concurrentUse},
		{"ConcurrentUpdatesLoseNothing", concurrentUpdates},
		{"ResetForgetsOneMerchant", reset},
		{"ResetRacingInsertsLeavesEachWholeOrGone", resetRacingInserts},
		{"LocateFindsAnyMerchantsPaymentByID", locate},
		{"IDsNoPaymentCanHaveAreNotFound", oddIDsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// StoredPayment is payment number n of a merchant, created n seconds after
// the suite's reference instant; benchmarks of a store use it too.
func StoredPayment(merchantID string, n int) paymock.Payment {
	at := testNow.Add(time.Duration(n) * time.Second)
	return paymock.Payment{
		ID:         fmt.Sprintf("pay_%s_%06d", merchantID, n),
		MerchantID: merchantID,
		Amount:     paymock.Amount(100 + n),
		Currency:   paymock.USD,
		Status:     paymock.StatusPending,
		CreatedAt:  at,
		UpdatedAt:  at,
		ExpiresAt:  at.Add(time.Hour),
	}
}

// Fill inserts payments 0..n-1 of StoredPayment for the merchant.
func Fill(t testing.TB, s paymock.Store, merchantID string, n int) {
	t.Helper()
	for i := range n {
		if err := s.Insert(context.Background(), StoredPayment(merchantID, i), -1); err != nil {
			t.Fatalf("Insert %d: %v", i, err)
		}
	}
}

// ListedAreFound checks that of payments 0..n-1 of StoredPayment for the
// merchant, those its list holds, and only those, are found by Get and
// Locate: after writes raced with a reset or a release, whatever the
// store kept is whole, and nothing half-kept is found.
func ListedAreFound(t testing.TB, s paymock.Store, merchantID string, n int) {
	t.Helper()
	ctx := context.Background()
	items, total, err := s.List(ctx, merchantID, 0, n)
	if err != nil || total != len(items) {
		t.Fatalf("List: %d items, total %d, %v", len(items), total, err)
	}
	listed := make(map[string]bool)
	for _, p := range items {
		listed[p.ID] = true
	}
	for i := range n {
		id := StoredPayment(merchantID, i).ID
		_, getErr := s.Get(ctx, merchantID, id)
		_, locErr := s.Locate(ctx, id)
		if (getErr == nil) != listed[id] || (locErr == nil) != listed[id] {
			t.Errorf("%s: listed %v, Get %v, Locate %v", id, listed[id], getErr, locErr)
		}
	}
}

func ids(ps []paymock.Payment) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}
