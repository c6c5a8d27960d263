// The payments and customers of every merchant, held in memory in a compact
// form that keeps the heap the garbage collector scans small.

package memory

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/paymock/paymock"
)

// Payments is a Store held in memory, safe for concurrent use. Each
// merchant has its own lock, so merchants do not contend with each other.
//
// A million payments must fit a laptop and must not slow the garbage
// collector down: every payment is one encoded record in its merchant's
// byte arena, found through maps of hashes to record numbers, so the heap
// the collector scans stays small whatever the number stored.
type Payments struct {
	// hash maps ids into the indexes; ids whose hashes meet are told apart
	// by comparing the ids themselves.
	hash  func(id string) uint64
	mu    sync.RWMutex
	books map[string]*book
	// byNum finds a book by its number, for the owner index. A dropped
	// book's slot is nil until a new book takes its number from free: in
	// open mode merchants come and go without end, and byNum, which the
	// sweep of due work walks every second, stays as long as the most
	// books ever held at once rather than every book ever made.
	byNum []*book
	free  []uint32
	owner [ownerShards]ownerShard
}

// ownerShards splits the id -> merchant index for Locate, so that inserts
// of different merchants rarely wait on the same lock.
const ownerShards = 16

// ownerShard maps an id's hash to its book's number + 1; 0 means several
// ids or books share the hash, and Locate asks every book.
type ownerShard struct {
	mu sync.Mutex
	m  map[uint64]uint32
}

// book is one merchant's payments: records in creation order, which makes
// a list page cost O(page) whatever the number stored, and an index from
// id hash to record number.
type book struct {
	num        uint32
	merchantID string
	mu         sync.RWMutex
	byHash     map[uint64]uint32 // id hash -> record number
	collided   map[string]uint32 // ids whose hash another id of the book has; nil until one does
	recs       records
	arena      arena
	common     commonStrings
	customers  map[string]string
	due        dueQueue // when its pending payments change by themselves (due.go)
	// dropped is set, under mu, when Drop took the book out of the store:
	// a writer that waited for the lock meanwhile goes to the merchant's
	// new book (writable) rather than into one nobody reads.
	dropped bool
}

// maxCommon bounds the strings a book spells once for all its payments.
const maxCommon = 64

// commonStrings are strings most payments of a merchant repeat (its
// success and cancel URLs, the start of checkout URLs): an encoding names
// them by number. The first maxCommon strings seen are taken, common or
// not; later ones are written out in full.
type commonStrings struct {
	s      []string
	num    map[string]uint32
	maxLen int // of s, the room a decoding leaves for a checkout URL
}

// add returns the number of s, numbering it if there is room.
func (c *commonStrings) add(s string) (uint32, bool) {
	if n, ok := c.num[s]; ok {
		return n, true
	}
	if len(c.s) >= maxCommon {
		return 0, false
	}
	if c.num == nil {
		c.num = make(map[string]uint32)
	}
	s = strings.Clone(s) // not a piece of some larger string kept alive by it
	n := uint32(len(c.s))
	c.s = append(c.s, s)
	c.num[s] = n
	c.maxLen = max(c.maxLen, len(s))
	return n, true
}

// recordChunk is how many record positions one chunk holds.
const recordChunk = 512

// record is where a payment's encoding lies in its book's arena.
type record struct{ chunk, off, n uint32 }

// records are a book's record positions, oldest first, in fixed-size
// chunks: a growing slice would keep up to twice the room it needs and
// copy every position each time it doubles.
type records struct {
	c [][]record
	n int
}

func (rs *records) at(i int) *record { return &rs.c[i/recordChunk][i%recordChunk] }

func (rs *records) push(r record) {
	if rs.n%recordChunk == 0 {
		rs.c = append(rs.c, make([]record, 0, recordChunk))
	}
	last := len(rs.c) - 1
	rs.c[last] = append(rs.c[last], r)
	rs.n++
}

// Arena chunks start small, so a merchant with a few payments holds a few
// kilobytes, and double up to a fixed size, so a growing arena never
// copies what it holds.
const (
	firstArenaChunk = 2 << 10
	maxArenaChunk   = 256 << 10
	// compactAfter is the dead bytes below which a book is never
	// compacted, however much of it they are: a small book's garbage is
	// not worth a copy.
	compactAfter = 64 << 10
)

// arena is a book's encoded payments. An update writes the payment anew
// and leaves the old bytes dead; when more are dead than live, the book
// is compacted.
type arena struct {
	c    [][]byte
	used int // bytes written, dead or alive
	dead int
}

// add appends an encoding and returns where it lies. An encoding never
// spans two chunks.
func (a *arena) add(enc []byte) record {
	last := len(a.c) - 1
	if last < 0 || cap(a.c[last])-len(a.c[last]) < len(enc) {
		size := firstArenaChunk
		if last >= 0 {
			size = min(2*cap(a.c[last]), maxArenaChunk)
		}
		a.c = append(a.c, make([]byte, 0, max(size, len(enc))))
		last++
	}
	off := len(a.c[last])
	a.c[last] = append(a.c[last], enc...)
	a.used += len(enc)
	return record{chunk: uint32(last), off: uint32(off), n: uint32(len(enc))}
}

