// Tests of the scheduler and the clocks it measures on, over the
// in-memory clock store.

package lifecycle

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock/memory"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newClocks(t *testing.T, cfg ClockConfig) *Clocks {
	t.Helper()
	cfg.Store = memory.NewClocks()
	c, err := NewClocks(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func frozen(t *testing.T) *Clocks {
	t.Helper()
	return newClocks(t, ClockConfig{Mode: ClockFrozen, Start: t0})
}

// nowOf reads a merchant's clock, which the in-memory store always can.
func nowOf(c *Clocks, merchantID string) time.Time {
	t, err := c.Now(context.Background(), merchantID)
	if err != nil {
		panic(err)
	}
	return t
}

// after schedules fn d after the merchant's time now.
func after(s *Scheduler, merchantID string, d time.Duration, fn func()) {
	s.At(merchantID, nowOf(s.clocks, merchantID).Add(d), fn)
}

// advance moves the merchant's clock d on through the scheduler.
func advance(s *Scheduler, merchantID string, d time.Duration) (time.Time, int) {
	fired, err := s.Advance(context.Background(), merchantID, nowOf(s.clocks, merchantID).Add(d))
	if err != nil {
		panic(err)
	}
	return nowOf(s.clocks, merchantID), fired
}

func TestScheduler_AdvanceFiresDueJobsInTimeOrder(t *testing.T) {
	clocks := frozen(t)
	s := NewScheduler(clocks)
	var got []string
	var at []time.Time
	add := func(name string, d time.Duration) {
		after(s, "m", d, func() { got = append(got, name); at = append(at, nowOf(clocks, "m")) })
	}
	add("c", 30*time.Second)
	add("a", 5*time.Second)
	add("d", 2*time.Minute)
	add("b", 5*time.Second) // same instant as a: after it, in insertion order
	now, fired := advance(s, "m", time.Minute)
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
	after(s, "m", 10*time.Second, func() {
		got = append(got, "first")
		after(s, "m", 5*time.Second, func() { got = append(got, "retry") })  // due at 15s: inside the advance
		after(s, "m", 500*time.Second, func() { got = append(got, "late") }) // outside
	})
	advance(s, "m", 20*time.Second)
	if len(got) != 2 || got[1] != "retry" {
		t.Fatalf("got %v", got)
	}
}

func TestScheduler_AdvancingOneMerchantLeavesOthers(t *testing.T) {
	clocks := frozen(t)
	s := NewScheduler(clocks)
	fired := map[string]bool{}
	after(s, "a", time.Second, func() { fired["a"] = true })
	after(s, "b", time.Second, func() { fired["b"] = true })
	advance(s, "a", time.Hour)
	if !fired["a"] || fired["b"] {
		t.Errorf("fired %v", fired)
	}
	if !nowOf(clocks, "b").Equal(t0) || !nowOf(clocks, "a").Equal(t0.Add(time.Hour)) {
		t.Errorf("clocks a=%v b=%v", nowOf(clocks, "a"), nowOf(clocks, "b"))
	}
}

func TestScheduler_RealClockFiresByItself(t *testing.T) {
	clocks := newClocks(t, ClockConfig{Mode: ClockReal})
	s := NewScheduler(clocks)
	s.Start()
	defer s.Stop()
	done := make(chan time.Time, 1)
	after(s, "m", 20*time.Millisecond, func() { done <- nowOf(clocks, "m") })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("job never fired on the real clock")
	}
}

// TestScheduler_WakesTheLoopOnlyForAMerchantsEarliestJob adds jobs to a
// scheduler whose loop is not running and reads its wake channel: a job
// behind an earlier one of its merchant must not wake the loop, a job
// that becomes its merchant's earliest must.
func TestScheduler_WakesTheLoopOnlyForAMerchantsEarliestJob(t *testing.T) {
	for _, tc := range []struct {
		name     string
		earlier  []time.Duration // jobs of "m" already waiting
		merchant string
		add      time.Duration
		wakes    bool
	}{
		{"first job of a merchant", nil, "m", time.Hour, true},
		{"later than the earliest", []time.Duration{time.Hour}, "m", 2 * time.Hour, false},
		{"at the earliest's instant", []time.Duration{time.Hour}, "m", time.Hour, false},
		{"earlier than the earliest", []time.Duration{time.Hour, 2 * time.Hour}, "m", 30 * time.Minute, true},
		{"between two waiting", []time.Duration{time.Hour, 3 * time.Hour}, "m", 2 * time.Hour, false},
		{"another merchant's first", []time.Duration{time.Minute}, "other", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(frozen(t))
			for _, d := range tc.earlier {
				after(s, "m", d, func() {})
			}
			select {
			case <-s.wake:
			default:
			}
			after(s, tc.merchant, tc.add, func() {})
			if woke := len(s.wake) == 1; woke != tc.wakes {
				t.Errorf("loop woken: %v, want %v", woke, tc.wakes)
			}
		})
	}
}

