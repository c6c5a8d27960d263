// The advance lock and the clocks a replica keeps: an advance reads the
// clock as the advance before it left it, heard or not.

package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// TestLockAdvance_ReadsTheClockOfTheAdvanceBeforeIt has replica A advance
// a clock while B's listener holds A's notification, unheard: B's kept
// clock is then the old one, and B, once it has the advance lock, must
// read the new one, or its advance would move the clock from where it was
// before A's and lose A's.
func TestLockAdvance_ReadsTheClockOfTheAdvanceBeforeIt(t *testing.T) {
	ctx := t.Context()
	a, url := openStore(t)
	b, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	initial := paymock.ClockState{Mode: paymock.ClockFrozen, Frozen: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)}
	if _, err := a.AdvanceClock(ctx, "acme", 0, initial); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) { // B listens
		b.changes.mu.Lock()
		live := b.changes.live
		b.changes.mu.Unlock()
		if live {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("B never listened for changes")
		}
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before, _, err := b.Clock(ctx, "acme") // kept by B from here
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	var held atomic.Bool
	hold := func(merchantID string) {
		if merchantID == "acme" && held.CompareAndSwap(false, true) {
			<-release
		}
	}
	b.hearing.Store(&hold)
	after, err := a.AdvanceClock(ctx, "acme", 10*time.Second, initial)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _, err := b.Clock(ctx, "acme"); err != nil || !kept.Frozen.Equal(before.Frozen) {
		t.Fatalf("B heard A's advance already (%v, %v): the test holds nothing", kept.Frozen, err)
	}
	time.AfterFunc(100*time.Millisecond, let)
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	unlock, err := b.LockAdvance(lctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	got, _, err := b.Clock(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Frozen.Equal(after.Frozen) {
		t.Fatalf("B read %v under the advance lock, want A's %v", got.Frozen, after.Frozen)
	}
}
