// Tests of the shared clocks: stored exactly, advanced atomically, reset.

package postgres

import (
	"sync"
	"testing"
	"time"
)

func TestClock_StoredExactlyAndPerMerchant(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	if _, ok, err := s.Clock(ctx, "acme"); ok || err != nil {
		t.Fatalf("a merchant with no clock stored: %v, %v", ok, err)
	}
	frozen := time.Date(2026, 5, 15, 12, 0, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		set  Clock
	}{
		{"frozen, to the nanosecond", Clock{Mode: ClockFrozen, Frozen: frozen}},
		{"real with an offset", Clock{Mode: ClockReal, Offset: 90*time.Minute + 7}},
		{"frozen again", Clock{Mode: ClockFrozen, Frozen: frozen.Add(time.Hour)}},
	} {
		if err := s.SetClock(ctx, "acme", tc.set); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, ok, err := s.Clock(ctx, "acme")
		if err != nil || !ok || got.Mode != tc.set.Mode || got.Offset != tc.set.Offset || !got.Frozen.Equal(tc.set.Frozen) {
			t.Errorf("%s: Clock = %+v, %v, %v; want %+v", tc.name, got, ok, err, tc.set)
		}
	}
	if _, ok, _ := s.Clock(ctx, "globex"); ok {
		t.Error("acme's clock shows as globex's")
	}
	if err := s.ResetClock(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Clock(ctx, "acme"); ok || err != nil {
		t.Errorf("after reset: %v, %v", ok, err)
	}
}

func TestClock_RefusesWhatIsNotAClock(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	for _, c := range []Clock{{}, {Mode: "sundial"}, {Mode: ClockFrozen}} {
		if err := s.SetClock(ctx, "acme", c); err == nil {
			t.Errorf("SetClock(%+v) succeeded", c)
		}
	}
	if _, err := s.AdvanceClock(ctx, "acme", -time.Second, Clock{Mode: ClockReal}); err == nil {
		t.Error("advancing by a negative duration succeeded")
	}
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
		initial  Clock
		check    func(Clock) bool
	}{
		{"frozen", Clock{Mode: ClockFrozen, Frozen: start}, func(c Clock) bool { return c.Frozen.Equal(start.Add(200 * time.Second)) }},
		{"real", Clock{Mode: ClockReal, Offset: time.Hour}, func(c Clock) bool { return c.Offset == time.Hour+200*time.Second }},
	} {
		var wg sync.WaitGroup
		for i := range 200 {
			replica := s
			if i%2 == 1 {
				replica = other
			}
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
