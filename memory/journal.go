// Each merchant's request journal and its counts, held in the process: the
// paymock.JournalStore of a memory Backend.

package memory

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/packed"
)

// Journal keeps request journals in memory: per merchant a ring of its
// newest requests, bounded by the last trim, and counts of every counted
// request ever appended, which outlive the ring. Most merchants of an
// open-mode sandbox make a call or two and go idle, so everything starts
// small: a merchant's first entry and count are held in its record, the
// ring grows to the journal's size as more requests come, each entry is
// one string in the encoding of appendEntry (no pointers for the collector
// to follow), and the counts are one short slice. It is safe for
// concurrent use.
//
// Each merchant's journal is its book, under the book's own lock, as the
// outbox's are: a merchant's list of its 10,000 entries, or its report,
// never holds up another merchant's requests, each of which appends to its
// own journal. The journal's mu guards only the map of books, and is never
// held while a book's lock is taken. A list finds its page under the
// book's lock, reading no more of each entry than its status, and decodes
// the page after.
type Journal struct {
	mu        sync.Mutex
	merchants map[string]*merchantLog
	names     journalNames
}

var _ paymock.JournalStore = (*Journal)(nil)

// NewJournal returns an empty Journal.
func NewJournal() *Journal {
	return &Journal{merchants: make(map[string]*merchantLog), names: journalNames{names: []string{""}, num: map[string]uint32{"": 0}}}
}

// journalNames spells the operations and variants once for every
// merchant: entries and counts hold their number. There are as many as the
// documents declare and --variants draws from. Names are only ever added,
// so a slice of them read once is good for every number handed out
// before.
type journalNames struct {
	mu    sync.RWMutex
	names []string
	num   map[string]uint32
}

// number numbers an operation or variant; "" is 0.
func (n *journalNames) number(name string) uint32 {
	n.mu.RLock()
	k, ok := n.num[name]
	n.mu.RUnlock()
	if ok {
		return k
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if k, ok := n.num[name]; ok {
		return k
	}
	k = uint32(len(n.names))
	n.names = append(n.names, name)
	n.num[name] = k
	return k
}

// all returns the names numbered so far, indexed by number.
func (n *journalNames) all() []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.names
}

// merchantLog is one merchant's recent requests and counts: its book,
// under mu. Most merchants of an open-mode sandbox make one call and go
// idle: their one entry and one count are held here, and a ringLog takes
// over from the second entry, the second kind of call or the first
// violation on.
type merchantLog struct {
	mu        sync.Mutex
	first     string    // the one entry while big is nil; "" for none
	firstCall callCount // the one count while big is nil; calls 0 for none
	// bound is the bound while big is nil (see ringLog), and deadBound
	// once ForgetRequests took the book out of the journal, so that an
	// append racing with it finds the new book instead. One field for
	// both keeps the book of a merchant with one request in 48 bytes.
	bound int32
	big   *ringLog
}

// deadBound marks a book ForgetRequests took out of the journal.
const deadBound = math.MinInt32

// dead says whether ForgetRequests took the book out of the journal.
func (ml *merchantLog) dead() bool { return ml.bound == deadBound }

// kill marks the book taken out of the journal.
func (ml *merchantLog) kill() { ml.bound = deadBound }

// ringLog is a merchant's ring of recent requests and its counts.
type ringLog struct {
	ring []string
	// next and bound are int32, as a ring never holds more than a trim's
	// keep of entries.
	next  int32 // where the next entry goes once the ring is full
	bound int32 // the ring's size from the last trim; -1 before the first
	calls []callCount
	// violations counts, per operation, the violations of violating
	// calls; nil until a call is refused.
	violations []violationTally
}

// violationTally counts the violations of one operation's violating calls:
// the first paymock.MaxDistinctViolations distinct ones apart, the others
// together, so that a client making up a new one with every request grows
// the tally no further.
type violationTally struct {
	op       uint32
	kinds    map[paymock.Violation]int
	unlisted int
}

// callCount counts the counted calls that share an operation, a status
// (an HTTP status, or 0 for a reset connection: int16 holds them all) and
// whether they were violating and injected, in 16 bytes.
type callCount struct {
	calls     int32  // int32 keeps a merchant's first count in its book's 48 bytes
	op        uint32 // in the journal's names
	status    int16
	violating bool
	injected  bool
}

