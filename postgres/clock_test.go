// Tests of the shared clocks: the conformance suites, and advances made
// on two replicas at once adding up.

package postgres

import (
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/clockstest"
)

func TestClocks_Conformance(t *testing.T) {
	clockstest.Run(t, func(t *testing.T) paymock.ClockStore {
		s, _ := openStore(t)
		return s
	})
}

func TestClocks_AdvanceLockerConformance(t *testing.T) {
	clockstest.RunAdvanceLocker(t, func(t *testing.T) paymock.AdvanceLocker {
		s, _ := openStore(t)
		return s
	})
}

func TestClock_AdvancesFromAnyReplicaAddUp(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	other, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	start := time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		merchant string
		initial  paymock.ClockState
		check    func(paymock.ClockState) bool
	}{
		{"frozen", paymock.ClockState{Mode: paymock.ClockFrozen, Frozen: start},
			func(c paymock.ClockState) bool { return c.Frozen.Equal(start.Add(200 * time.Second)) }},
		{"real", paymock.ClockState{Mode: paymock.ClockReal, Offset: time.Hour},
			func(c paymock.ClockState) bool { return c.Offset == time.Hour+200*time.Second }},
	} {
		var wg sync.WaitGroup
		for i := range 200 {
			replica := []*Store{s, other}[i%2]
			wg.Go(func() {
				if _, err := replica.AdvanceClock(ctx, tc.merchant, time.Second, tc.initial); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, _, err := s.Clock(ctx, tc.merchant)
		if err != nil || !tc.check(got) || got.Mode != tc.initial.Mode {
			t.Errorf("%s: after 200 advances of 1s from two replicas: %+v, %v", tc.merchant, got, err)
		}
	}
}
