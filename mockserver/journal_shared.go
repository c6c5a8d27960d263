// The request journal kept in a store every replica shares: what a
// JournalStore must do, and how the server writes and reads through one.

package mockserver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/paymock/paymock"
)

// JournalStore keeps merchants' request journals where every replica
// reads and writes them (package postgres implements it). A replica
// appends each request before its answer leaves, so that a report asked of
// any replica right after counts it.
type JournalStore interface {
	// AppendRequest stores one request as its merchant's newest.
	AppendRequest(ctx context.Context, merchantID string, r JournalRecord) error
	// TrimRequests keeps the merchant's newest keep requests and folds
	// the older ones into the counts of CountRequests, which so cover
	// every request ever appended.
	TrimRequests(ctx context.Context, merchantID string, keep int) error
	// ListRequests returns the requests among the merchant's newest
	// q.Keep that match q, newest first, from q.Offset and at most
	// q.Limit, and how many match in all.
	ListRequests(ctx context.Context, merchantID string, q JournalQuery) ([]JournalEntry, int, error)
	// CountRequests counts the merchant's counted requests: those still
	// listed and those trimmed.
	CountRequests(ctx context.Context, merchantID string) (JournalCounts, error)
}

// JournalRecord is one request as a JournalStore keeps it.
type JournalRecord struct {
	// Entry is what GET /_sandbox/requests shows.
	Entry JournalEntry
	// Counted says the request is a call of the service API, which the
	// report covers; control API calls are listed, not counted.
	Counted bool
	// Violating says the contract check refused the call. It is never
	// set for an answer a fault shaped (Entry.InjectedFault): that call
	// is the client's own test, not its violation.
	Violating bool
}

// JournalQuery selects a page of a merchant's journal.
type JournalQuery struct {
	// Keep is the journal's size: only the newest Keep requests are
	// listed, whatever more the store still holds.
	Keep int
	// Status, when not 0, lists only requests answered with it.
	Status int
	// Violations lists only requests with violations.
	Violations bool
	// Offset and Limit are the page, in matching requests.
	Offset, Limit int
}

// JournalCounts are a merchant's counted requests, grouped.
type JournalCounts struct {
	Calls      []JournalCallCount
	Violations []JournalViolationCount
}

// JournalCallCount is how many counted calls share an operation ("" when
// the call matched none), a status and whether they were violating and
// injected.
type JournalCallCount struct {
	Operation string
	Status    int
	Violating bool
	Injected  bool
	Calls     int
}

// JournalViolationCount is how often violating calls of an operation
// made one violation.
type JournalViolationCount struct {
	Operation string
	Violation paymock.Violation
	Calls     int
}

// journalWriteTimeout bounds the write of one entry: a database that
// stalls delays an answer by this much at most, and never fails it.
const journalWriteTimeout = 5 * time.Second

// sharedJournal is the store that keeps the journal for every replica:
// the payments' store when it can (as the lifecycle finds its DueStore);
// nil keeps the journal in this process.
func (s *Server) sharedJournal() JournalStore {
	js, _ := s.store.(JournalStore)
	return js
}

// sharedState is what a replica keeps of a shared journal: when it trims
// each merchant's, and whether writing to it is failing.
type sharedState struct {
	// appended counts, per merchant, this replica's appends since its
	// last trim (under the journal's lock).
	appended map[string]int
	// failing is set from the first failed write to the next good one:
	// an outage is logged once, not once per request.
	failing atomic.Bool
	// lost counts the entries not stored since the outage began.
	lost atomic.Int64
}

// trimEvery is how many appends of a merchant a replica makes between two
// trims: a tenth of the journal, at most 1,000, so the database holds at
// most that many more entries per replica than the journal shows, and the
// trim (a scan of the journal's size) costs each append little.
func trimEvery(size int) int { return min(max(size/10, 1), 1000) }

