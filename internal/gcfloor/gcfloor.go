// Package gcfloor puts a floor under the Go collector's heap goal, for a
// server whose live heap is small: GOGC=100 collects each time the heap
// has doubled, which for a live heap of a few megabytes is every few
// megabytes allocated, and each collection's marking takes the cores the
// requests beside it need. With a floor of F bytes, the next collection
// is due when the heap has grown by the larger of GOGC=100's growth and
// F, so a small heap is collected every F bytes and a large one exactly
// as before.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minHeap is the runtime's smallest heap goal at GOGC=100
// (defaultHeapMinimum); it scales with GOGC, which Percent must bound so
// that a small live heap's goal is the floor and not GOGC/100 times this.
const minHeap = 4 << 20

// Percent is the GOGC that puts the next collection's heap goal at the
// larger of GOGC=100's goal and live plus floor. live is the heap the
// last collection marked; scan is what GOGC scales (the marked heap, the
// stacks and the globals scanned), so GOGC=100's growth is scan.
// Floors up to a petabyte are exact.
func Percent(live, scan, floor uint64) int {
	scan = max(scan, 1)
	if floor <= scan {
		return 100
	}
	// Past the second bound, the runtime's minimum heap (minHeap*GOGC/100)
	// would put the goal above live+floor; at it, the minimum is the goal.
	p := min(floor*100/scan, (live+floor)*100/minHeap)
	return int(max(100, min(p, math.MaxInt32)))
}

// Floor keeps GOGC at Percent of the last collection's heap until Stop.
type Floor struct {
	floor uint64

	mu      sync.Mutex
	stopped bool
	before  int // GOGC when Start was called, restored by Stop
}

// Start sets GOGC for the heap as it is now and again after every
// collection, so that the heap goal is never below live plus floor
// bytes. A process runs one Floor at a time: it owns GOGC while it runs.
func Start(floor uint64) *Floor {
	f := &Floor{floor: floor}
	f.before = debug.SetGCPercent(f.percent())
	f.watch()
	return f
}

// Stop restores GOGC as it was before Start; the cleanup of the
// collection in progress, if any, then does nothing.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(f.before)
	}
}

// sentinel is allocated to be collected: its cleanup runs after each
// collection that finds it unreachable, which is the next one. The
// pointer keeps it out of the tiny allocator, whose blocks hold several
// objects and are freed together, late.
type sentinel struct {
	_ *byte
	_ [16]byte
}

// watch arms the next collection's adjustment: the runtime's own goal
// for the next cycle was set from the heap just marked, so GOGC is set
// again from that heap before the heap reaches it. A cleanup that runs
// while the next collection marks allocates its sentinel live for that
// one, and adjusts after the one after: a goal a cycle late, not lost.
func (f *Floor) watch() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.stopped {
			return
		}
		debug.SetGCPercent(f.percent())
		f.watch()
	}, f)
}

// percent reads the last collection's heap (zero before the first) and
// returns the GOGC for it.
func (f *Floor) percent() int {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}
	metrics.Read(s)
	live := s[0].Value.Uint64()
	return Percent(live, live+s[1].Value.Uint64()+s[2].Value.Uint64(), f.floor)
}
