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

// TestVisit_AMerchantTakenBetweenFoundAndHeldIsLookedUpAgain forgets a
// merchant after Visit found it and before Visit held it: the visit
// finds its token again, as a request just after would (a new, empty
// merchant), and holds that one.
func TestVisit_AMerchantTakenBetweenFoundAndHeldIsLookedUpAgain(t *testing.T) {
	ctx := context.Background()
	clock := newFakeNow()
	ms := openMerchants(t, Config{Now: clock.Now, MaxMerchants: 3})
	old := mustAuth(t, ms, "sk_taken")
	clock.Advance(48 * time.Hour)
	forget := func() []string {
		return ms.Forget(ctx, clock.Now(), 24*time.Hour, func(string) bool { return false })
	}
	found := 0
	ms.foundToVisit = func() {
		found++
		if found == 1 {
			// Forget found the merchant idle just before the lookup
			// marked it used, and takes it now.
			ms.mu.RLock()
			e := ms.byID[old.ID]
			ms.mu.RUnlock()
			e.lastUsed.Store(clock.Now().Add(-48 * time.Hour).UnixNano())
			if gone := forget(); !slices.Equal(gone, []string{old.ID}) {
				t.Fatalf("Forget = %v, want [%s]", gone, old.ID)
			}
		}
	}
	m, v, err := ms.Visit(ctx, "sk_taken")
	if err != nil {
		t.Fatal(err)
	}
	defer v.End()
	if found != 2 {
		t.Fatalf("the token was looked up %d times, want twice: found, taken, found again", found)
	}
	if m == old {
		t.Fatal("the visit holds the forgotten merchant")
	}
	if got, ok := ms.ByID(ctx, m.ID); !ok || got != m {
		t.Fatalf("the merchant visited is not the one the registry holds: %v, %v", got, ok)
	}
	ms.foundToVisit = nil
	clock.Advance(48 * time.Hour)
	if gone := forget(); slices.Contains(gone, m.ID) {
		t.Fatal("a merchant under a visit was forgotten")
	}
}