// trimDue counts one append of the merchant and says whether this one
// must trim: the first of each merchant on this replica does, so a
// restarted replica trims what it left behind.
func (j *requestJournal) trimDue(merchantID string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.shared.appended == nil {
		j.shared.appended = make(map[string]int)
	}
	n := j.shared.appended[merchantID]
	j.shared.appended[merchantID] = (n + 1) % trimEvery(j.size)
	return n == 0
}

// appendShared stores the request in the shared journal, trimming it now
// and then. A failure is logged and counted, never answered: the request
// itself was served. answered is the error the request was answered with,
// if any: when it says the store is unavailable, the entry is counted lost
// without a try, so that an outage delays no answer twice.
func (s *Server) appendShared(ctx context.Context, js JournalStore, merchantID string, r JournalRecord, answered error) {
	// The entry is written before the answer leaves, even when the client
	// has gone: the request was served and belongs in the report.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
	defer cancel()
	st := &s.journal.shared
	err := answered
	if !errors.Is(err, paymock.ErrUnavailable) {
		err = js.AppendRequest(ctx, merchantID, r)
	}
	if err != nil {
		st.lost.Add(1)
		if st.failing.CompareAndSwap(false, true) {
			s.log.WarnContext(ctx, "request journal entries not stored: the journal and the report miss them until the store is back",
				"merchant", merchantID, "error", err)
		}
		return
	}
	if st.failing.Load() && st.failing.CompareAndSwap(true, false) {
		s.log.InfoContext(ctx, "request journal entries stored again", "lost", st.lost.Swap(0))
	}
	if s.journal.trimDue(merchantID) {
		if err := js.TrimRequests(ctx, merchantID, s.journal.size); err != nil {
			// The next trim takes what this one left.
			s.log.WarnContext(ctx, "request journal not trimmed", "merchant", merchantID, "error", err)
		}
	}
}

// requests lists a merchant's journal, newest first: from the shared store
// when there is one.
func (s *Server) requests(ctx context.Context, merchantID string, f requestFilter, offset, limit int) ([]JournalEntry, int, error) {
	js := s.sharedJournal()
	if js == nil {
		items, total := s.journal.list(merchantID, f, offset, limit)
		return items, total, nil
	}
	items, total, err := js.ListRequests(ctx, merchantID, JournalQuery{Keep: s.journal.size, Status: f.status,
		Violations: f.violations, Offset: offset, Limit: limit})
	if err != nil {
		return nil, 0, fmt.Errorf("list the request journal: %w", err)
	}
	if items == nil {
		items = []JournalEntry{}
	}
	return items, total, nil
}

// report is a merchant's conformance report: of every replica's requests
// when the journal is shared.
func (s *Server) report(ctx context.Context, merchantID string) (Report, error) {
	js := s.sharedJournal()
	if js == nil {
		return s.buildReport(merchantID), nil
	}
	counts, err := js.CountRequests(ctx, merchantID)
	if err != nil {
		return Report{}, fmt.Errorf("count the request journal: %w", err)
	}
	return s.reportOf(countedJournal(counts)), nil
}

// countedJournal turns a store's counts into the report's counters, as
// record adds them up in memory.
func countedJournal(c JournalCounts) merchantJournal {
	mj := merchantJournal{ops: make(map[string]*opCounts)}
	op := func(name string) *opCounts {
		oc := mj.ops[name]
		if oc == nil {
			oc = &opCounts{statuses: map[int]int{}, violations: map[paymock.Violation]int{}}
			mj.ops[name] = oc
		}
		return oc
	}
	for _, cc := range c.Calls {
		mj.calls += cc.Calls
		if cc.Injected {
			mj.injected += cc.Calls
		}
		if cc.Violating {
			mj.violating += cc.Calls
		}
		if cc.Operation == "" {
			mj.unmatched += cc.Calls
			continue
		}
		oc := op(cc.Operation)
		oc.calls += cc.Calls
		oc.statuses[cc.Status] += cc.Calls
		if cc.Violating {
			oc.violating += cc.Calls
		}
	}
	for _, vc := range c.Violations {
		op(vc.Operation).violations[vc.Violation] += vc.Calls
	}
	return mj
}
