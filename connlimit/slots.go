// Slots for work that holds much memory while it runs (a list page being
// built), bounded in all and per client, so that one client asking for
// much of it at once waits on itself rather than on every other client.

package connlimit

import (
	"context"
	"sync"
)

// Slots bounds the work running at once: at most total in all, and at
// most perKey for one key (a merchant). A key's work past perKey waits
// for one of the key's own slots, holding none of the others, so that
// one key cannot hold more than perKey of the total while other keys
// wait. It is safe for concurrent use.
type Slots struct {
	all    chan struct{}
	perKey int
	mu     sync.Mutex
	keys   map[string]*keySlots
}

// keySlots are one key's slots, kept while work of the key runs or waits.
type keySlots struct {
	held  chan struct{}
	users int // work running or waiting
}

// NewSlots bounds work to total at once, and perKey for one key (both
// at least 1).
func NewSlots(total, perKey int) *Slots {
	return &Slots{all: make(chan struct{}, max(total, 1)), perKey: max(perKey, 1), keys: map[string]*keySlots{}}
}

// Acquire waits for a slot for work of key, one of the key's and one of
// all, and reports whether it got one: not when ctx is done first.
// Release gives it back.
func (s *Slots) Acquire(ctx context.Context, key string) bool {
	s.mu.Lock()
	k := s.keys[key]
	if k == nil {
		k = &keySlots{held: make(chan struct{}, s.perKey)}
		s.keys[key] = k
	}
	k.users++
	s.mu.Unlock()
	if !take(ctx, k.held) {
		s.leave(key, k)
		return false
	}
	if !take(ctx, s.all) {
		<-k.held
		s.leave(key, k)
		return false
	}
	return true
}

// Release gives back a slot Acquire gave for work of key.
func (s *Slots) Release(key string) {
	<-s.all
	s.mu.Lock()
	k := s.keys[key]
	s.mu.Unlock()
	<-k.held
	s.leave(key, k)
}

// leave counts one work of key gone, forgetting the key's slots with
// the last.
func (s *Slots) leave(key string, k *keySlots) {
	s.mu.Lock()
	if k.users--; k.users == 0 {
		delete(s.keys, key)
	}
	s.mu.Unlock()
}

// take sends into slots, waiting until it can or ctx is done.
func take(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}
