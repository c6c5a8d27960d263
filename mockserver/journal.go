// The request journal and the conformance counters: what each merchant's
// client did, what it was answered, and where it broke the contract.

package mockserver

import (
	"encoding/binary"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/packed"
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
	// InjectedBy says how that fault was asked for (the header, a rule of
	// the control API, the faults file) and what it does, in words.
	InjectedBy string `json:"injected_by,omitempty"`
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
// pointers for the collector to follow), and the counters are one short
// slice rather than maps per operation.
type merchantLog struct {
	ring   []string
	next   int           // where the next entry goes once the ring is full
	counts []statusCount // one per operation and status answered
	calls  int
	odd    *oddCalls // nil until a call is refused, unmatched or faulted
}

// oddCalls are the counters a well-behaved client never moves.
type oddCalls struct {
	violations  map[opViolation]int
	violatingOp map[uint32]int // refused calls by operation
	violating   int
	unmatched   int
	injected    int
}

func (ml *merchantLog) oddCalls() *oddCalls {
	if ml.odd == nil {
		ml.odd = &oddCalls{violations: make(map[opViolation]int), violatingOp: make(map[uint32]int)}
	}
	return ml.odd
}

// statusCount counts the calls of one operation answered with one status
// (an HTTP status, or 0 for a reset connection: int32 holds them all).
type statusCount struct {
	op     uint32 // in the journal's names
	status int32
	calls  int
}

type opViolation struct {
	op uint32
	v  paymock.Violation
}

// journal holds every merchant's requests, bounded per merchant.
type requestJournal struct {
	size      int
	mu        sync.Mutex
	merchants map[string]*merchantLog
	// names spells the operations and variants once for every merchant:
	// entries and counters hold their number. There are as many as the
	// documents declare and --variants draws from.
	names   []string
	nameNum map[string]uint32
	// shared is this replica's part of a journal kept in a JournalStore.
	shared sharedState
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
	return &requestJournal{size: size, merchants: make(map[string]*merchantLog), names: []string{""}, nameNum: map[string]uint32{"": 0}}
}

func (j *requestJournal) merchantLocked(id string) *merchantLog {
	ml := j.merchants[id]
	if ml == nil {
		ml = &merchantLog{}
		j.merchants[id] = ml
	}
	return ml
}

// nameLocked numbers an operation or variant; "" is 0.
func (j *requestJournal) nameLocked(name string) uint32 {
	n, ok := j.nameNum[name]
	if !ok {
		n = uint32(len(j.names))
		j.names = append(j.names, name)
		j.nameNum[name] = n
	}
	return n
}

// record adds one request. violating says the contract check refused it;
// counted says it is a call of the service API, which the report covers
// (control API calls are journalled, not counted).
func (j *requestJournal) record(merchantID string, e JournalEntry, violating, counted bool) {
	if j == nil {
		return
	}
	buf := make([]byte, 0, 128)
	j.mu.Lock()
	defer j.mu.Unlock()
	op := j.nameLocked(e.Operation)
	enc := string(appendEntry(buf, &e, op, j.nameLocked(e.Variant)))
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
		ml.oddCalls().injected++
		violating = false
	}
	if violating {
		ml.oddCalls().violating++
	}
	if e.Operation == "" {
		ml.oddCalls().unmatched++
		return
	}
	ml.count(op, e.Status).calls++
	if violating {
		ml.odd.violatingOp[op]++
		for _, v := range e.Violations {
			ml.odd.violations[opViolation{op, v}]++
		}
	}
}

// count returns the counter of an operation and status, adding it on
// their first call. A merchant meets a handful, so a scan beats a map.
func (ml *merchantLog) count(op uint32, status int) *statusCount {
	for i := range ml.counts {
		if sc := &ml.counts[i]; sc.op == op && int(sc.status) == status {
			return sc
		}
	}
	ml.counts = append(ml.counts, statusCount{op: op, status: int32(status)})
	return &ml.counts[len(ml.counts)-1]
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
		e := decodeEntry(ml.ring[(ml.next-1-i+n)%n], j.names)
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

// reset forgets a merchant's requests and counters. Of a shared journal
// it forgets only this replica's count of appends: the entries are every
// replica's, and another may still serve the merchant.
func (j *requestJournal) reset(merchantID string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.merchants, merchantID)
	delete(j.shared.appended, merchantID)
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
	cp := merchantJournal{calls: ml.calls, ops: make(map[string]*opCounts)}
	odd := ml.odd
	if odd == nil {
		odd = &oddCalls{}
	}
	cp.violating, cp.unmatched, cp.injected = odd.violating, odd.unmatched, odd.injected
	for _, sc := range ml.counts {
		name := j.names[sc.op]
		c := cp.ops[name]
		if c == nil {
			c = &opCounts{statuses: map[int]int{}, violations: map[paymock.Violation]int{}}
			cp.ops[name] = c
		}
		c.calls += sc.calls
		c.statuses[int(sc.status)] = sc.calls
	}
	for op, n := range odd.violatingOp {
		cp.ops[j.names[op]].violating = n
	}
	for k, n := range odd.violations {
		cp.ops[j.names[k.op]].violations[k.v] = n
	}
	return cp
}

