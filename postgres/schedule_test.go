// Tests of the shared schedule: due order, leases, merchants' clocks, and
// each item claimed exactly once by concurrent replicas.

package postgres

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

var schedNow = time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC)

func schedule(t *testing.T, s *Store, merchant string, due time.Time, kind string) int64 {
	t.Helper()
	id, err := s.Schedule(t.Context(), Item{MerchantID: merchant, DueAt: due, Kind: kind,
		Payload: json.RawMessage(fmt.Sprintf(`{"kind":%q}`, kind))})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func kinds(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Kind
	}
	return out
}

func TestSchedule_ClaimsWhatIsDueEarliestFirst(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	schedule(t, s, "acme", schedNow.Add(time.Minute), "later")
	schedule(t, s, "acme", schedNow.Add(-time.Second), "b")
	schedule(t, s, "globex", schedNow.Add(-time.Hour), "a")
	schedule(t, s, "acme", schedNow, "c-now")
	schedule(t, s, "globex", schedNow, "d-now-too") // same instant: in the order scheduled
	got, err := s.ClaimDue(ctx, schedNow, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c-now", "d-now-too"}; !slices.Equal(kinds(got), want) {
		t.Errorf("claimed %v, want %v", kinds(got), want)
	}
	for _, it := range got {
		if !it.ClaimedUntil.Equal(schedNow.Add(time.Minute)) || string(it.Payload) != fmt.Sprintf(`{"kind": %q}`, it.Kind) {
			t.Errorf("%s: claimed until %v, payload %s", it.Kind, it.ClaimedUntil, it.Payload)
		}
	}
	// Claimed items are not claimed again while their lease runs.
	if again, err := s.ClaimDue(ctx, schedNow.Add(30*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
		t.Errorf("within the lease: claimed %v, %v", kinds(again), err)
	}
	// The limit bounds a claim; what is left comes next time.
	for _, it := range got[:3] {
		if err := s.Done(ctx, it.ID); err != nil {
			t.Fatal(err)
		}
	}
	later := schedNow.Add(2 * time.Minute)
	first, _ := s.ClaimDue(ctx, later, time.Minute, 1)
	second, _ := s.ClaimDue(ctx, later, time.Minute, 1)
	if !slices.Equal(kinds(first), []string{"d-now-too"}) || !slices.Equal(kinds(second), []string{"later"}) {
		t.Errorf("one at a time: %v then %v; want the lapsed lease first, then the later item", kinds(first), kinds(second))
	}
}

func TestSchedule_ALeaseThatRanOutIsClaimedAgain(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	other, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	id := schedule(t, s, "acme", schedNow, "expiry")
	got, _ := s.ClaimDue(ctx, schedNow, 30*time.Second, 10)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("first claim: %v", got)
	}
	// The first replica dies holding it.
	if got, _ := other.ClaimDue(ctx, schedNow.Add(30*time.Second-time.Microsecond), 30*time.Second, 10); len(got) != 0 {
		t.Errorf("claimed before the lease ran out: %v", got)
	}
	got, _ = other.ClaimDue(ctx, schedNow.Add(30*time.Second), 30*time.Second, 10)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("after the lease: %v", got)
	}
	if err := other.Done(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimDue(ctx, schedNow.Add(time.Hour), time.Minute, 10); len(got) != 0 {
		t.Errorf("done, yet claimed again: %v", got)
	}
	if err := s.Done(ctx, id); err != nil {
		t.Errorf("Done of an item already gone: %v", err)
	}
}

