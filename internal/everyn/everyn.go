// Package everyn says when a key's n-th use since its last due one
// comes, for any number of keys in a fixed table: the journals trim each
// merchant every n of its own writes without an entry per merchant, so
// that a merchant of open mode gone costs nothing here.
package everyn

import (
	"hash/maphash"
	"sync"
)

// Slots is how many counters the keys share (32 KiB).
const Slots = 2048

// Counter counts each key's uses in the slot its hash picks.
//
// One count shared by every key would make due the key whose use is the
// n-th of all: a tenant with two tokens using one 99 times and the other
// once, in turn, would never have the first made due.
type Counter struct {
	every uint16
	seed  maphash.Seed
	mu    sync.Mutex
	slots [Slots]slot
}

// slot counts the uses of the key that used it last.
type slot struct {
	owner uint64 // a hash of the key, never 0; 0 when unused
	n     uint16 // its uses since its last due one, below every
}

// New returns a Counter making due one use in every of each key's,
// every within 1 and 65535.
func New(every int) *Counter {
	return &Counter{every: uint16(min(max(every, 1), 1<<16-1)), seed: maphash.MakeSeed()}
}

// Due counts one use of key and says whether it is due: one in every of
// the key's uses, and any use that finds its slot last used by another
// key, which took the count over. So a key goes at most every uses
// between two due ones however many share its slot; its first use in
// this process is due, so that a restart does what the last process
// left undone.
func (c *Counter) Due(key string) bool {
	h := maphash.String(c.seed, key) | 1
	s := &c.slots[h%Slots]
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.owner != h {
		s.owner, s.n = h, 1%c.every
		return true
	}
	due := s.n == 0
	s.n = (s.n + 1) % c.every
	return due
}
