// The request journal and the conformance counters: what each merchant's
// client did, what it was answered, and where it broke the contract.

package mockserver

import (
	"encoding/binary"
	"maps"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

// DefaultJournalSize is how many requests a merchant's journal keeps.
const DefaultJournalSize = 10000

// JournalEntry is one request as the journal shows it.
type JournalEntry struct {
	ID         string              `json:"id"`
	At         string              `json:"at"`
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Query      string              `json:"query"`
	Operation  string              `json:"operation_id,omitempty"`
	Status     int                 `json:"status"`
	DurationMS float64             `json:"duration_ms"`
	Variant    string              `json:"variant,omitempty"`
	Violations []paymock.Violation `json:"violations,omitempty"`
	// InjectedFault is the id of the fault rule that shaped the answer
	// ("header" for the Paymock-Fault header); a reset answer has status 0.
	InjectedFault string `json:"injected_fault,omitempty"`
}

// opCounts is what the report knows of one operation.
type opCounts struct {
	calls      int
	violating  int
	statuses   map[int]int
	violations map[paymock.Violation]int
}

// merchantJournal is a copy of one merchant's counters, for the report.
type merchantJournal struct {
	ops       map[string]*opCounts
	calls     int
	violating int
	unmatched int
	injected  int
}

// merchantLog is one merchant's ring of recent requests and its counters,
// which outlive the ring: the report covers every request. Most merchants
// of an open-mode sandbox make a call or two and go idle, so everything
// here starts small: the ring grows to the journal's size as requests
// come, each entry is one string in the encoding of appendEntry (no
// pointers for the collector to follow), and an operation's counters are a
// short slice rather than maps.
type merchantLog struct {
	ring      []string
	next      int // where the next entry goes once the ring is full
	ops       []opTally
	calls     int
	violating int
	unmatched int
	injected  int
}

// opTally counts the calls of one operation.
type opTally struct {
	op         string
	calls      int
	violating  int
	statuses   []statusCount             // few: the statuses one operation answers
	violations map[paymock.Violation]int // nil until the first violating call
}

type statusCount struct{ status, n int }

// journal holds every merchant's requests, bounded per merchant.
type requestJournal struct {
	size      int
	mu        sync.Mutex
	merchants map[string]*merchantLog
}

// newJournal returns a journal keeping size requests per merchant: the
// default for 0, none at all (nil) for a negative size.
func newJournal(size int) *requestJournal {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultJournalSize
	}
	return &requestJournal{size: size, merchants: make(map[string]*merchantLog)}
}

func (j *requestJournal) merchantLocked(id string) *merchantLog {
	ml := j.merchants[id]
	if ml == nil {
		ml = &merchantLog{}
		j.merchants[id] = ml
	}
	return ml
}

// record adds one request. violating says the contract check refused it;
// counted says it is a call of the service API, which the report covers
// (control API calls are journalled, not counted).
func (j *requestJournal) record(merchantID string, e JournalEntry, violating, counted bool) {
	if j == nil {
		return
	}
	enc := string(appendEntry(make([]byte, 0, 128), &e))
	j.mu.Lock()
	defer j.mu.Unlock()
	ml := j.merchantLocked(merchantID)
	if len(ml.ring) < j.size {
		if len(ml.ring) == cap(ml.ring) {
			// Double, but never past the journal's size: append's own
			// growth would overshoot it for good.
			grown := make([]string, len(ml.ring), min(max(2*cap(ml.ring), 1), j.size))
			copy(grown, ml.ring)
			ml.ring = grown
		}
		ml.ring = append(ml.ring, enc)
	} else {
		ml.ring[ml.next] = enc
		ml.next = (ml.next + 1) % j.size
	}
	if !counted {
		return
	}
	ml.calls++
	if e.InjectedFault != "" {
		// Asked for by the client's own test: it covers the status the
		// client had to handle, and is never the client's violation.
		ml.injected++
		violating = false
	}
	if violating {
		ml.violating++
	}
	if e.Operation == "" {
		ml.unmatched++
		return
	}
	oc := ml.op(e.Operation)
	oc.calls++
	oc.count(e.Status)
	if violating {
		oc.violating++
		if len(e.Violations) > 0 && oc.violations == nil {
			oc.violations = make(map[paymock.Violation]int)
		}
		for _, v := range e.Violations {
			oc.violations[v]++
		}
	}
}

// op returns the counters of an operation, adding them on its first call.
// A merchant calls a handful of operations, so a scan beats a map.
func (ml *merchantLog) op(name string) *opTally {
	for i := range ml.ops {
		if ml.ops[i].op == name {
			return &ml.ops[i]
		}
	}
	ml.ops = append(ml.ops, opTally{op: name})
	return &ml.ops[len(ml.ops)-1]
}

func (oc *opTally) count(status int) {
	for i := range oc.statuses {
		if oc.statuses[i].status == status {
			oc.statuses[i].n++
			return
		}
	}
	oc.statuses = append(oc.statuses, statusCount{status: status, n: 1})
}

// requestFilter selects journal entries.
type requestFilter struct {
	status     int  // 0: any
	violations bool // only requests the contract refused
}

