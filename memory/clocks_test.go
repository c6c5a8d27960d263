// The in-memory clocks and advance locks run the conformance suites.

package memory

import (
	"context"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/clockstest"
)

func TestClocks_Conformance(t *testing.T) {
	clockstest.Run(t, func(*testing.T) paymock.ClockStore { return NewClocks() })
}

func TestClocks_AdvanceLockerConformance(t *testing.T) {
	clockstest.RunAdvanceLocker(t, func(*testing.T) paymock.AdvanceLocker { return NewClocks() })
}

// Reading a clock is what every create does: it must not allocate.
func TestClocks_ReadingAClockAllocatesNothing(t *testing.T) {
	c := NewClocks()
	ctx := t.Context()
	if _, err := c.AdvanceClock(ctx, "acme", 0, paymock.ClockState{Mode: paymock.ClockReal}); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = c.Clock(ctx, "acme") }); n != 0 {
		t.Errorf("Clock allocates %v times a read", n)
	}
}

// A merchant's advance lock goes once no advance holds or waits for it:
// merchants that advanced once cost nothing after.
func TestClocks_AdvanceLockGoesWhenUnused(t *testing.T) {
	c := NewClocks()
	for range 3 {
		unlock, err := c.LockAdvance(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		unlock() // twice is once
	}
	ctx, cancel := context.WithCancel(t.Context())
	unlock, err := c.LockAdvance(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := c.LockAdvance(ctx, "acme"); err == nil {
		t.Fatal("a lock taken under an ended context")
	}
	unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.advances); n != 0 {
		t.Errorf("%d advance locks left after every advance ended", n)
	}
}
