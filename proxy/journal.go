// The proxy's journal: each caller's exchanges and counters, and the
// contract report made from them in the form of the server's report.

package proxy

import (
	"sync"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/mockserver"
)

// DefaultJournalSize is how many exchanges a caller's journal keeps.
const DefaultJournalSize = mockserver.DefaultJournalSize

// Entry is one exchange as the journal shows it.
type Entry struct {
	ID         string      `json:"id"`
	At         string      `json:"at"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Query      string      `json:"query"`
	Operation  string      `json:"operation_id,omitempty"`
	Status     int         `json:"status"`
	DurationMS float64     `json:"duration_ms"`
	Violations []Violation `json:"violations,omitempty"`
}

// callerLog is one caller's ring of recent exchanges and its counters,
// which cover every exchange.
type callerLog struct {
	ring      []Entry
	next      int
	calls     int
	violating int
	unmatched int
	ops       map[string]*mockserver.OperationCounts
}

// Journal holds every caller's exchanges, bounded per caller. A caller is
// a bearer key, kept only as its digest.
type Journal struct {
	size    int
	doc     *contract.Document
	mu      sync.Mutex
	callers map[string]*callerLog
}

// NewJournal returns a journal keeping size exchanges per caller (0:
// DefaultJournalSize) whose report covers doc's operations.
func NewJournal(doc *contract.Document, size int) *Journal {
	if size <= 0 {
		size = DefaultJournalSize
	}
	return &Journal{size: size, doc: doc, callers: map[string]*callerLog{}}
}

// Record adds one exchange of a caller.
func (j *Journal) Record(caller string, e Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	cl := j.callers[caller]
	if cl == nil {
		cl = &callerLog{ops: map[string]*mockserver.OperationCounts{}}
		j.callers[caller] = cl
	}
	if len(cl.ring) < j.size {
		cl.ring = append(cl.ring, e)
	} else {
		cl.ring[cl.next] = e
		cl.next = (cl.next + 1) % j.size
	}
	cl.calls++
	if len(e.Violations) > 0 {
		cl.violating++
	}
	if e.Operation == "" {
		cl.unmatched++
		return
	}
	oc := cl.ops[e.Operation]
	if oc == nil {
		oc = mockserver.NewOperationCounts()
		cl.ops[e.Operation] = oc
	}
	oc.Calls++
	oc.Statuses[e.Status]++
	if len(e.Violations) > 0 {
		oc.ViolatingCalls++
	}
	for _, v := range e.Violations {
		k := mockserver.ReportViolation{Side: v.Side, Param: v.Param, Code: v.Code, Message: v.Message}
		// A violation names what was sent (an unknown field's name): a
		// client, or an upstream, that makes up new ones would grow the
		// map for good. The first MaxDistinctViolations of an operation
		// are told apart, the rest counted together, as paymock's own
		// journal does.
		if _, ok := oc.Violations[k]; !ok && len(oc.Violations) >= paymock.MaxDistinctViolations {
			oc.Unlisted++
			continue
		}
		oc.Violations[k]++
	}
}

// Filter selects journal entries, as the server's journal does.
type Filter struct {
	Status     int  // 0: any
	Violations bool // only exchanges that broke the contract
}

func (f Filter) match(e Entry) bool {
	return (f.Status == 0 || e.Status == f.Status) && (!f.Violations || len(e.Violations) > 0)
}

// Entries are a caller's exchanges that f selects, newest first, after
// offset, at most limit, and how many match in all.
func (j *Journal) Entries(caller string, f Filter, offset, limit int) ([]Entry, int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := []Entry{}
	cl := j.callers[caller]
	if cl == nil {
		return out, 0
	}
	total := 0
	n := len(cl.ring)
	for i := range n {
		e := cl.ring[(cl.next-1-i+2*n)%n]
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

// Report is a caller's contract report, in the server's form, each
// violation marked with its side.
func (j *Journal) Report(caller string) mockserver.Report {
	j.mu.Lock()
	defer j.mu.Unlock()
	cl := j.callers[caller]
	if cl == nil {
		cl = &callerLog{}
	}
	r := mockserver.Report{Calls: cl.calls, ViolatingCalls: cl.violating, UnmatchedCalls: cl.unmatched}
	mockserver.FillReport(&r, j.doc.Operations(), cl.ops)
	return r
}
