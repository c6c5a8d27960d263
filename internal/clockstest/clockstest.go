// Package clockstest is the conformance suite of paymock.ClockStore and
// paymock.AdvanceLocker: package memory and package postgres run the same
// tests, so that the lifecycle's one algorithm sees one behaviour.
package clockstest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

var start = time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC)

// lastInstant is the latest a clock shows (lifecycle.LastInstant).
var lastInstant = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)

func frozenAt(t time.Time) paymock.ClockState {
	return paymock.ClockState{Mode: paymock.ClockFrozen, Frozen: t}
}

func realBy(d time.Duration) paymock.ClockState {
	return paymock.ClockState{Mode: paymock.ClockReal, Offset: d}
}

// Run runs the ClockStore suite. open returns an empty store for one
// subtest; it registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.ClockStore) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s paymock.ClockStore)
	}{
		{"a merchant with none stored has none", noneStored},
		{"the first advance stores the initial clock exactly, per merchant", storedExactly},
		{"advances made at once add up", advancesAddUp},
		{"an advance never moves back, and a bad clock is refused", refusesBad},
		{"a raise only moves forward, the latest of many at once winning", raiseOnlyForward},
		{"a reset forgets the clock", resetForgets},
		{"a frozen clock reaches the last instant exactly", reachesLastInstant},
		{"a real clock's offset never wraps", offsetNeverWraps},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

func noneStored(t *testing.T, s paymock.ClockStore) {
	if st, ok, err := s.Clock(t.Context(), "acme"); ok || err != nil {
		t.Fatalf("Clock of a new merchant: %+v, %v, %v", st, ok, err)
	}
}

func storedExactly(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	frozen := start.Add(123456789)
	for _, tc := range []struct {
		merchant string
		initial  paymock.ClockState
	}{
		{"frozen", frozenAt(frozen)},
		{"real", realBy(90*time.Minute + 7)},
	} {
		got, err := s.AdvanceClock(ctx, tc.merchant, 0, tc.initial)
		if err != nil || got != tc.initial {
			t.Errorf("%s: AdvanceClock by 0 = %+v, %v; want %+v", tc.merchant, got, err, tc.initial)
		}
		read, ok, err := s.Clock(ctx, tc.merchant)
		if err != nil || !ok || read.Mode != tc.initial.Mode || read.Offset != tc.initial.Offset || !read.Frozen.Equal(tc.initial.Frozen) {
			t.Errorf("%s: read back %+v, %v, %v; want %+v", tc.merchant, read, ok, err, tc.initial)
		}
	}
	if _, ok, _ := s.Clock(ctx, "other"); ok {
		t.Error("a merchant never advanced has a clock stored")
	}
}

func advancesAddUp(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	for _, tc := range []struct {
		merchant string
		initial  paymock.ClockState
		want     paymock.ClockState
	}{
		{"frozen", frozenAt(start), frozenAt(start.Add(200 * time.Second))},
		{"real", realBy(time.Hour), realBy(time.Hour + 200*time.Second)},
	} {
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				if _, err := s.AdvanceClock(ctx, tc.merchant, time.Second, tc.initial); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, _, err := s.Clock(ctx, tc.merchant)
		if err != nil || got.Mode != tc.want.Mode || got.Offset != tc.want.Offset || !got.Frozen.Equal(tc.want.Frozen) {
			t.Errorf("%s: after 200 advances of 1 s at once: %+v, %v; want %+v", tc.merchant, got, err, tc.want)
		}
	}
}

func refusesBad(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	if _, err := s.AdvanceClock(ctx, "acme", -time.Second, realBy(0)); err == nil {
		t.Error("an advance by -1 s succeeded")
	}
	for _, bad := range []paymock.ClockState{{}, {Mode: "sundial"}, {Mode: paymock.ClockFrozen}} {
		if _, err := s.AdvanceClock(ctx, "acme", time.Second, bad); err == nil {
			t.Errorf("AdvanceClock with initial %+v succeeded", bad)
		}
		if _, err := s.RaiseClock(ctx, "acme", start, start, bad); err == nil {
			t.Errorf("RaiseClock with initial %+v succeeded", bad)
		}
	}
	if _, ok, _ := s.Clock(ctx, "acme"); ok {
		t.Error("a refused clock was stored")
	}
}

func raiseOnlyForward(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	real := start.Add(-time.Hour)
	frozen := frozenAt(start)
	if c, err := s.RaiseClock(ctx, "f", start.Add(-time.Second), real, frozen); err != nil || !c.Frozen.Equal(start) {
		t.Errorf("raising a new clock to before its start: %+v, %v", c, err)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			if _, err := s.RaiseClock(ctx, "f", start.Add(time.Duration(i)*time.Second), real, frozen); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if c, _, err := s.Clock(ctx, "f"); err != nil || !c.Frozen.Equal(start.Add(99*time.Second)) {
		t.Errorf("after raising to 0..99 s at once: %+v, %v", c, err)
	}
	// A real clock's offset becomes t - realNow, never less than it was.
	if c, err := s.RaiseClock(ctx, "r", real.Add(90*time.Minute), real, realBy(time.Hour)); err != nil || c.Offset != 90*time.Minute {
		t.Errorf("raising a real clock: %+v, %v", c, err)
	}
	if c, err := s.RaiseClock(ctx, "r", real.Add(time.Minute), real, realBy(0)); err != nil || c.Offset != 90*time.Minute {
		t.Errorf("raising a real clock to the past moved it: %+v, %v", c, err)
	}
}

func resetForgets(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	if _, err := s.AdvanceClock(ctx, "acme", time.Hour, frozenAt(start)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdvanceClock(ctx, "globex", time.Hour, frozenAt(start)); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetClock(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Clock(ctx, "acme"); ok || err != nil {
		t.Errorf("a reset clock is still stored: %v, %v", ok, err)
	}
	if c, ok, err := s.Clock(ctx, "globex"); !ok || err != nil || !c.Frozen.Equal(start.Add(time.Hour)) {
		t.Errorf("another merchant's clock after a reset: %+v, %v, %v", c, ok, err)
	}
	if err := s.ResetClock(ctx, "nobody"); err != nil {
		t.Errorf("resetting a clock never stored: %v", err)
	}
}

func reachesLastInstant(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	c, err := s.AdvanceClock(ctx, "acme", 0, frozenAt(lastInstant.Add(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if c, err = s.AdvanceClock(ctx, "acme", time.Hour, c); err != nil || !c.Frozen.Equal(lastInstant) {
		t.Fatalf("advanced to %v, %v; want %v", c.Frozen, err, lastInstant)
	}
	if c, _, err := s.Clock(ctx, "acme"); err != nil || !c.Frozen.Equal(lastInstant) {
		t.Errorf("read back %v, %v; want %v", c.Frozen, err, lastInstant)
	}
	if c, err := s.RaiseClock(ctx, "raised", lastInstant, start, frozenAt(start)); err != nil || !c.Frozen.Equal(lastInstant) {
		t.Errorf("raised to %v, %v; want %v", c.Frozen, err, lastInstant)
	}
}

func offsetNeverWraps(t *testing.T, s paymock.ClockStore) {
	ctx := t.Context()
	const longest = time.Duration(1<<63 - 1)
	if _, err := s.AdvanceClock(ctx, "acme", longest-time.Hour, realBy(0)); err != nil {
		t.Fatal(err)
	}
	if c, err := s.AdvanceClock(ctx, "acme", 2*time.Hour, realBy(0)); err == nil {
		t.Errorf("an offset past the longest duration: %+v, no error", c)
	}
	if c, _, err := s.Clock(ctx, "acme"); err != nil || c.Offset != longest-time.Hour {
		t.Errorf("after a refused advance: %+v, %v; want the offset unchanged", c, err)
	}
	if c, err := s.RaiseClock(ctx, "raised", lastInstant, start, realBy(0)); err == nil {
		t.Errorf("a real clock raised to %v: %+v, no error", lastInstant, c)
	}
}

// RunAdvanceLocker runs the AdvanceLocker suite. open returns a locker
// for one subtest; it registers its own cleanup with t.
func RunAdvanceLocker(t *testing.T, open func(t *testing.T) paymock.AdvanceLocker) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, l paymock.AdvanceLocker)
	}{
		{"one advance of a merchant at a time", oneAtATime},
		{"other merchants do not wait", othersDoNotWait},
		{"an unlock lets the next advance in", unlockLetsNextIn},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
}

// waitBriefly is how long a second LockAdvance is given to (wrongly)
// succeed while the first holds the lock: a locker that works never does,
// however long it is given.
const waitBriefly = 200 * time.Millisecond

func oneAtATime(t *testing.T, l paymock.AdvanceLocker) {
	unlock, err := l.LockAdvance(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(t.Context(), waitBriefly)
	defer cancel()
	if second, err := l.LockAdvance(ctx, "acme"); err == nil {
		second()
		t.Fatal("a second advance of the merchant got the lock while the first held it")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiting advance whose context ended: %v, want the context's error", err)
	}
}

func othersDoNotWait(t *testing.T, l paymock.AdvanceLocker) {
	unlock, err := l.LockAdvance(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, err := l.LockAdvance(t.Context(), "globex")
	if err != nil {
		t.Fatalf("another merchant's advance: %v", err)
	}
	other()
}

func unlockLetsNextIn(t *testing.T, l paymock.AdvanceLocker) {
	unlock, err := l.LockAdvance(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		next, err := l.LockAdvance(t.Context(), "acme")
		if err == nil {
			next()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Errorf("the advance waiting for an unlock: %v", err)
	}
	// Taken and released again: nothing held is left behind.
	again, err := l.LockAdvance(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	again()
}