// TestScheduler_RealClockFiresAnEarlierJobAddedLater: the loop, asleep
// until the first job an hour away, is woken for one due sooner.
func TestScheduler_RealClockFiresAnEarlierJobAddedLater(t *testing.T) {
	clocks := newClocks(t, ClockConfig{Mode: ClockReal})
	s := NewScheduler(clocks)
	s.Start()
	defer s.Stop()
	after(s, "m", time.Hour, func() {})
	after(s, "m", 2*time.Hour, func() {})
	// Let the loop go to sleep on the hour-long wait before the earlier
	// job comes: it has taken its wake-up, and had a while to get back to
	// its select (not a bound on anything: a loop not yet asleep only
	// makes the test pass where it should have failed).
	for len(s.wake) > 0 {
		runtime.Gosched()
	}
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	after(s, "m", 10*time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a job due sooner than the waiting ones never fired")
	}
	if s.Pending("m") != 2 {
		t.Errorf("pending %d, want the two later jobs", s.Pending("m"))
	}
}

func TestScheduler_FrozenClockFiresOnlyWhatIsDue(t *testing.T) {
	s := NewScheduler(frozen(t))
	s.Start()
	defer s.Stop()
	now := make(chan struct{})
	after(s, "m", 0, func() { close(now) })
	later := false
	var mu sync.Mutex
	after(s, "m", time.Second, func() { mu.Lock(); later = true; mu.Unlock() })
	select {
	case <-now:
	case <-time.After(10 * time.Second):
		t.Fatal("a job due now did not fire on a frozen clock")
	}
	// The loop had its chance at the later job and must have left it.
	s.poke()
	advance(s, "other", 0) // a full round trip through the scheduler
	mu.Lock()
	defer mu.Unlock()
	if later || s.Pending("m") != 1 {
		t.Errorf("a job in the future fired on a frozen clock")
	}
}

func TestScheduler_ResetDropsJobs(t *testing.T) {
	s := NewScheduler(frozen(t))
	fired := false
	after(s, "m", time.Second, func() { fired = true })
	s.Reset("m")
	advance(s, "m", time.Hour)
	if fired {
		t.Error("a reset job fired")
	}
}

func TestClocks_RealModeOffsetsPerMerchant(t *testing.T) {
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	now := base
	c := newClocks(t, ClockConfig{Mode: ClockReal, Now: func() time.Time { return now }})
	if _, err := c.Advance(context.Background(), "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if got := nowOf(c, "a"); !got.Equal(base.Add(time.Hour + time.Minute)) {
		t.Errorf("a: %v", got)
	}
	if got := nowOf(c, "b"); !got.Equal(base.Add(time.Minute)) {
		t.Errorf("b: %v", got)
	}
	if _, err := c.Advance(context.Background(), "a", -time.Second); err == nil {
		t.Error("moved backwards")
	}
	if err := c.Reset(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if got := nowOf(c, "a"); !got.Equal(now) {
		t.Errorf("after reset a: %v", got)
	}
}

func TestClocks_StartSetsEveryMerchantsFirstInstant(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []ClockMode{ClockReal, ClockFrozen} {
		c := newClocks(t, ClockConfig{Mode: mode, Start: start, Now: func() time.Time { return t0 }})
		if got := nowOf(c, "x"); !got.Equal(start) {
			t.Errorf("%s: %v", mode, got)
		}
	}
	if _, err := NewClocks(ClockConfig{Mode: "sideways", Store: memory.NewClocks()}); err == nil {
		t.Error("accepted a bad mode")
	}
}

// Every create reads its merchant's clock: on the in-memory store that
// read allocates nothing, whatever the mode, stored clock or not.
func TestClocks_NowAllocatesNothingInMemory(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []ClockConfig{{Mode: ClockReal}, {Mode: ClockFrozen, Start: t0}, {Mode: ClockReal, Start: t0}} {
		c := newClocks(t, cfg)
		if _, err := c.Advance(ctx, "advanced", time.Minute); err != nil {
			t.Fatal(err)
		}
		nowOf(c, "new") // a clock that depends on the start is stored by its first read
		for _, m := range []string{"new", "advanced"} {
			if n := testing.AllocsPerRun(100, func() { _, _ = c.Now(ctx, m) }); n != 0 {
				t.Errorf("%s clock, merchant %s: Now allocates %v times a read", cfg.Mode, m, n)
			}
		}
	}
}

func TestScheduler_AtAllocatesOnlyToGrow(t *testing.T) {
	s := NewScheduler(frozen(t))
	fn := func() {}
	after(s, "m", time.Hour, fn) // the merchant's queue
	due := nowOf(s.clocks, "m").Add(2 * time.Hour)
	if n := testing.AllocsPerRun(100, func() { s.At("m", due, fn) }); n != 0 {
		t.Errorf("At: %v allocations, want 0 (a job boxed for heap.Push is one)", n)
	}
}

func TestScheduler_StopsWhetherStartedNeverOnceOrTwice(t *testing.T) {
	for _, starts := range []int{0, 1, 2} {
		s := NewScheduler(frozen(t))
		for range starts {
			s.Start()
		}
		stopped := make(chan struct{})
		go func() { s.Stop(); s.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatalf("started %d times: Stop did not return", starts)
		}
		s.Start() // after Stop: runs nothing, and does not panic
	}
}