// The flags of an encoded entry: which of its fields take their short
// form.
const (
	atInSeconds byte = 1 << iota
	durationInMicros
)

// appendEntry encodes e: its strings as a length and bytes, then a flags
// byte, its time as seconds when the wire layout gives them back exactly,
// its method, operation and variant as numbers (op and variant), its
// duration as whole microseconds when they give back its float exactly,
// then its violations.
func appendEntry(dst []byte, e *JournalEntry, op, variant uint32) []byte {
	dst = packed.AppendString(dst, e.ID)
	var flags byte
	t, err := time.Parse(paymock.TimeLayout, e.At)
	if err == nil && paymock.FormatTime(t) == e.At {
		flags |= atInSeconds
	}
	us := math.Round(e.DurationMS * 1000)
	if us >= 0 && us < 1<<53 && !math.Signbit(e.DurationMS) && microsMS(int64(us)) == e.DurationMS {
		flags |= durationInMicros
	}
	dst = append(dst, flags)
	if flags&atInSeconds != 0 {
		dst = binary.AppendVarint(dst, t.Unix())
	} else {
		dst = packed.AppendString(dst, e.At)
	}
	dst = appendMethod(dst, e.Method)
	for _, s := range [...]string{e.Path, e.Query, e.InjectedFault, e.InjectedBy} {
		dst = packed.AppendString(dst, s)
	}
	dst = binary.AppendUvarint(dst, uint64(op))
	dst = binary.AppendUvarint(dst, uint64(variant))
	dst = binary.AppendVarint(dst, int64(e.Status))
	if flags&durationInMicros != 0 {
		dst = binary.AppendUvarint(dst, uint64(us))
	} else {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.DurationMS))
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Violations)))
	for _, v := range e.Violations {
		dst = packed.AppendString(dst, v.Param)
		dst = packed.AppendString(dst, v.Code)
		dst = packed.AppendString(dst, v.Message)
	}
	return dst
}

// methods are the methods an entry names by number; 0 is any other, spelt
// out.
func methods() [8]string {
	return [...]string{1: http.MethodGet, 2: http.MethodPost, 3: http.MethodHead, 4: http.MethodPut,
		5: http.MethodPatch, 6: http.MethodDelete, 7: http.MethodOptions}
}

func appendMethod(dst []byte, m string) []byte {
	for i, known := range methods() {
		if i > 0 && known == m {
			return append(dst, byte(i))
		}
	}
	return packed.AppendString(append(dst, 0), m)
}

func (r *entryReader) method() string {
	if c := r.Byte(); c != 0 {
		return methods()[c]
	}
	return r.String()
}

// entryReader reads an encoded entry; the strings it returns are pieces of
// the entry's own string, which nothing changes, so they cost nothing.
type entryReader struct{ packed.Reader }

// decodeEntry reads an entry of appendEntry; names are the journal's.
func decodeEntry(enc string, names []string) JournalEntry {
	r := entryReader{packed.Reader{S: enc}}
	e := JournalEntry{ID: r.String()}
	flags := r.Byte()
	if flags&atInSeconds != 0 {
		e.At = paymock.FormatTime(time.Unix(r.Varint(), 0))
	} else {
		e.At = r.String()
	}
	e.Method = r.method()
	e.Path, e.Query, e.InjectedFault, e.InjectedBy = r.String(), r.String(), r.String(), r.String()
	e.Operation, e.Variant = names[r.Uvarint()], names[r.Uvarint()]
	e.Status = int(r.Varint())
	if flags&durationInMicros != 0 {
		e.DurationMS = microsMS(int64(r.Uvarint()))
	} else {
		e.DurationMS = math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.S[r.I : r.I+8])))
		r.I += 8
	}
	if n := int(r.Uvarint()); n > 0 {
		e.Violations = make([]paymock.Violation, n)
		for k := range e.Violations {
			e.Violations[k] = paymock.Violation{Param: r.String(), Code: r.String(), Message: r.String()}
		}
	}
	return e
}

func durationMS(d time.Duration) float64 { return microsMS(d.Microseconds()) }

// microsMS is a duration in whole microseconds as milliseconds with three
// decimals, the float the journal shows.
func microsMS(us int64) float64 {
	ms, _ := strconv.ParseFloat(strconv.FormatFloat(float64(us)/1000, 'f', 3, 64), 64)
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
	at, err := s.clock.Now(r.Context(), m.ID)
	if err != nil {
		at = time.Now() // the clock's store failed this request already
	}
	e := JournalEntry{
		ID:            x.id,
		At:            paymock.FormatTime(at),
		Method:        x.method,
		Path:          contract.ShortPath(r.URL.Path),
		Query:         contract.ShortPath(r.URL.RawQuery),
		Status:        x.rec.status,
		DurationMS:    durationMS(time.Since(x.start)),
		Variant:       x.variant,
		InjectedFault: x.fault,
		InjectedBy:    contract.ShortPath(x.faultBy),
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
	counted := x.doc == s.docs.Service
	if js := s.sharedJournal(); js != nil {
		s.appendShared(r.Context(), js, m.ID, JournalRecord{Entry: e, Counted: counted, Violating: x.refused && x.fault == ""}, x.err)
		return
	}
	s.journal.record(m.ID, e, x.refused, counted)
}
