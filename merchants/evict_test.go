// Eviction at the cap: the least recently used empty merchant goes, one
// holding anything never does.

package merchants

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
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

// readCounter is the memory store counting, by merchant, the reads of
// eviction's examination (Keys, its first read of each merchant).
type readCounter struct {
	paymock.MerchantStore
	mu   sync.Mutex
	read []string
}

func (c *readCounter) Keys(ctx context.Context, merchantID string) ([]paymock.StoredKey, error) {
	c.mu.Lock()
	c.read = append(c.read, merchantID)
	c.mu.Unlock()
	return c.MerchantStore.Keys(ctx, merchantID)
}

// take returns the merchants read since the last take.
func (c *readCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.read
	c.read = nil
	return r
}

func TestEvict_ExaminesAtMostTheBoundPerCallAndTheNextCallGoesOn(t *testing.T) {
	const bound = maxExaminedPerEviction
	type call struct {
		examined int  // merchants read by this new token's request
		admitted bool // or refused ErrMerchantLimit
	}
	for _, tc := range []struct {
		name      string
		merchants int // the cap, all holding something, kept, then used again
		emptied   int // the one (in order of use) then holding nothing; -1: none
		calls     []call
	}{
		{"under the bound, one call reaches the emptied youngest", bound / 2, bound/2 - 1,
			[]call{{bound / 2, true}}},
		{"past the bound, the first call gives up and the next goes on", bound + 8, bound + 7,
			[]call{{bound, false}, {8, true}}},
		{"past the bound, none emptied: each call examines the next, then none", bound + 8, -1,
			[]call{{bound, false}, {8, false}, {0, false}}},
		{"the oldest emptied is found first", bound + 8, 0,
			[]call{{1, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			holding := map[string]bool{}
			var evicted []string
			store := &readCounter{MerchantStore: memory.NewMerchants()}
			ms, err := newRegistry(Config{
				MaxMerchants: tc.merchants,
				Store:        store,
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
			ids := make([]string, tc.merchants)
			for i := range ids {
				m, err := use(fmt.Sprint("tok_", i))
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = m.ID
				holding[m.ID] = true
			}
			// New tokens mark them all kept, the bound at a time.
			for i := 0; i <= tc.merchants/bound; i++ {
				if _, err := use(fmt.Sprint("tok_marking_", i)); !errors.Is(err, paymock.ErrMerchantLimit) {
					t.Fatalf("a new token at a cap of merchants holding something: %v, want ErrMerchantLimit", err)
				}
			}
			if r := store.take(); len(r) != tc.merchants {
				t.Fatalf("marking examined %d merchants, want each of the %d once", len(r), tc.merchants)
			}
			for i := range ids {
				if _, err := use(fmt.Sprint("tok_", i)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.emptied >= 0 {
				holding[ids[tc.emptied]] = false
			}

			seen := map[string]bool{}
			oldest := 0 // merchants are used in ids' order: the oldest not yet examined
			for n, c := range tc.calls {
				_, err := use(fmt.Sprint("tok_new_", n))
				read := store.take()
				if len(read) != c.examined {
					t.Errorf("call %d examined %d merchants, want %d", n+1, len(read), c.examined)
				}
				for i, id := range read {
					if seen[id] {
						t.Errorf("call %d examined %s again: it was kept and not used since", n+1, id)
					}
					seen[id] = true
					if oldest+i < len(ids) && id != ids[oldest+i] {
						t.Errorf("call %d examined %s as its merchant %d, want the least recently used %s", n+1, id, i+1, ids[oldest+i])
					}
				}
				oldest += len(read)
				if c.admitted {
					if err != nil {
						t.Errorf("call %d: %v, want a new merchant", n+1, err)
					}
					if len(evicted) != 1 || evicted[0] != ids[tc.emptied] {
						t.Errorf("evicted %v, want the emptied %s", evicted, ids[tc.emptied])
					}
				} else if !errors.Is(err, paymock.ErrMerchantLimit) {
					t.Errorf("call %d: %v, want ErrMerchantLimit", n+1, err)
				}
			}
			for i, id := range ids {
				if _, ok := ms.ByID(ctx, id); !ok && i != tc.emptied {
					t.Errorf("merchant %d (%s), holding something, is gone", i, id)
				}
			}
		})
	}
}

// BenchmarkEvict_NewTokenAtTheCap is one new token's request at a full
// default cap: evicting an empty merchant, refused at a cap of merchants
// kept and unused since, and refused after the 32 oldest were used again
// (those 32 requests included: the most eviction now reads per request).
func BenchmarkEvict_NewTokenAtTheCap(b *testing.B) {
	const n = DefaultMaxMerchants
	for _, tc := range []struct {
		name     string
		holding  bool // every merchant holds something
		usedEach int  // merchants used again before each new token
	}{
		{"empty merchants, one evicted", false, 0},
		{"kept merchants, none used since", true, 0},
		{"kept merchants, 32 used since", true, 32},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			ms, err := newRegistry(Config{
				Now:   func() time.Time { tick = tick.Add(time.Microsecond); return tick },
				Empty: func(context.Context, string) bool { return !tc.holding },
			})
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("sk_test_held_%08d", i)
				mustAuth(b, ms, keys[i])
			}
			for i := 0; tc.holding && i <= n/maxExaminedPerEviction; i++ { // every merchant examined and kept
				if _, err := ms.Authenticate(ctx, fmt.Sprint("sk_test_marking_", i)); !errors.Is(err, paymock.ErrMerchantLimit) {
					b.Fatalf("marking: %v", err)
				}
			}
			fresh := make([]string, b.N)
			for i := range fresh {
				fresh[i] = fmt.Sprintf("sk_test_new_%08d", i)
			}
			used := 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := range b.N {
				for range tc.usedEach {
					// Oldest first, so that each new token examines these.
					if _, err := ms.Authenticate(ctx, keys[used%n]); err != nil {
						b.Fatal(err)
					}
					used++
				}
				_, err := ms.Authenticate(ctx, fresh[i])
				if tc.holding != errors.Is(err, paymock.ErrMerchantLimit) {
					b.Fatalf("new token %d: %v", i, err)
				}
			}
			// CPU time, since on a shared machine the wall time is mostly others'.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// processCPU is the process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestEvict_AMerchantUsedAtAnOddNanosecondIsNotTakenForKept(t *testing.T) {
	// The kept mark is lastUsed's lowest bit: a use must not set it.
	now := time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC)
	var evicted []string
	ms, err := newRegistry(Config{
		MaxMerchants: 1,
		Now:          func() time.Time { now = now.Add(2 * time.Second); return now },
		Empty:        func(context.Context, string) bool { return true },
		Evicted:      func(id string) { evicted = append(evicted, id) },
	})
	if err != nil {
		t.Fatal(err)
	}
	first := mustAuth(t, ms, "tok_first")
	if _, err := ms.Authenticate(context.Background(), "tok_second"); err != nil {
		t.Fatalf("a new token at a cap of one empty merchant: %v", err)
	}
	if len(evicted) != 1 || evicted[0] != first.ID {
		t.Errorf("evicted %v, want the empty %s", evicted, first.ID)
	}
}