func TestSchedule_FollowsEachMerchantsClock(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	schedule(t, s, "ahead", schedNow.Add(time.Hour), "ahead")
	schedule(t, s, "frozen", schedNow.Add(-time.Hour), "frozen")
	schedule(t, s, "plain", schedNow.Add(time.Hour), "plain")
	if err := s.SetClock(ctx, "ahead", Clock{Mode: ClockReal, Offset: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClock(ctx, "frozen", Clock{Mode: ClockFrozen, Frozen: schedNow}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimDue(ctx, schedNow, time.Minute, 10)
	if err != nil || !slices.Equal(kinds(got), []string{"ahead"}) {
		t.Errorf("claimed %v, %v; want only the item of the merchant an hour ahead", kinds(got), err)
	}
	// A frozen merchant's work fires when its clock is advanced.
	got, err = s.ClaimMerchantDue(ctx, "frozen", schedNow, schedNow, time.Minute, 10)
	if err != nil || !slices.Equal(kinds(got), []string{"frozen"}) {
		t.Errorf("advancing the frozen merchant claimed %v, %v", kinds(got), err)
	}
	if got, _ := s.ClaimMerchantDue(ctx, "plain", schedNow.Add(time.Hour-time.Microsecond), schedNow, time.Minute, 10); len(got) != 0 {
		t.Errorf("claimed before its instant: %v", kinds(got))
	}
}

func TestSchedule_NeverComesDueEarly(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	due := schedNow.Add(1500 * time.Nanosecond) // between two microseconds
	schedule(t, s, "acme", due, "x")
	if got, _ := s.ClaimDue(ctx, due.Truncate(time.Microsecond), time.Minute, 1); len(got) != 0 {
		t.Errorf("claimed %v before it was due", got[0].DueAt)
	}
	if got, _ := s.ClaimDue(ctx, due.Add(time.Microsecond), time.Minute, 1); len(got) != 1 {
		t.Error("not claimed once due")
	}
}

func TestSchedule_ResetDropsOneMerchantsWork(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	schedule(t, s, "acme", schedNow, "acme")
	schedule(t, s, "globex", schedNow, "globex")
	if err := s.ResetSchedule(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimDue(ctx, schedNow, time.Minute, 10); !slices.Equal(kinds(got), []string{"globex"}) {
		t.Errorf("after acme's reset, claimed %v", kinds(got))
	}
}

func TestSchedule_RefusesIncompleteItems(t *testing.T) {
	s, _ := openStore(t)
	for _, it := range []Item{
		{Kind: "x", DueAt: schedNow},
		{MerchantID: "acme", DueAt: schedNow},
		{MerchantID: "acme", Kind: "x"},
		{MerchantID: "acme", Kind: "x", DueAt: schedNow, Payload: json.RawMessage(`{`)},
	} {
		if _, err := s.Schedule(t.Context(), it); err == nil {
			t.Errorf("Schedule(%+v) succeeded", it)
		}
	}
	if _, err := s.ClaimDue(t.Context(), schedNow, 0, 10); err == nil {
		t.Error("a claim without a lease succeeded")
	}
}

// TestSchedule_ConcurrentClaimersClaimEachItemExactlyOnce runs two
// replicas (two stores, two pools) claiming the same due work in small
// batches until none is left.
func TestSchedule_ConcurrentClaimersClaimEachItemExactlyOnce(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	other, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const n = 500
	for i := range n {
		schedule(t, s, fmt.Sprintf("m%d", i%5), schedNow.Add(-time.Duration(i%17)*time.Second), "job")
	}
	claims := make(map[int64]int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for r, replica := range []*Store{s, other, s, other} {
		wg.Go(func() {
			for {
				items, err := replica.ClaimDue(ctx, schedNow, time.Hour, 7)
				if err != nil {
					t.Errorf("replica %d: %v", r, err)
					return
				}
				if len(items) == 0 {
					return
				}
				mu.Lock()
				for _, it := range items {
					claims[it.ID]++
				}
				mu.Unlock()
				for _, it := range items {
					if err := replica.Done(ctx, it.ID); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(claims) != n {
		t.Errorf("%d items claimed, want %d", len(claims), n)
	}
	for id, times := range claims {
		if times != 1 {
			t.Errorf("item %d claimed %d times", id, times)
		}
	}
}
