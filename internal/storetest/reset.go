// The conformance cases of concurrent use and of forgetting a merchant.

package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/paymock/paymock"
)

func concurrentUse(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const merchants, writers, per = 3, 4, 100
	var wg sync.WaitGroup
	for m := range merchants {
		mid := "m" + strconv.Itoa(m)
		for w := range writers {
			wg.Go(func() {
				for i := range per {
					p := StoredPayment(mid, w*per+i)
					if err := s.Insert(ctx, p, -1); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Get(ctx, mid, p.ID); err != nil {
						t.Errorf("Get right after Insert: %v", err)
					}
					if _, err := s.CustomerID(ctx, mid, fmt.Sprintf("c%d@example.com", i%7), func() string { return "cus_" + p.ID }, -1); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Go(func() {
			last := 0
			for range 200 {
				items, total, err := s.List(ctx, mid, 0, 10)
				if err != nil {
					t.Error(err)
					return
				}
				if total < last {
					t.Errorf("total went down from %d to %d", last, total)
				}
				last = total
				if len(items) > min(10, total) {
					t.Errorf("%d items with total %d", len(items), total)
				}
			}
		})
	}
	wg.Wait()
	for m := range merchants {
		mid := "m" + strconv.Itoa(m)
		items, total, err := s.List(ctx, mid, 0, 100)
		if err != nil || total != writers*per || len(items) != 100 {
			t.Errorf("%s: %d items, total %d, %v; want 100, %d", mid, len(items), total, err, writers*per)
		}
		for _, p := range items {
			if p.MerchantID != mid {
				t.Errorf("%s lists %s of %s", mid, p.ID, p.MerchantID)
			}
		}
		// One customer id per email, whichever writer came first.
		ids := make(map[string]bool)
		for i := range 7 {
			id, _ := s.CustomerID(ctx, mid, fmt.Sprintf("C%d@EXAMPLE.com", i), func() string { return "new" }, -1)
			if id == "new" || ids[id] {
				t.Errorf("%s: customer %d has id %q", mid, i, id)
			}
			ids[id] = true
		}
	}
}

func reset(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 3)
	Fill(t, s, "globex", 2)
	acmeJane, _ := s.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_old" }, -1)
	globexJane, _ := s.CustomerID(ctx, "globex", "jane@example.com", func() string { return "cus_globex" }, -1)
	if err := s.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 0 {
		t.Errorf("acme still has %d payments after reset", total)
	}
	if _, err := s.Get(ctx, "acme", StoredPayment("acme", 0).ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("Get after reset: %v", err)
	}
	if id, _ := s.CustomerID(ctx, "acme", "jane@example.com", func() string { return "cus_new" }, -1); id != "cus_new" || acmeJane != "cus_old" {
		t.Errorf("acme customer after reset = %s, want a new id", id)
	}
	if _, total, _ := s.List(ctx, "globex", 0, 10); total != 2 {
		t.Errorf("globex lost payments to acme's reset: total %d", total)
	}
	if id, _ := s.CustomerID(ctx, "globex", "jane@example.com", func() string { return "cus_x" }, -1); id != globexJane {
		t.Errorf("globex customer changed by acme's reset: %s", id)
	}
	// The merchant starts again cleanly, ids of before included.
	Fill(t, s, "acme", 1)
	if _, total, _ := s.List(ctx, "acme", 0, 10); total != 1 {
		t.Errorf("after reset and one insert, total = %d", total)
	}
	if err := s.Reset(ctx, "nobody"); err != nil {
		t.Errorf("Reset of an unknown merchant: %v", err)
	}
}

// resetRacingInserts checks that a payment inserted while its merchant is
// reset ends up wholly kept or wholly forgotten: Get, Locate and List agree.
func resetRacingInserts(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const n = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			if err := s.Insert(ctx, StoredPayment("acme", i), -1); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		for range 20 {
			if err := s.Reset(ctx, "acme"); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	ListedAreFound(t, s, "acme", n)
}
