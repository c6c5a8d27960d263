// Each merchant's id sequence, held in the process.

package memory

import (
	"context"
	"sync"
)

// Sequences implements paymock.Sequences with a counter per merchant.
type Sequences struct {
	mu   sync.Mutex
	next map[string]uint64
}

// NewSequences returns sequences that have handed out no number.
func NewSequences() *Sequences { return &Sequences{next: make(map[string]uint64)} }

// Next implements paymock.Sequences.
func (s *Sequences) Next(_ context.Context, merchantID string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.next[merchantID]
	s.next[merchantID] = n + 1
	return n, nil
}

// Drop forgets the merchant's sequence: its next id is numbered 0 again,
// as in a new process. Only a released merchant's, whose ids went with it.
func (s *Sequences) Drop(merchantID string) {
	s.mu.Lock()
	delete(s.next, merchantID)
	s.mu.Unlock()
}