// book returns the merchant's book with its lock held, or nil when it has
// none and create is false. The caller unlocks it.
func (j *Journal) book(merchantID string, create bool) *merchantLog {
	return lockLive(func() *merchantLog {
		j.mu.Lock()
		defer j.mu.Unlock()
		ml := j.merchants[merchantID]
		if ml == nil && create {
			ml = &merchantLog{bound: -1}
			j.merchants[merchantID] = ml
		}
		return ml
	})
}

// grow moves the merchant's entry and count to a ringLog, which holds
// them from now on.
func (ml *merchantLog) grow() *ringLog {
	if ml.big != nil {
		return ml.big
	}
	ml.big = &ringLog{bound: ml.bound}
	if ml.first != "" {
		ml.big.ring = []string{ml.first}
	}
	if ml.firstCall.calls > 0 {
		ml.big.calls = []callCount{ml.firstCall}
	}
	ml.first, ml.firstCall = "", callCount{}
	return ml.big
}

// push adds an entry as the newest, over the oldest once the ring holds
// its bound.
func (ml *merchantLog) push(enc string) {
	if ml.big == nil {
		if ml.bound == 0 {
			return
		}
		if ml.first == "" { // an encoded entry is never empty
			ml.first = enc
			return
		}
	}
	ml.grow().push(enc)
}

// count returns the counter of calls alike, adding it on their first.
func (ml *merchantLog) count(op uint32, status int, violating, injected bool) *callCount {
	if ml.big == nil {
		c := &ml.firstCall
		if c.calls == 0 {
			*c = callCount{op: op, status: int16(status), violating: violating, injected: injected}
			return c
		}
		if c.alike(op, status, violating, injected) {
			return c
		}
	}
	return ml.grow().count(op, status, violating, injected)
}

// entries is how many entries the merchant's ring holds.
func (ml *merchantLog) entries() int {
	if ml.big != nil {
		return len(ml.big.ring)
	}
	if ml.first != "" {
		return 1
	}
	return 0
}

// newest returns the i-th newest entry, from 0, of entries().
func (ml *merchantLog) newest(i int) string {
	if ml.big != nil {
		return ml.big.newest(i)
	}
	return ml.first
}

// counts are the merchant's counters of calls.
func (ml *merchantLog) counts() []callCount {
	if ml.big != nil {
		return ml.big.calls
	}
	if ml.firstCall.calls > 0 {
		return []callCount{ml.firstCall}
	}
	return nil
}

func (c *callCount) alike(op uint32, status int, violating, injected bool) bool {
	return c.op == op && int(c.status) == status && c.violating == violating && c.injected == injected
}

// scratch holds the buffers entries are encoded in, before their book's
// lock is taken.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// encode is e in the encoding of appendEntry, numbered in the journal's
// names, and its operation's number.
func (j *Journal) encode(e *paymock.JournalEntry) (string, uint32) {
	op := j.names.number(e.Operation)
	buf := scratch.Get().(*[]byte)
	*buf = appendEntry((*buf)[:0], e, op, j.names.number(e.Variant))
	enc := string(*buf)
	scratch.Put(buf)
	return enc, op
}

// AppendRequest implements paymock.JournalStore.
func (j *Journal) AppendRequest(_ context.Context, merchantID string, r paymock.JournalRecord) error {
	if err := checkStatus(r.Entry.Status); err != nil {
		return fmt.Errorf("memory: append to the request journal: %w", err)
	}
	enc, op := j.encode(&r.Entry)
	ml := j.book(merchantID, true)
	defer ml.mu.Unlock()
	ml.push(enc)
	ml.countRecord(op, r, 1)
	return nil
}

// checkStatus refuses a status an entry cannot hold.
func checkStatus(status int) error {
	if status < math.MinInt16 || status > math.MaxInt16 {
		return fmt.Errorf("status %d: want an HTTP status, or 0 for a reset connection", status)
	}
	return nil
}

// countRecord adds delta (1, or -1 to take it back) to the counts of r,
// whose operation is op.
func (ml *merchantLog) countRecord(op uint32, r paymock.JournalRecord, delta int) {
	e := &r.Entry
	if !r.Counted {
		return
	}
	c := ml.count(op, e.Status, r.Violating, e.InjectedFault != "")
	// A count stops at its most rather than wrapping: 2^31 calls of one
	// kind is 12 hours of one merchant at 50,000 a second.
	c.calls = int32(min(int64(c.calls)+int64(delta), math.MaxInt32))
	if delta < 0 {
		ml.dropEmptyCounts()
	}
	if !r.Violating || e.Operation == "" {
		return
	}
	t := ml.grow().tally(op)
	for _, v := range e.Violations {
		n, ok := t.kinds[v]
		if !ok && (delta < 0 || len(t.kinds) >= paymock.MaxDistinctViolations) {
			// Taken back from, or past, those told apart.
			t.unlisted = max(t.unlisted+delta, 0)
			continue
		}
		if n += delta; n > 0 {
			t.kinds[v] = n
		} else {
			delete(t.kinds, v) // its place goes to the next new one
		}
	}
}

