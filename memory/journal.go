// Each merchant's request journal and its counts, held in the process: the
// paymock.JournalStore of a memory Backend.

package memory

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/paymock/paymock"
)

// Journal keeps request journals in memory: per merchant a ring of its
// newest requests, bounded by the last trim, and counts of every counted
// request ever appended, which outlive the ring. Most merchants of an
// open-mode sandbox make a call or two and go idle, so everything starts
// small: the ring grows to the journal's size as requests come, each entry
// is one string in the encoding of appendEntry (no pointers for the
// collector to follow), and the counts are one short slice. It is safe for
// concurrent use.
type Journal struct {
	mu        sync.Mutex
	merchants map[string]*merchantLog
	// names spells the operations and variants once for every merchant:
	// entries and counts hold their number. There are as many as the
	// documents declare and --variants draws from.
	names   []string
	nameNum map[string]uint32
	scratch []byte // the entry being encoded, under mu
}

var _ paymock.JournalStore = (*Journal)(nil)

// NewJournal returns an empty Journal.
func NewJournal() *Journal {
	return &Journal{merchants: make(map[string]*merchantLog), names: []string{""}, nameNum: map[string]uint32{"": 0}}
}

// merchantLog is one merchant's ring of recent requests and its counts.
type merchantLog struct {
	ring []string
	// next and bound are int32, as a ring never holds more than a trim's
	// keep of entries: an idle merchant's record stays in the 64-byte size
	// class.
	next  int32 // where the next entry goes once the ring is full
	bound int32 // the ring's size from the last trim; -1 before the first
	calls []callCount
	// violations counts, per operation, the violations of violating
	// calls; nil until a call is refused.
	violations map[opViolation]int
}

// callCount counts the counted calls that share an operation, a status
// (an HTTP status, or 0 for a reset connection: int16 holds them all) and
// whether they were violating and injected, in 16 bytes.
type callCount struct {
	calls     int
	op        uint32 // in the journal's names
	status    int16
	violating bool
	injected  bool
}

type opViolation struct {
	op uint32
	v  paymock.Violation
}

func (j *Journal) merchantLocked(id string) *merchantLog {
	ml := j.merchants[id]
	if ml == nil {
		ml = &merchantLog{bound: -1}
		j.merchants[id] = ml
	}
	return ml
}

// nameLocked numbers an operation or variant; "" is 0.
func (j *Journal) nameLocked(name string) uint32 {
	n, ok := j.nameNum[name]
	if !ok {
		n = uint32(len(j.names))
		j.names = append(j.names, name)
		j.nameNum[name] = n
	}
	return n
}

// AppendRequest implements paymock.JournalStore.
func (j *Journal) AppendRequest(_ context.Context, merchantID string, r paymock.JournalRecord) error {
	e := &r.Entry
	if e.Status < math.MinInt16 || e.Status > math.MaxInt16 {
		return fmt.Errorf("memory: append to the request journal: status %d: want an HTTP status, or 0 for a reset connection", e.Status)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	op := j.nameLocked(e.Operation)
	j.scratch = appendEntry(j.scratch[:0], e, op, j.nameLocked(e.Variant))
	ml := j.merchantLocked(merchantID)
	ml.push(string(j.scratch))
	if !r.Counted {
		return nil
	}
	ml.count(op, e.Status, r.Violating, e.InjectedFault != "").calls++
	if r.Violating && e.Operation != "" {
		if ml.violations == nil {
			ml.violations = make(map[opViolation]int)
		}
		for _, v := range e.Violations {
			ml.violations[opViolation{op, v}]++
		}
	}
	return nil
}

// push adds an entry as the newest, over the oldest once the ring holds
// its bound.
func (ml *merchantLog) push(enc string) {
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
func (ml *merchantLog) count(op uint32, status int, violating, injected bool) *callCount {
	for i := range ml.calls {
		if c := &ml.calls[i]; c.op == op && int(c.status) == status && c.violating == violating && c.injected == injected {
			return c
		}
	}
	ml.calls = append(ml.calls, callCount{op: op, status: int16(status), violating: violating, injected: injected})
	return &ml.calls[len(ml.calls)-1]
}

// newest returns the i-th newest entry, from 0.
func (ml *merchantLog) newest(i int) string {
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
	j.mu.Lock()
	defer j.mu.Unlock()
	ml := j.merchants[merchantID]
	if ml == nil || (int(ml.bound) == keep && len(ml.ring) <= keep) {
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
// scan of it is too.
func (j *Journal) ListRequests(_ context.Context, merchantID string, q paymock.JournalQuery) ([]paymock.JournalEntry, int, error) {
	if q.Keep < 0 || q.Offset < 0 || q.Limit < 0 {
		return nil, 0, fmt.Errorf("memory: list the request journal: keep %d, offset %d, limit %d: want 0 or more", q.Keep, q.Offset, q.Limit)
	}
	out := []paymock.JournalEntry{}
	j.mu.Lock()
	defer j.mu.Unlock()
	ml := j.merchants[merchantID]
	if ml == nil {
		return out, 0, nil
	}
	total := 0
	for i := range min(len(ml.ring), q.Keep) {
		e := decodeEntry(ml.newest(i), j.names)
		if (q.Status != 0 && e.Status != q.Status) || (q.Violations && len(e.Violations) == 0) {
			continue
		}
		if total >= q.Offset && len(out) < q.Limit {
			out = append(out, e)
		}
		total++
	}
	return out, total, nil
}

// CountRequests implements paymock.JournalStore.
func (j *Journal) CountRequests(_ context.Context, merchantID string) (paymock.JournalCounts, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var c paymock.JournalCounts
	ml := j.merchants[merchantID]
	if ml == nil {
		return c, nil
	}
	for _, cc := range ml.calls {
		c.Calls = append(c.Calls, paymock.JournalCallCount{Operation: j.names[cc.op], Status: int(cc.status),
			Violating: cc.violating, Injected: cc.injected, Calls: cc.calls})
	}
	for k, n := range ml.violations {
		c.Violations = append(c.Violations, paymock.JournalViolationCount{Operation: j.names[k.op], Violation: k.v, Calls: n})
	}
	return c, nil
}

// ForgetRequests implements paymock.JournalStore: in memory this process
// holds everything, so the merchant's journal and counts go.
func (j *Journal) ForgetRequests(_ context.Context, merchantID string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.merchants, merchantID)
	return nil
}
