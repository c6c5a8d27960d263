// The slots of work bounded in all and per key.

package connlimit

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

func TestSlots_BoundInAllAndPerKey(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // a wait that ends at once: Acquire reports what it would wait for
	ctx := context.Background()
	tests := []struct {
		name string
		held []string // keys acquired first
		key  string
		want bool
	}{
		{"a first slot", nil, "a", true},
		{"a key's last slot", []string{"a"}, "a", true},
		{"past a key's slots", []string{"a", "a"}, "a", false},
		{"another key while one has all its own", []string{"a", "a"}, "b", true},
		{"past all the slots", []string{"a", "a", "b"}, "c", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSlots(3, 2)
			for _, k := range tc.held {
				if !s.Acquire(ctx, k) {
					t.Fatalf("acquire for %s refused", k)
				}
			}
			if got := s.Acquire(done, tc.key); got != tc.want {
				t.Errorf("Acquire(%s) = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

func TestSlots_ReleaseMakesRoomAndForgetsIdleKeys(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	s := NewSlots(2, 1)
	if !s.Acquire(ctx, "a") || !s.Acquire(ctx, "b") {
		t.Fatal("two keys' first slots refused")
	}
	if s.Acquire(done, "c") || s.Acquire(done, "a") {
		t.Fatal("a slot past the bounds given")
	}
	s.Release("a")
	if !s.Acquire(done, "c") {
		t.Error("a released slot not given again")
	}
	s.Release("b")
	s.Release("c")
	if n := len(s.keys); n != 0 {
		t.Errorf("%d keys kept with nothing running or waiting", n)
	}
}

func TestSlots_ConcurrentWorkNeverPassesTheBounds(t *testing.T) {
	const total, perKey = 4, 2
	s := NewSlots(total, perKey)
	var mu sync.Mutex
	running, most := map[string]int{}, map[string]int{}
	all, mostAll := 0, 0
	var wg sync.WaitGroup
	for i := range 12 {
		key := string(rune('a' + i%3))
		wg.Go(func() {
			for range 300 {
				if !s.Acquire(context.Background(), key) {
					t.Error("an Acquire with no deadline refused")
					return
				}
				mu.Lock()
				running[key]++
				all++
				most[key], mostAll = max(most[key], running[key]), max(mostAll, all)
				mu.Unlock()
				runtime.Gosched() // the work runs, and others with it
				mu.Lock()
				running[key]--
				all--
				mu.Unlock()
				s.Release(key)
			}
		})
	}
	wg.Wait()
	if mostAll > total || mostAll < 2 {
		t.Errorf("%d running at once, want 2 to %d (1: the test ran none together)", mostAll, total)
	}
	for k, n := range most {
		if n > perKey {
			t.Errorf("%d of key %s running at once, past %d", n, k, perKey)
		}
	}
	if n := len(s.keys); n != 0 {
		t.Errorf("%d keys kept after all the work", n)
	}
}