// tally returns the operation's tally of violations, adding it on its
// first. A merchant calls a handful of operations, so a scan beats a map.
func (ml *ringLog) tally(op uint32) *violationTally {
	for i := range ml.violations {
		if t := &ml.violations[i]; t.op == op {
			return t
		}
	}
	ml.violations = append(ml.violations, violationTally{op: op, kinds: make(map[paymock.Violation]int)})
	return &ml.violations[len(ml.violations)-1]
}

// dropEmptyCounts forgets the counters a count taken back left at 0.
func (ml *merchantLog) dropEmptyCounts() {
	if ml.big == nil {
		if ml.firstCall.calls <= 0 {
			ml.firstCall = callCount{}
		}
		return
	}
	ml.big.calls = slices.DeleteFunc(ml.big.calls, func(c callCount) bool { return c.calls <= 0 })
}

// ReplaceRequest implements paymock.JournalStore: the entry is found by
// its id among the ring's, newest first, and the counts of was are taken
// back for those of r.
func (j *Journal) ReplaceRequest(_ context.Context, merchantID string, was, r paymock.JournalRecord) error {
	if was.Entry.ID != r.Entry.ID {
		return fmt.Errorf("memory: replace request %s of the request journal with %s: want the same request", was.Entry.ID, r.Entry.ID)
	}
	if err := checkStatus(r.Entry.Status); err != nil {
		return fmt.Errorf("memory: replace request %s of the request journal: %w", r.Entry.ID, err)
	}
	enc, op := j.encode(&r.Entry)
	wasOp := j.names.number(was.Entry.Operation)
	ml := j.book(merchantID, false)
	at := -1
	if ml != nil {
		defer ml.mu.Unlock()
		head := string(packed.AppendString(nil, r.Entry.ID))
		for i := range ml.entries() {
			if strings.HasPrefix(ml.newest(i), head) {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return fmt.Errorf("memory: replace request %s of the request journal: %w", r.Entry.ID, paymock.ErrNotFound)
	}
	if ml.big == nil {
		ml.first = enc
	} else {
		n := len(ml.big.ring)
		ml.big.ring[(int(ml.big.next)-1-at+2*n)%n] = enc
	}
	ml.countRecord(wasOp, was, -1)
	ml.countRecord(op, r, 1)
	return nil
}

// push adds an entry as the newest, over the oldest once the ring holds
// its bound.
func (ml *ringLog) push(enc string) {
	switch {
	case ml.bound == 0:
	case ml.bound < 0 || len(ml.ring) < int(ml.bound):
		if len(ml.ring) == cap(ml.ring) && ml.bound > 0 {
			// Double, but never past the bound: append's own growth
			// would overshoot it for good.
			grown := make([]string, len(ml.ring), min(max(2*cap(ml.ring), 1), int(ml.bound)))
			copy(grown, ml.ring)
			ml.ring = grown
		}
		ml.ring = append(ml.ring, enc)
	default:
		ml.ring[ml.next] = enc
		ml.next = int32((int(ml.next) + 1) % len(ml.ring))
	}
}

// count returns the counter of calls alike, adding it on their first. A
// merchant meets a handful, so a scan beats a map.
func (ml *ringLog) count(op uint32, status int, violating, injected bool) *callCount {
	for i := range ml.calls {
		if c := &ml.calls[i]; c.alike(op, status, violating, injected) {
			return c
		}
	}
	ml.calls = append(ml.calls, callCount{op: op, status: int16(status), violating: violating, injected: injected})
	return &ml.calls[len(ml.calls)-1]
}

// newest returns the i-th newest entry, from 0.
func (ml *ringLog) newest(i int) string {
	n := len(ml.ring)
	return ml.ring[(int(ml.next)-1-i+2*n)%n]
}

// TrimRequests implements paymock.JournalStore. The counts were added as
// each request came, so a trim only drops entries: the ring keeps the
// newest keep from now on.
func (j *Journal) TrimRequests(_ context.Context, merchantID string, keep int) error {
	if keep < 0 {
		return fmt.Errorf("memory: trim the request journal to %d requests: want 0 or more", keep)
	}
	// No ring holds 2^31 entries: a larger keep keeps them all.
	keep = min(keep, math.MaxInt32)
	small := j.book(merchantID, false)
	if small == nil {
		return nil
	}
	defer small.mu.Unlock()
	if small.big == nil && (keep > 0 || small.first == "") {
		small.bound = int32(keep) // its one entry, if any, is within it
		return nil
	}
	ml := small.grow()
	if int(ml.bound) == keep && len(ml.ring) <= keep {
		return nil
	}
	if len(ml.ring) <= keep && ml.next == 0 {
		ml.bound = int32(keep) // in order already, and within the bound
		return nil
	}
	n := min(len(ml.ring), keep)
	ring := make([]string, n, max(n, min(keep, 2*n)))
	for i := range n {
		ring[n-1-i] = ml.newest(i)
	}
	ml.ring, ml.next, ml.bound = ring, 0, int32(keep)
	return nil
}

// ListRequests implements paymock.JournalStore. The ring is bounded, so a
// scan of it is too. The page is found under the book's lock: a filter
// reads of each entry its status and number of violations alone
// (peekEntry), which costs no allocation, and the page's entries are
// decoded after the lock (their strings are never changed). Copying every
// entry out to filter it outside the lock was tried: eight clients
// filtering one merchant's 10,000 entries then made 250 MB/s of garbage,
// and another merchant's p99 stayed at 17 ms; scanned in place, one
// merchant's filters take turns on its own book and the other's p99 is
// 3 ms. What the merchant's own requests wait for is one scan: 1 to 2 ms
// over 10,000 entries (BenchmarkJournal_FilteredList).
func (j *Journal) ListRequests(_ context.Context, merchantID string, q paymock.JournalQuery) ([]paymock.JournalEntry, int, error) {
	if q.Keep < 0 || q.Offset < 0 || q.Limit < 0 {
		return nil, 0, fmt.Errorf("memory: list the request journal: keep %d, offset %d, limit %d: want 0 or more", q.Keep, q.Offset, q.Limit)
	}
	var page []string // the page's entries, newest first
	total := 0
	if ml := j.book(merchantID, false); ml != nil {
		n := min(ml.entries(), q.Keep)
		if q.Status == 0 && !q.Violations {
			total = n
			for i := min(q.Offset, n); i < n && len(page) < q.Limit; i++ {
				page = append(page, ml.newest(i))
			}
		} else {
			for i := range n {
				enc := ml.newest(i)
				status, violations := peekEntry(enc)
				if (q.Status != 0 && status != q.Status) || (q.Violations && violations == 0) {
					continue
				}
				if total >= q.Offset && len(page) < q.Limit {
					page = append(page, enc)
				}
				total++
			}
		}
		ml.mu.Unlock()
	}
	names := j.names.all() // read after the entries, so it spells every number they hold
	out := make([]paymock.JournalEntry, 0, len(page))
	for _, enc := range page {
		out = append(out, decodeEntry(enc, names))
	}
	return out, total, nil
}

// CountRequests implements paymock.JournalStore.
func (j *Journal) CountRequests(_ context.Context, merchantID string) (paymock.JournalCounts, error) {
	var c paymock.JournalCounts
	ml := j.book(merchantID, false)
	if ml == nil {
		return c, nil
	}
	defer ml.mu.Unlock()
	names := j.names.all() // every number the book holds was handed out before its lock was taken
	for _, cc := range ml.counts() {
		c.Calls = append(c.Calls, paymock.JournalCallCount{Operation: names[cc.op], Status: int(cc.status),
			Violating: cc.violating, Injected: cc.injected, Calls: int(cc.calls)})
	}
	if ml.big == nil {
		return c, nil
	}
	for _, t := range ml.big.violations {
		for v, n := range t.kinds {
			c.Violations = append(c.Violations, paymock.JournalViolationCount{Operation: names[t.op], Violation: v, Calls: n})
		}
		if t.unlisted > 0 {
			c.Unlisted = append(c.Unlisted, paymock.JournalUnlistedCount{Operation: names[t.op], Violations: t.unlisted})
		}
	}
	return c, nil
}

// ForgetRequests implements paymock.JournalStore: in memory this process
// holds everything, so the merchant's journal and counts go.
func (j *Journal) ForgetRequests(_ context.Context, merchantID string) error {
	j.mu.Lock()
	ml := j.merchants[merchantID]
	delete(j.merchants, merchantID)
	j.mu.Unlock()
	if ml != nil {
		ml.mu.Lock()
		ml.kill()
		ml.mu.Unlock()
	}
	return nil
}
