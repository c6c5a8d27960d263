// The collector floor: where it puts the goal, and how many collections it saves.

package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/gcfloor"
)

const mib = 1 << 20

// goal is the heap goal the runtime sets for a GOGC of p after a
// collection that marked live bytes with scan bytes to scan (its
// gcControllerState.commit: GOGC scales scan, and the minimum heap of
// 4 MiB scales with GOGC).
func goal(live, scan uint64, p int) uint64 {
	return max(live+scan*uint64(p)/100, 4*mib*uint64(p)/100)
}

func TestPercent_PutsTheGoalAtTheLargerOfDoublingAndTheFloor(t *testing.T) {
	for _, tc := range []struct {
		name              string
		live, scan, floor uint64
		want              uint64 // the heap goal
	}{
		{"no heap yet: the floor", 0, 0, 32 * mib, 32 * mib},
		{"small heap: live plus the floor", 1 * mib, 1*mib + 200<<10, 32 * mib, 33 * mib},
		{"medium heap: live plus the floor", 8 * mib, 8*mib + 300<<10, 32 * mib, 40 * mib},
		{"heap past the floor: doubling, as GOGC=100", 100 * mib, 101 * mib, 32 * mib, 201 * mib},
		{"floor below the runtime's minimum: the minimum", 0, 0, 1 * mib, 4 * mib},
		{"no floor: GOGC=100", 2 * mib, 2 * mib, 0, 4 * mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := gcfloor.Percent(tc.live, tc.scan, tc.floor)
			if p < 100 {
				t.Fatalf("GOGC %d: below the runtime's default, it would collect more often", p)
			}
			got := goal(tc.live, tc.scan, p)
			// Within 1%: GOGC is a whole number.
			if got < tc.want*99/100 || got > tc.want*101/100 {
				t.Errorf("GOGC %d puts the goal at %.1f MiB, want %.1f MiB", p, float64(got)/mib, float64(tc.want)/mib)
			}
		})
	}
}

// sink keeps allocations from being optimised away or put on the stack.
var sink []byte

// collections allocates total bytes of garbage in 8 KiB pieces and
// returns how many collections the runtime completed meanwhile.
func collections(total int) uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	for range total / (8 << 10) {
		sink = make([]byte, 8<<10)
	}
	sink = nil
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// TestStart_CollectsEveryFloorNotEveryFewMegabytes allocates the same
// volume of garbage with a small live heap at GOGC=100 and under a
// floor: GOGC=100 collects every few MiB (its minimum heap is 4 MiB),
// the floor once per floor's worth.
func TestStart_CollectsEveryFloorNotEveryFewMegabytes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const volume, floor = 256 * mib, 64 * mib
	runtime.GC()
	plain := collections(volume)
	if plain <= 2*(volume/floor+2) {
		t.Fatalf("at GOGC=100, %d collections for %d MiB: the live heap of this test is not small, the comparison says nothing", plain, volume/mib)
	}

	f := gcfloor.Start(floor)
	runtime.GC()
	floored := collections(volume)
	f.Stop()
	if floored > volume/floor+2 {
		t.Errorf("under a floor of %d MiB, %d collections for %d MiB of garbage (at GOGC=100: %d)", floor/mib, floored, volume/mib, plain)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC after Stop is %d, want 100 as before Start", p)
	}
}

// gcPercent is GOGC as the runtime has it now.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapGoal is the heap goal as the runtime has it now.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestFloor_FollowsTheLiveHeapAfterEachCollection holds a heap larger
// than the floor (the goal doubles it, as at GOGC=100), then lets it go:
// after the next collection the floor has set GOGC again, and the goal
// is live plus the floor.
func TestFloor_FollowsTheLiveHeapAfterEachCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const floor = 16 * mib
	held := make([]byte, 48*mib)
	runtime.GC()
	f := gcfloor.Start(floor)
	defer f.Stop()
	runtime.GC()
	if p := gcPercent(); p != 100 {
		t.Errorf("with %d MiB live, GOGC %d, want 100", len(held)/mib, p)
	}
	if g := heapGoal(); g < 96*mib {
		t.Errorf("with %d MiB live, goal %.1f MiB, want at least twice the live heap", len(held)/mib, float64(g)/mib)
	}
	runtime.KeepAlive(held)
	held = nil

	// The floor sets GOGC from a collection's cleanup, which runs on its
	// own goroutine after it; a cleanup that ran during the next
	// collection's marking re-arms for the one after (what is allocated
	// while marking survives it). So collect until it has, within a
	// bound on waiting (not a timing that is judged).
	for deadline := time.Now().Add(10 * time.Second); gcPercent() == 100; {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still 100 after collections that freed %d MiB: the floor did not follow", 48)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	live := s[0].Value.Uint64()
	if g := heapGoal(); g < (live+floor)*98/100 || g > (live+floor)*102/100 {
		t.Errorf("live %.1f MiB: goal %.1f MiB, want live plus the floor, %.1f MiB", float64(live)/mib, float64(g)/mib, float64(live+floor)/mib)
	}
}
