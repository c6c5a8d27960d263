package lifecycle

import (
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func frozen(t *testing.T) *Clocks {
	t.Helper()
	c, err := NewClocks(ClockConfig{Mode: ClockFrozen, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestScheduler_AdvanceFiresDueJobsInTimeOrder(t *testing.T) {
	clocks := frozen(t)
	s := NewScheduler(clocks)
	var got []string
	var at []time.Time
	add := func(name string, d time.Duration) {
		s.After("m", d, func() { got = append(got, name); at = append(at, clocks.Now("m")) })
	}
	add("c", 30*time.Second)
	add("a", 5*time.Second)
	add("d", 2*time.Minute)
	add("b", 5*time.Second) // same instant as a: after it, in insertion order
	now, fired := s.Advance("m", time.Minute)
	if fired != 3 || len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("fired %d: %v", fired, got)
	}
	if !at[0].Equal(t0.Add(5*time.Second)) || !at[2].Equal(t0.Add(30*time.Second)) {
		t.Errorf("jobs did not see their due time: %v", at)
	}
	if !now.Equal(t0.Add(time.Minute)) {
		t.Errorf("now %v", now)
	}
	if s.Pending("m") != 1 {
		t.Errorf("pending %d", s.Pending("m"))
	}
}

func TestScheduler_JobsScheduledDuringAdvanceFireIfDue(t *testing.T) {
	s := NewScheduler(frozen(t))
	var got []string
	s.After("m", 10*time.Second, func() {
		got = append(got, "first")
		s.After("m", 5*time.Second, func() { got = append(got, "retry") })  // due at 15s: inside the advance
		s.After("m", 500*time.Second, func() { got = append(got, "late") }) // outside
	})
	s.Advance("m", 20*time.Second)
	if len(got) != 2 || got[1] != "retry" {
		t.Fatalf("got %v", got)
	}
}

func TestScheduler_AdvancingOneMerchantLeavesOthers(t *testing.T) {
	clocks := frozen(t)
	s := NewScheduler(clocks)
	fired := map[string]bool{}
	s.After("a", time.Second, func() { fired["a"] = true })
	s.After("b", time.Second, func() { fired["b"] = true })
	s.Advance("a", time.Hour)
	if !fired["a"] || fired["b"] {
		t.Errorf("fired %v", fired)
	}
	if !clocks.Now("b").Equal(t0) || !clocks.Now("a").Equal(t0.Add(time.Hour)) {
		t.Errorf("clocks a=%v b=%v", clocks.Now("a"), clocks.Now("b"))
	}
}

func TestScheduler_RealClockFiresByItself(t *testing.T) {
	clocks, err := NewClocks(ClockConfig{Mode: ClockReal})
	if err != nil {
		t.Fatal(err)
	}
	s := NewScheduler(clocks)
	s.Start()
	defer s.Stop()
	done := make(chan time.Time, 1)
	s.After("m", 20*time.Millisecond, func() { done <- clocks.Now("m") })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("job never fired on the real clock")
	}
}

func TestScheduler_FrozenClockFiresOnlyWhatIsDue(t *testing.T) {
	s := NewScheduler(frozen(t))
	s.Start()
	defer s.Stop()
	now := make(chan struct{})
	s.After("m", 0, func() { close(now) })
	later := false
	var mu sync.Mutex
	s.After("m", time.Second, func() { mu.Lock(); later = true; mu.Unlock() })
	select {
	case <-now:
	case <-time.After(10 * time.Second):
		t.Fatal("a job due now did not fire on a frozen clock")
	}
	// The loop had its chance at the later job and must have left it.
	s.poke()
	s.Advance("other", 0) // a full round trip through the scheduler
	mu.Lock()
	defer mu.Unlock()
	if later || s.Pending("m") != 1 {
		t.Errorf("a job in the future fired on a frozen clock")
	}
}

func TestScheduler_ResetDropsJobs(t *testing.T) {
	s := NewScheduler(frozen(t))
	fired := false
	s.After("m", time.Second, func() { fired = true })
	s.Reset("m")
	s.Advance("m", time.Hour)
	if fired {
		t.Error("a reset job fired")
	}
}

func TestClocks_RealModeOffsetsPerMerchant(t *testing.T) {
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	now := base
	c, err := NewClocks(ClockConfig{Mode: ClockReal, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Advance("a", time.Hour); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if got := c.Now("a"); !got.Equal(base.Add(time.Hour + time.Minute)) {
		t.Errorf("a: %v", got)
	}
	if got := c.Now("b"); !got.Equal(base.Add(time.Minute)) {
		t.Errorf("b: %v", got)
	}
	if _, err := c.Advance("a", -time.Second); err == nil {
		t.Error("moved backwards")
	}
	c.Reset("a")
	if got := c.Now("a"); !got.Equal(now) {
		t.Errorf("after reset a: %v", got)
	}
}

func TestClocks_StartSetsEveryMerchantsFirstInstant(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []ClockMode{ClockReal, ClockFrozen} {
		c, err := NewClocks(ClockConfig{Mode: mode, Start: start, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Now("x"); !got.Equal(start) {
			t.Errorf("%s: %v", mode, got)
		}
	}
	if _, err := NewClocks(ClockConfig{Mode: "sideways"}); err == nil {
		t.Error("accepted a bad mode")
	}
}
