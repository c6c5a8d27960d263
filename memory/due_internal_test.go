// Tests that a book's due queue takes an entry as heap.Push would, without
// the allocation of boxing it.

package memory

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestDueQueue_AddOrdersAsHeapPush(t *testing.T) {
	base := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for _, tc := range []struct {
		name string
		at   func(r *rand.Rand, i int) time.Time
	}{
		{"later and later (every create's expiry)", func(_ *rand.Rand, i int) time.Time { return base.Add(time.Duration(i) * time.Second) }},
		{"any order", func(r *rand.Rand, _ int) time.Time { return base.Add(time.Duration(r.IntN(1000)) * time.Millisecond) }},
		{"many at one instant", func(r *rand.Rand, _ int) time.Time { return base.Add(time.Duration(r.IntN(3)) * time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var added, pushed dueQueue
			for i := range 500 {
				at, to := tc.at(r, i), paymock.StatusExpired
				added.add(at, to, uint32(i))
				heap.Push(&pushed, dueEntry{sec: at.Unix(), nsec: int32(at.Nanosecond()), rec: uint32(i), to: uint8(statusCode(to))})
			}
			for pushed.Len() > 0 {
				want, got := heap.Pop(&pushed).(dueEntry), heap.Pop(&added).(dueEntry)
				if got != want {
					t.Fatalf("popped %+v, heap.Push's queue pops %+v", got, want)
				}
			}
		})
	}
}

func TestDueQueue_AddAllocatesOnlyToGrow(t *testing.T) {
	q := make(dueQueue, 0, 200)
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	if n := testing.AllocsPerRun(100, func() { q.add(at, paymock.StatusExpired, 1) }); n != 0 {
		t.Errorf("add: %v allocations, want 0", n)
	}
}
