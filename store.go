// The store: payments kept per merchant, behind an interface so that a
// shared backend can replace the in-memory one without touching handlers.

package paymock

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Store keeps payments. Every method is scoped to one merchant: a payment of
// another merchant is ErrNotFound, exactly like an unknown id.
type Store interface {
	// Insert adds a new payment; its id must be new.
	Insert(ctx context.Context, p Payment) error
	// Get returns a snapshot of one payment.
	Get(ctx context.Context, merchantID, id string) (Payment, error)
	// Locate finds a payment by id alone, for the hosted pages, which a
	// customer reaches with no API key: ids are unguessable for this.
	Locate(ctx context.Context, id string) (Payment, error)
	// List returns up to limit payments, newest first, skipping offset of
	// them, and the merchant's total count.
	List(ctx context.Context, merchantID string, offset, limit int) ([]Payment, int, error)
	// CustomerID returns the merchant's customer id for an email, creating
	// it with newID on first use.
	CustomerID(ctx context.Context, merchantID, email string, newID func() string) (string, error)
	// Update applies fn to one payment atomically: if fn fails, nothing
	// changes. It returns the payment as stored afterwards.
	Update(ctx context.Context, merchantID, id string, fn func(*Payment) error) (Payment, error)
	// Reset forgets every payment and customer of one merchant.
	Reset(ctx context.Context, merchantID string) error
}

// MemoryStore is a Store held in memory, safe for concurrent use. Each
// merchant has its own lock, so merchants do not contend with each other.
type MemoryStore struct {
	mu    sync.RWMutex
	books map[string]*book
	owner sync.Map // payment id -> merchant id, for Locate
}

// book is one merchant's payments: an index by id and the creation order,
// which makes a list page cost O(page) whatever the number stored.
type book struct {
	mu        sync.RWMutex
	byID      map[string]int // index into order
	order     chunks         // oldest first
	customers map[string]string
}

// chunkSize is how many payments one chunk of a book holds.
const chunkSize = 512

// chunks is a book's payments in fixed-size chunks rather than one slice:
// a growing slice keeps up to twice the room it needs and copies every
// payment each time it doubles (a million of them, at a million), where
// chunks waste at most one chunk's room and never move a payment.
type chunks struct {
	c [][]Payment
	n int
}

func (cs *chunks) len() int { return cs.n }

func (cs *chunks) at(i int) *Payment { return &cs.c[i/chunkSize][i%chunkSize] }

func (cs *chunks) push(p Payment) {
	if cs.n%chunkSize == 0 {
		cs.c = append(cs.c, make([]Payment, 0, chunkSize))
	}
	last := len(cs.c) - 1
	cs.c[last] = append(cs.c[last], p)
	cs.n++
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{books: make(map[string]*book)}
}

func (s *MemoryStore) book(merchantID string, create bool) *book {
	s.mu.RLock()
	b := s.books[merchantID]
	s.mu.RUnlock()
	if b != nil || !create {
		return b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b = s.books[merchantID]; b == nil {
		b = &book{byID: make(map[string]int), customers: make(map[string]string)}
		s.books[merchantID] = b
	}
	return b
}

// Insert implements Store.
func (s *MemoryStore) Insert(_ context.Context, p Payment) error {
	b := s.book(p.MerchantID, true)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.byID[p.ID]; dup {
		return fmt.Errorf("insert %s: id already used", p.ID)
	}
	b.byID[p.ID] = b.order.len()
	b.order.push(p)
	s.owner.Store(p.ID, p.MerchantID)
	return nil
}

// Locate implements Store.
func (s *MemoryStore) Locate(ctx context.Context, id string) (Payment, error) {
	m, ok := s.owner.Load(id)
	if !ok {
		return Payment{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	return s.Get(ctx, m.(string), id)
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, merchantID, id string) (Payment, error) {
	b := s.book(merchantID, false)
	if b == nil {
		return Payment{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	i, ok := b.byID[id]
	if !ok {
		return Payment{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	return *b.order.at(i), nil
}

// List implements Store.
func (s *MemoryStore) List(_ context.Context, merchantID string, offset, limit int) ([]Payment, int, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("list: negative offset or limit")
	}
	b := s.book(merchantID, false)
	if b == nil {
		return []Payment{}, 0, nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	total := b.order.len()
	if offset >= total {
		return []Payment{}, total, nil
	}
	n := min(limit, total-offset)
	out := make([]Payment, n)
	// Newest first: walk the creation order backwards from the offset.
	for i := range n {
		out[i] = *b.order.at(total - 1 - offset - i)
	}
	return out, total, nil
}

// CustomerID implements Store. Emails are matched without regard to case.
func (s *MemoryStore) CustomerID(_ context.Context, merchantID, email string, newID func() string) (string, error) {
	key := strings.ToLower(email)
	b := s.book(merchantID, true)
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.customers[key]
	if !ok {
		id = newID()
		b.customers[key] = id
	}
	return id, nil
}

// Update implements Store.
func (s *MemoryStore) Update(_ context.Context, merchantID, id string, fn func(*Payment) error) (Payment, error) {
	b := s.book(merchantID, false)
	if b == nil {
		return Payment{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.byID[id]
	if !ok {
		return Payment{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	stored := b.order.at(i)
	p := *stored // a copy: fn's changes land only if it succeeds
	if err := fn(&p); err != nil {
		return *stored, err
	}
	p.ID, p.MerchantID = stored.ID, stored.MerchantID
	*stored = p
	return p, nil
}

// Reset implements Store. The book is emptied in place, under its lock, so
// an Insert racing with the reset lands either before it (and is forgotten)
// or after it (and is kept), never in a book nobody reads.
func (s *MemoryStore) Reset(_ context.Context, merchantID string) error {
	b := s.book(merchantID, false)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.byID {
		s.owner.Delete(id)
	}
	b.byID = make(map[string]int)
	b.order = chunks{}
	b.customers = make(map[string]string)
	return nil
}

// Page is a list request turned into store terms.
type Page struct {
	Offset, Limit int
}

// PageOf converts a 1-based page of perPage items into an offset and limit.
// A page too far out to address is an offset past any store, so it is
// simply empty rather than an overflow.
func PageOf(page, perPage int64) Page {
	if page < 1 || perPage < 1 {
		return Page{}
	}
	const maxOffset = int64(^uint(0) >> 2)
	if page-1 > maxOffset/perPage {
		return Page{Offset: int(maxOffset), Limit: int(perPage)}
	}
	return Page{Offset: int((page - 1) * perPage), Limit: int(perPage)}
}

// TotalPages is ceil(total/perPage), 0 for an empty list.
func TotalPages(total int, perPage int64) int64 {
	if perPage < 1 || total < 1 {
		return 0
	}
	// Not (total+perPage-1)/perPage, which overflows for a huge perPage.
	n := int64(total) / perPage
	if int64(total)%perPage != 0 {
		n++
	}
	return n
}