func (f requestFilter) match(e JournalEntry) bool {
	return (f.status == 0 || e.Status == f.status) && (!f.violations || len(e.Violations) > 0)
}

// list returns entries newest first, after offset, at most limit, and how
// many match in all. The ring is bounded, so a scan of it is too.
func (j *requestJournal) list(merchantID string, f requestFilter, offset, limit int) ([]JournalEntry, int) {
	out := []JournalEntry{}
	if j == nil {
		return out, 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	ml := j.merchants[merchantID]
	if ml == nil {
		return out, 0
	}
	total := 0
	n := len(ml.ring)
	for i := range n {
		e := decodeEntry(ml.ring[(ml.next-1-i+n)%n])
		if !f.match(e) {
			continue
		}
		if total >= offset && len(out) < limit {
			out = append(out, e)
		}
		total++
	}
	return out, total
}

// reset forgets a merchant's requests and counters.
func (j *requestJournal) reset(merchantID string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.merchants, merchantID)
}

// snapshot copies a merchant's counters for the report.
func (j *requestJournal) snapshot(merchantID string) merchantJournal {
	if j == nil {
		return merchantJournal{}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	ml := j.merchants[merchantID]
	if ml == nil {
		return merchantJournal{}
	}
	cp := merchantJournal{calls: ml.calls, violating: ml.violating, unmatched: ml.unmatched, injected: ml.injected, ops: make(map[string]*opCounts, len(ml.ops))}
	for _, oc := range ml.ops {
		c := &opCounts{calls: oc.calls, violating: oc.violating, statuses: make(map[int]int, len(oc.statuses)), violations: maps.Clone(oc.violations)}
		if c.violations == nil {
			c.violations = map[paymock.Violation]int{}
		}
		for _, sc := range oc.statuses {
			c.statuses[sc.status] = sc.n
		}
		cp.ops[oc.op] = c
	}
	return cp
}

// appendEntry encodes e: its strings as a length and bytes, its status as
// a varint, its duration as the float's bits, then its violations.
func appendEntry(dst []byte, e *JournalEntry) []byte {
	for _, s := range [...]string{e.ID, e.At, e.Method, e.Path, e.Query, e.Operation, e.Variant, e.InjectedFault} {
		dst = appendEntryString(dst, s)
	}
	dst = binary.AppendVarint(dst, int64(e.Status))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.DurationMS))
	dst = binary.AppendUvarint(dst, uint64(len(e.Violations)))
	for _, v := range e.Violations {
		dst = appendEntryString(dst, v.Param)
		dst = appendEntryString(dst, v.Code)
		dst = appendEntryString(dst, v.Message)
	}
	return dst
}

func appendEntryString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// entryReader reads an encoded entry; the strings it returns are pieces of
// the entry's own string, which nothing changes, so they cost nothing.
type entryReader struct {
	s string
	i int
}

func (r *entryReader) uvarint() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		c := r.s[r.i]
		r.i++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

func (r *entryReader) string() string {
	n := int(r.uvarint())
	s := r.s[r.i : r.i+n]
	r.i += n
	return s
}

func decodeEntry(enc string) JournalEntry {
	r := entryReader{s: enc}
	e := JournalEntry{ID: r.string(), At: r.string(), Method: r.string(), Path: r.string(), Query: r.string(),
		Operation: r.string(), Variant: r.string(), InjectedFault: r.string()}
	u := r.uvarint()
	e.Status = int(int64(u>>1) ^ -int64(u&1))
	e.DurationMS = math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.s[r.i : r.i+8])))
	r.i += 8
	if n := int(r.uvarint()); n > 0 {
		e.Violations = make([]paymock.Violation, n)
		for k := range e.Violations {
			e.Violations[k] = paymock.Violation{Param: r.string(), Code: r.string(), Message: r.string()}
		}
	}
	return e
}

func durationMS(d time.Duration) float64 {
	ms, _ := strconv.ParseFloat(strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64), 64)
	return ms
}

// journalRequest records a finished exchange in its merchant's journal. A
// request refused before its key was checked belongs to the key's
// merchant when the key is good; with no good key it belongs to nobody.
func (s *Server) journalRequest(c *echo.Context, x *exchange) {
	m := x.caller
	if m == nil {
		return
	}
	r := c.Request()
	e := JournalEntry{
		ID:            x.id,
		At:            paymock.FormatTime(s.clock.Now(m.ID)),
		Method:        x.method,
		Path:          contract.ShortPath(r.URL.Path),
		Query:         contract.ShortPath(r.URL.RawQuery),
		Status:        x.rec.status,
		DurationMS:    durationMS(time.Since(x.start)),
		Variant:       x.variant,
		InjectedFault: x.fault,
	}
	if x.reset {
		e.Status = 0
	}
	if x.route != nil {
		e.Operation = x.route.OperationID()
	}
	if x.refused && x.err != nil {
		_, de := classify(x.err)
		e.Violations = de.Violations
		if len(e.Violations) == 0 {
			e.Violations = []paymock.Violation{{Param: de.Param, Code: de.Code, Message: de.Message}}
		}
	}
	s.journal.record(m.ID, e, x.refused, x.doc == s.docs.Service)
}