func (a *arena) bytes(r record) []byte { return a.c[r.chunk][r.off : r.off+r.n] }

// NewPayments returns an empty store.
func NewPayments() *Payments {
	seed := maphash.MakeSeed()
	s := &Payments{hash: func(id string) uint64 { return maphash.String(seed, id) }, books: make(map[string]*book)}
	for i := range s.owner {
		s.owner[i].m = make(map[uint64]uint32)
	}
	return s
}

func (s *Payments) book(merchantID string, create bool) *book {
	s.mu.RLock()
	b := s.books[merchantID]
	s.mu.RUnlock()
	if b != nil || !create {
		return b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b = s.books[merchantID]; b == nil {
		b = &book{merchantID: merchantID, byHash: make(map[uint64]uint32)}
		if n := len(s.free); n > 0 {
			b.num, s.free = s.free[n-1], s.free[:n-1]
			s.byNum[b.num] = b
		} else {
			b.num = uint32(len(s.byNum))
			s.byNum = append(s.byNum, b)
		}
		s.books[merchantID] = b
	}
	return b
}

// writable returns the merchant's book, made if need be, locked for
// writing. A book Drop took out while this waited for its lock is let go
// for the merchant's new one: what is written there would be found by no
// one, and its number may already be another book's.
func (s *Payments) writable(merchantID string) *book {
	return lockLive(func() *book { return s.book(merchantID, true) })
}

// find returns the record number of id in b, which the caller has locked.
func (b *book) find(h uint64, id string) (int, bool) {
	if i, ok := b.collided[id]; ok {
		return int(i), true
	}
	i, ok := b.byHash[h]
	if !ok || string(recordID(b.arena.bytes(*b.recs.at(int(i))))) != id {
		return 0, false
	}
	return int(i), true
}

// Insert implements Store. The limit is exact: the count is read under the
// book's lock that the insert holds.
func (s *Payments) Insert(_ context.Context, p paymock.Payment, limit int) error {
	h := s.hash(p.ID)
	b := s.writable(p.MerchantID)
	defer b.mu.Unlock()
	if limit >= 0 && b.recs.n >= limit {
		return fmt.Errorf("insert %s: %w", p.ID, paymock.ErrLimitReached)
	}
	if _, dup := b.find(h, p.ID); dup {
		return fmt.Errorf("insert %s: id already used", p.ID)
	}
	n := uint32(b.recs.n)
	if _, taken := b.byHash[h]; taken {
		if b.collided == nil {
			b.collided = make(map[string]uint32)
		}
		b.collided[p.ID] = n
	} else {
		b.byHash[h] = n
	}
	var buf [512]byte // most payments: their encoding never reaches the heap
	b.recs.push(b.arena.add(encodePayment(buf[:0], &p, &b.common)))
	if p.Status == paymock.StatusPending {
		b.due.add(p.ExpiresAt, paymock.StatusExpired, n)
	}
	// Under the book's lock, so that a racing Reset sees the owner entry
	// of every payment it forgets.
	s.own(h, b.num)
	return nil
}

// own records that the id of hash h is in book num.
func (s *Payments) own(h uint64, num uint32) {
	sh := &s.owner[h%ownerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if was, ok := sh.m[h]; ok && was != num+1 {
		sh.m[h] = 0 // another id, or the same in another book: ask them all
		return
	}
	sh.m[h] = num + 1
}

// Locate implements Store. An id stored under two merchants is found in
// one of them.
func (s *Payments) Locate(ctx context.Context, id string) (paymock.Payment, error) {
	h := s.hash(id)
	sh := &s.owner[h%ownerShards]
	sh.mu.Lock()
	v, ok := sh.m[h]
	sh.mu.Unlock()
	if !ok {
		return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	if v != 0 {
		s.mu.RLock()
		b := s.byNum[v-1]
		s.mu.RUnlock()
		if b == nil { // dropped after the owner index was read
			return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
		}
		return b.get(h, id)
	}
	s.mu.RLock()
	books := s.byNum[:len(s.byNum):len(s.byNum)]
	s.mu.RUnlock()
	for i := len(books) - 1; i >= 0; i-- {
		if books[i] == nil {
			continue
		}
		if p, err := books[i].get(h, id); err == nil {
			return p, nil
		}
	}
	return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
}

// Get implements Store.
func (s *Payments) Get(_ context.Context, merchantID, id string) (paymock.Payment, error) {
	b := s.book(merchantID, false)
	if b == nil {
		return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	return b.get(s.hash(id), id)
}

func (b *book) get(h uint64, id string) (paymock.Payment, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	i, ok := b.find(h, id)
	if !ok {
		return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	return b.decode(i), nil
}

func (b *book) decode(i int) paymock.Payment {
	return decodePayment(b.arena.bytes(*b.recs.at(i)), b.merchantID, &b.common)
}

// List implements Store.
func (s *Payments) List(_ context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("list: negative offset or limit")
	}
	b := s.book(merchantID, false)
	if b == nil {
		return []paymock.Payment{}, 0, nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	total := b.recs.n
	if offset >= total {
		return []paymock.Payment{}, total, nil
	}
	n := min(limit, total-offset)
	out := make([]paymock.Payment, n)
	// Newest first: walk the creation order backwards from the offset.
	for i := range n {
		out[i] = b.decode(total - 1 - offset - i)
	}
	return out, total, nil
}

// CustomerID implements Store. Emails are matched without regard to case.
func (s *Payments) CustomerID(_ context.Context, merchantID, email string, newID func() string, limit int) (string, error) {
	key := strings.ToLower(email)
	b := s.writable(merchantID)
	defer b.mu.Unlock()
	id, ok := b.customers[key]
	if !ok {
		if limit >= 0 && b.recs.n >= limit {
			return "", fmt.Errorf("customer of %s: %w", merchantID, paymock.ErrLimitReached)
		}
		id = newID()
		if b.customers == nil {
			b.customers = make(map[string]string)
		}
		// Cloned: the email is often cut from a whole request body (a
		// create read by hand), which the key would keep alive.
		b.customers[strings.Clone(key)] = id
	}
	return id, nil
}

// Update implements Store. The payment is written anew at the end of the
// arena and its record points there; the old encoding is dead bytes.
func (s *Payments) Update(_ context.Context, merchantID, id string, fn func(*paymock.Payment) error) (paymock.Payment, error) {
	b := s.book(merchantID, false)
	if b == nil {
		return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	h := s.hash(id)
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.find(h, id)
	if !ok {
		return paymock.Payment{}, fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	p := b.decode(i) // a copy: fn's changes land only if it succeeds
	if err := fn(&p); err != nil {
		return b.decode(i), err
	}
	r := b.recs.at(i)
	stored := b.arena.bytes(*r)
	p.ID, p.MerchantID = string(recordID(stored)), b.merchantID
	b.arena.dead += len(stored)
	var buf [512]byte
	*r = b.arena.add(encodePayment(buf[:0], &p, &b.common))
	if b.arena.dead > compactAfter && b.arena.dead > b.arena.used-b.arena.dead {
		b.compact()
	}
	return p, nil
}

// compact copies the live encodings into a new arena, in record order, so
// that a book updated over and over holds at most about twice its
// payments' bytes. Its cost is that of the updates that made the garbage.
func (b *book) compact() {
	var fresh arena
	for ci := range b.recs.c {
		for j := range b.recs.c[ci] {
			r := &b.recs.c[ci][j]
			*r = fresh.add(b.arena.bytes(*r))
		}
	}
	b.arena = fresh
}

// Reset implements Store. The book is emptied in place, under its lock, so
// an Insert racing with the reset lands either before it (and is forgotten)
// or after it (and is kept), never in a book nobody reads.
func (s *Payments) Reset(_ context.Context, merchantID string) error {
	b := s.book(merchantID, false)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s.empty(b)
	b.byHash = make(map[uint64]uint32)
	return nil
}

// Drop forgets the merchant's book altogether: its payments, customers
// and due work, and its place in the store, which a Reset keeps for the
// merchant's next payment. For a merchant this process no longer holds
// (paymock.Backend.Release): in open mode every new token is a merchant,
// and each book left behind would stay, and be swept for due work every
// second, for good.
//
// The book leaves the merchants' map first, so that no one finds it any
// more; then it is emptied and marked dropped under its lock, so that an
// Insert racing with the drop lands either before it (and is forgotten)
// or in the merchant's new book; only then, when no owner entry names it
// and none will, is its number free for another book.
func (s *Payments) Drop(_ context.Context, merchantID string) error {
	b := s.unname(merchantID)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	s.dropLocked(b)
	b.mu.Unlock()
	s.freeNum(b)
	return nil
}

// unname takes the merchant's book out of the merchants' map, and returns
// it (nil when there is none): Drop's first step.
func (s *Payments) unname(merchantID string) *book {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[merchantID]
	delete(s.books, merchantID)
	return b
}

// dropLocked empties b and marks it dropped; the caller holds its lock.
func (s *Payments) dropLocked(b *book) {
	s.empty(b)
	b.dropped = true
}

// freeNum gives the number of b, dropped, to the next new book.
func (s *Payments) freeNum(b *book) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byNum[b.num] = nil
	s.free = append(s.free, b.num)
}

// empty forgets what b holds but its index map, which the caller sets:
// a new one for a book kept, none for a book dropped. The caller holds
// b's lock.
func (s *Payments) empty(b *book) {
	for h := range b.byHash {
		s.disown(h, b.num)
	}
	for id := range b.collided {
		s.disown(s.hash(id), b.num)
	}
	b.byHash = nil
	b.collided = nil
	b.recs = records{}
	b.arena = arena{}
	b.common = commonStrings{}
	b.customers = nil
	b.due = dueQueue{}
}

// disown forgets that the id of hash h is in book num. A shared entry
// stays: Locate then asks the books, which know.
func (s *Payments) disown(h uint64, num uint32) {
	sh := &s.owner[h%ownerShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[h] == num+1 {
		delete(sh.m, h)
	}
}
