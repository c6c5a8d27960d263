// Eviction at the cap: the least recently used empty merchant goes, one
// holding anything never does.

package merchants

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestEvict_TheLeastRecentlyUsedEmptyMerchantMakesRoom(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	holding := map[string]bool{}
	var evicted []string
	ms, err := newRegistry(Config{
		MaxMerchants: 3,
		Now:          func() time.Time { return now },
		Empty:        func(_ context.Context, id string) bool { return !holding[id] },
		Evicted:      func(id string) { evicted = append(evicted, id) },
	})
	if err != nil {
		t.Fatal(err)
	}
	use := func(key string) (*paymock.Merchant, error) {
		now = now.Add(time.Second)
		return ms.Authenticate(ctx, key)
	}
	paying, _ := use("tok_paying")
	holding[paying.ID] = true
	hooked, _ := use("tok_hooked")
	if _, err := ms.AddEndpoint(ctx, hooked.ID, "https://hooks.example/in"); err != nil {
		t.Fatal(err)
	}
	empty, _ := use("tok_empty")
	if _, err := use("tok_paying"); err != nil { // the oldest again, but holding something
		t.Fatal(err)
	}

	if _, err := use("tok_new1"); err != nil {
		t.Fatalf("a new token at a cap with an empty merchant: %v", err)
	}
	if len(evicted) != 1 || evicted[0] != empty.ID {
		t.Errorf("evicted %v, want the empty merchant %s", evicted, empty.ID)
	}
	if _, err := use("tok_new2"); err != nil { // tok_new1 is empty: it goes
		t.Fatalf("second new token: %v", err)
	}
	m2, _ := use("tok_new2")
	holding[m2.ID] = true
	if _, err := use("tok_new3"); !errors.Is(err, paymock.ErrMerchantLimit) {
		t.Errorf("a new token when every merchant holds something: %v, want ErrMerchantLimit", err)
	}
	if n := ms.OpenCount(); n != 3 {
		t.Errorf("%d merchants held, want 3", n)
	}
	for _, id := range []string{paying.ID, hooked.ID, m2.ID} {
		if _, ok := ms.ByID(ctx, id); !ok {
			t.Errorf("merchant %s holding something is gone", id)
		}
	}
}
