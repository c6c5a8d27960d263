// A request's visit to its merchant keeps it from eviction, however the
// request and the eviction interleave.

package merchants

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestInFlight_AMerchantWhoseRequestBeginsWhileItIsExaminedIsKept(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var ms *Registry
	var holderID string
	var visit Visit
	var evicted []string
	ms, err := newRegistry(Config{
		MaxMerchants: 2,
		Now:          func() time.Time { return now },
		Empty: func(_ context.Context, id string) bool {
			if id == holderID && visit == nil {
				// The holder's request begins after eviction chose it and
				// before it takes it, in the very nanosecond of the
				// holder's last use: only the request's visit can tell.
				at := now
				now = t0
				_, v, err := ms.Visit(ctx, "tok_holder")
				if err != nil {
					t.Fatal(err)
				}
				visit, now = v, at
			}
			return true
		},
		Evicted: func(id string) { evicted = append(evicted, id) },
	})
	if err != nil {
		t.Fatal(err)
	}
	use := func(key string) string {
		t.Helper()
		now = now.Add(time.Second)
		m, err := ms.Authenticate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	now = t0.Add(-time.Second) // use makes it t0
	holderID = use("tok_holder")
	other := use("tok_other")

	use("tok_new_0") // examines the holder first, and the holder's request begins
	if visit == nil {
		t.Fatal("eviction did not examine the holder")
	}
	if !slices.Equal(evicted, []string{other}) {
		t.Errorf("evicted %v, want the other merchant %s: the holder's request had begun", evicted, other)
	}
	if ms.byID[holderID] == nil {
		t.Fatalf("the holder is gone while its request is under way")
	}

	visit.End()
	evicted = nil
	use("tok_new_1")
	if !slices.Equal(evicted, []string{holderID}) {
		t.Errorf("evicted %v once the holder's request had ended, want the holder %s", evicted, holderID)
	}
}
