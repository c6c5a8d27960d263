// The conformance cases of the per-merchant limit that Insert holds.

package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paymock/paymock"
)

// count is the merchant's payments as List reports them.
func count(t *testing.T, s paymock.Store, merchantID string) int {
	t.Helper()
	_, n, err := s.List(t.Context(), merchantID, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// insertStopsAtLimit: a merchant fills to the limit and no further; the
// refusal wraps ErrLimitReached and stores nothing (not even the id, which
// stays free once there is room); a negative limit is none; other
// merchants and a reset make room as they should.
func insertStopsAtLimit(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const limit = 3
	for i := range limit {
		if err := s.Insert(ctx, StoredPayment("acme", i), limit); err != nil {
			t.Fatalf("insert %d of %d: %v", i+1, limit, err)
		}
	}
	over := StoredPayment("acme", limit)
	for _, tc := range []struct {
		name     string
		merchant string
		limit    int
		wantErr  error // nil: stored
		want     int   // the merchant's count afterwards
	}{
		{"past the limit is refused", "acme", limit, paymock.ErrLimitReached, limit},
		{"a lower limit is refused too", "acme", 1, paymock.ErrLimitReached, limit},
		{"a limit of 0 refuses the first", "globex", 0, paymock.ErrLimitReached, 0},
		{"another merchant has its own room", "globex", limit, nil, 1},
		{"a negative limit is none", "acme", -1, nil, limit + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := over
			if tc.merchant != "acme" {
				p = StoredPayment(tc.merchant, 0)
			}
			err := s.Insert(ctx, p, tc.limit)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("insert: %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("insert: %v, want %v", err, tc.wantErr)
			}
			if n := count(t, s, tc.merchant); n != tc.want {
				t.Errorf("%s holds %d, want %d", tc.merchant, n, tc.want)
			}
			if _, err := s.Get(ctx, tc.merchant, p.ID); (err == nil) != (tc.wantErr == nil) {
				t.Errorf("get of the payment after insert (err %v): %v", tc.wantErr, err)
			}
		})
	}
	if err := s.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	for i := range limit {
		if err := s.Insert(ctx, StoredPayment("acme", i), limit); err != nil {
			t.Fatalf("insert %d after a reset: %v", i+1, err)
		}
	}
	if err := s.Insert(ctx, over, limit); !errors.Is(err, paymock.ErrLimitReached) {
		t.Errorf("past the limit after a reset: %v, want ErrLimitReached", err)
	}
}

// customerAtLimit: at the limit a known customer is still found, and a
// new one is refused with ErrLimitReached and not stored, so that a create
// the cap refuses stores nothing; below it, or with no limit, it is made.
func customerAtLimit(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const limit = 2
	newID := func(id string) func() string { return func() string { return id } }
	if _, err := s.CustomerID(ctx, "acme", "known@example.com", newID("cus_known"), limit); err != nil {
		t.Fatalf("a customer below the limit: %v", err)
	}
	Fill(t, s, "acme", limit)
	for _, tc := range []struct {
		name, merchant, email string
		limit                 int
		newID                 string // what a new customer would be
		want                  string // "" is ErrLimitReached
	}{
		{"a known customer is found at the limit", "acme", "KNOWN@example.com", limit, "cus_x", "cus_known"},
		{"a new customer is refused at the limit", "acme", "new@example.com", limit, "cus_refused", ""},
		{"and was not stored", "acme", "new@example.com", -1, "cus_later", "cus_later"},
		{"another merchant's new customer is made", "globex", "new@example.com", limit, "cus_globex", "cus_globex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := s.CustomerID(ctx, tc.merchant, tc.email, newID(tc.newID), tc.limit)
			if tc.want == "" {
				if !errors.Is(err, paymock.ErrLimitReached) {
					t.Errorf("CustomerID = %q, %v; want ErrLimitReached", id, err)
				}
				return
			}
			if err != nil || id != tc.want {
				t.Errorf("CustomerID = %q, %v; want %q", id, err, tc.want)
			}
		})
	}
}

// concurrentInsertsAtLimit: inserts of one merchant racing to the limit
// never pass it by more than the racers less one (the documented bound of
// a shared database; the memory store is exact), and never fall short.
func concurrentInsertsAtLimit(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	const limit, racers, each = 20, 8, 10
	var stored atomic.Int64
	var wg sync.WaitGroup
	for r := range racers {
		wg.Go(func() {
			for i := range each {
				err := s.Insert(ctx, StoredPayment("acme", r*each+i), limit)
				switch {
				case err == nil:
					stored.Add(1)
				case !errors.Is(err, paymock.ErrLimitReached):
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	n := count(t, s, "acme")
	if n < limit || n > limit+racers-1 || int64(n) != stored.Load() {
		t.Errorf("%d racers of %d inserts at a limit of %d: %d stored, %d succeeded; want %d to %d, all counted",
			racers, each, limit, n, stored.Load(), limit, limit+racers-1)
	}
}
