// The request journal and the conformance counters: what each merchant's
// client did, what it was answered, and where it broke the contract.

package mockserver

import (
	"maps"
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

// merchantJournal is one merchant's ring of recent requests and its
// counters, which outlive the ring: the report covers every request.
type merchantJournal struct {
	ring      []JournalEntry
	next      int // where the next entry goes
	full      bool
	ops       map[string]*opCounts
	calls     int
	violating int
	unmatched int
	injected  int
}

// journal holds every merchant's requests, bounded per merchant.
type requestJournal struct {
	size      int
	mu        sync.Mutex
	merchants map[string]*merchantJournal
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
	return &requestJournal{size: size, merchants: make(map[string]*merchantJournal)}
}

func (j *requestJournal) merchantLocked(id string) *merchantJournal {
	mj := j.merchants[id]
	if mj == nil {
		mj = &merchantJournal{ops: make(map[string]*opCounts)}
		j.merchants[id] = mj
	}
	return mj
}

// record adds one request. violating says the contract check refused it;
// counted says it is a call of the service API, which the report covers
// (control API calls are journalled, not counted).
func (j *requestJournal) record(merchantID string, e JournalEntry, violating, counted bool) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	mj := j.merchantLocked(merchantID)
	if len(mj.ring) < j.size {
		mj.ring = append(mj.ring, e)
	} else {
		mj.ring[mj.next] = e
		mj.full = true
	}
	mj.next = (mj.next + 1) % j.size
	if !counted {
		return
	}
	mj.calls++
	if e.InjectedFault != "" {
		// Asked for by the client's own test: it covers the status the
		// client had to handle, and is never the client's violation.
		mj.injected++
		violating = false
	}
	if violating {
		mj.violating++
	}
	if e.Operation == "" {
		mj.unmatched++
		return
	}
	oc := mj.ops[e.Operation]
	if oc == nil {
		oc = &opCounts{statuses: map[int]int{}, violations: map[paymock.Violation]int{}}
		mj.ops[e.Operation] = oc
	}
	oc.calls++
	oc.statuses[e.Status]++
	if violating {
		oc.violating++
		for _, v := range e.Violations {
			oc.violations[v]++
		}
	}
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
	mj := j.merchants[merchantID]
	if mj == nil {
		return out, 0
	}
	total := 0
	n := len(mj.ring)
	for i := range n {
		e := mj.ring[(mj.next-1-i+n)%n]
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
	mj := j.merchants[merchantID]
	if mj == nil {
		return merchantJournal{}
	}
	cp := merchantJournal{calls: mj.calls, violating: mj.violating, unmatched: mj.unmatched, injected: mj.injected, ops: make(map[string]*opCounts, len(mj.ops))}
	for k, oc := range mj.ops {
		c := &opCounts{calls: oc.calls, violating: oc.violating, statuses: maps.Clone(oc.statuses), violations: maps.Clone(oc.violations)}
		cp.ops[k] = c
	}
	return cp
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
