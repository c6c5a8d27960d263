// The request journal and the conformance counters: what each merchant's
// client did, what it was answered, and where it broke the contract, kept
// in the backend's paymock.JournalStore.

package mockserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/everyn"
)

// DefaultJournalSize is how many requests a merchant's journal keeps.
const DefaultJournalSize = 10000

// JournalEntry is one request as the journal shows it.
type JournalEntry = paymock.JournalEntry

// merchantJournal is one merchant's counters, for the report.
type merchantJournal struct {
	ops       map[string]*OperationCounts
	calls     int
	violating int
	unmatched int
	injected  int
}

// requestJournal writes and reads every merchant's journal through the
// store, trimming each now and then; it keeps only counts of appends,
// a fixed number of them however many merchants come.
type requestJournal struct {
	size  int
	store paymock.JournalStore
	// appended counts this process's appends since a merchant's last
	// trim, in a fixed table: an idle merchant of open mode costs nothing
	// here.
	appended *everyn.Counter
	// failing is set from the first failed write to the next good one:
	// an outage is logged once, not once per request.
	failing atomic.Bool
	// lost counts the entries not stored since the outage began.
	lost atomic.Int64
}

// newJournal returns a journal keeping size requests per merchant in
// store: the default for 0, none at all (nil) for a negative size.
func newJournal(size int, store paymock.JournalStore) (*requestJournal, error) {
	if size < 0 {
		return nil, nil
	}
	if store == nil {
		return nil, errors.New("mockserver: no store for the request journal (Config.Journal)")
	}
	if size == 0 {
		size = DefaultJournalSize
	}
	return &requestJournal{size: size, store: store, appended: everyn.New(trimEvery(size))}, nil
}

// trimEvery is how many appends of a merchant a replica makes between two
// trims: a tenth of the journal, at most 1,000, so the database holds at
// most that many more entries per replica than the journal shows, and the
// trim (a scan of the journal's size) costs each append little.
func trimEvery(size int) int { return min(max(size/10, 1), 1000) }

// trimDue counts one append of the merchant and says whether this one
// must trim: one in trimEvery of the merchant's appends, and any append
// that finds its slot last used by another merchant, which took the count
// over. So a merchant makes at most trimEvery appends between two trims
// however many share its slot, and its first append on this replica
// trims, so that a restarted replica trims what it left behind.
func (j *requestJournal) trimDue(merchantID string) bool { return j.appended.Due(merchantID) }

// append stores the request in its merchant's journal, trimming it now
// and then. A failure is logged and counted, never answered: the request
// itself was served. answered is the error the request was answered with,
// if any: when it says the store is unavailable, the entry is counted lost
// without a try, so that an outage delays no answer twice.
func (j *requestJournal) append(ctx context.Context, log *slog.Logger, merchantID string, r paymock.JournalRecord, answered error) {
	if j == nil {
		return
	}
	// The entry is written before the answer leaves, even when the client
	// has gone (paymock.JournalStore.AppendRequest says how).
	err := answered
	if !errors.Is(err, paymock.ErrUnavailable) {
		err = j.store.AppendRequest(ctx, merchantID, r)
	}
	if err != nil {
		j.failed(ctx, log, merchantID, err)
		return
	}
	j.stored(ctx, log, merchantID)
}

// replace puts r in place of was, the entry of its request a store call
// carried, which the answer turned out other than.
func (j *requestJournal) replace(ctx context.Context, log *slog.Logger, merchantID string, was, r paymock.JournalRecord) {
	if err := j.store.ReplaceRequest(ctx, merchantID, was, r); err != nil {
		log.WarnContext(ctx, "request journal entry not corrected: it shows the answer the request would have had",
			"merchant", merchantID, "request", r.Entry.ID, "error", err)
	}
}

// failed logs the first of the entries lost in an outage and counts them.
func (j *requestJournal) failed(ctx context.Context, log *slog.Logger, merchantID string, err error) {
	j.lost.Add(1)
	if j.failing.CompareAndSwap(false, true) {
		log.WarnContext(ctx, "request journal entries not stored: the journal and the report miss them until the store is back",
			"merchant", merchantID, "error", err)
	}
}

// stored notes an entry of the merchant stored, ending an outage, and
// trims the merchant's journal when one is due.
func (j *requestJournal) stored(ctx context.Context, log *slog.Logger, merchantID string) {
	if j.failing.Load() && j.failing.CompareAndSwap(true, false) {
		log.InfoContext(ctx, "request journal entries stored again", "lost", j.lost.Swap(0))
	}
	if j.trimDue(merchantID) {
		if err := j.store.TrimRequests(context.WithoutCancel(ctx), merchantID, j.size); err != nil {
			// The next trim takes what this one left.
			log.WarnContext(ctx, "request journal not trimmed", "merchant", merchantID, "error", err)
		}
	}
}

// forget drops what the store holds of a merchant gone idle in this
// process alone.
func (j *requestJournal) forget(ctx context.Context, merchantID string) error {
	return j.store.ForgetRequests(ctx, merchantID)
}

// requestFilter selects journal entries.
type requestFilter struct {
	status     int  // 0: any
	violations bool // only requests the contract refused
}

// requests lists a merchant's journal, newest first.
func (s *Server) requests(ctx context.Context, merchantID string, f requestFilter, offset, limit int) ([]JournalEntry, int, error) {
	items, total, err := s.journal.store.ListRequests(ctx, merchantID, paymock.JournalQuery{Keep: s.journal.size, Status: f.status,
		Violations: f.violations, Offset: offset, Limit: limit})
	if err != nil {
		return nil, 0, fmt.Errorf("list the request journal: %w", err)
	}
	if items == nil {
		items = []JournalEntry{}
	}
	for i := range items {
		// An entry stored before the bound (a PostgreSQL journal outlives
		// an upgrade) is shown within it, as the contract says.
		items[i].Violations = paymock.BoundViolations(items[i].Violations)
	}
	return items, total, nil
}

// report is a merchant's conformance report: of every replica's requests
// when the journal is shared.
func (s *Server) report(ctx context.Context, merchantID string) (Report, error) {
	counts, err := s.journal.store.CountRequests(ctx, merchantID)
	if err != nil {
		return Report{}, fmt.Errorf("count the request journal: %w", err)
	}
	r := s.reportOf(countedJournal(counts))
	if r.UnmatchedCalls > 0 {
		// Only the journal knows their paths: its violating entries.
		bad, _, err := s.journal.store.ListRequests(ctx, merchantID, paymock.JournalQuery{Keep: s.journal.size,
			Violations: true, Limit: s.journal.size})
		if err != nil {
			return Report{}, fmt.Errorf("list the request journal: %w", err)
		}
		r.Unmatched = listUnmatched(bad)
	}
	return r, nil
}

// countedJournal turns a store's counts into the report's counters.
func countedJournal(c paymock.JournalCounts) merchantJournal {
	mj := merchantJournal{ops: make(map[string]*OperationCounts)}
	op := func(name string) *OperationCounts {
		oc := mj.ops[name]
		if oc == nil {
			oc = NewOperationCounts()
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
		oc.Calls += cc.Calls
		oc.Statuses[cc.Status] += cc.Calls
		if cc.Violating {
			oc.ViolatingCalls += cc.Calls
		}
	}
	for _, vc := range c.Violations {
		b := paymock.BoundViolation(vc.Violation) // counted before the bound, perhaps
		v := ReportViolation{Param: b.Param, Code: b.Code, Message: b.Message}
		op(vc.Operation).Violations[v] += vc.Calls
	}
	for _, u := range c.Unlisted {
		op(u.Operation).Unlisted += u.Violations
	}
	return mj
}

func durationMS(d time.Duration) float64 { return paymock.JournalMillis(d.Microseconds()) }

// journalRequest records a finished exchange in its merchant's journal. A
// request refused before its key was checked belongs to the key's
// merchant when the key is good; with no good key it belongs to nobody.
// An entry a store call carried (journalcarry.go) is stored already: it
// is replaced only when the answer turned out other than it says.
func (s *Server) journalRequest(c *echo.Context, x *exchange) {
	m := x.caller
	if m == nil {
		return
	}
	status := x.rec.status
	if x.reset {
		status = 0
	}
	rec := s.journalRecord(c, x, status, x.variant)
	ctx := c.Request().Context()
	if x.carry.carried {
		if !sameRecord(x.carry.rec, rec) {
			s.journal.replace(ctx, s.log, m.ID, x.carry.rec, rec)
		}
		s.journal.stored(ctx, s.log, m.ID)
		return
	}
	s.journal.append(ctx, s.log, m.ID, rec, x.err)
}

// journalRecord is the exchange's journal entry, as answered with status
// in the wire form variant.
func (s *Server) journalRecord(c *echo.Context, x *exchange, status int, variant string) paymock.JournalRecord {
	r := c.Request()
	if x.at == "" {
		at, err := s.clock.Now(r.Context(), x.caller.ID)
		if err != nil {
			at = time.Now() // the clock's store failed this request already
		}
		x.at = paymock.FormatTime(at)
	}
	e := JournalEntry{
		ID:            s.requestID(r.Context(), x),
		At:            x.at,
		Method:        contract.ShortPath(x.method), // any token up to the header limit, from the client
		Path:          contract.ShortPath(r.URL.Path),
		Query:         contract.ShortPath(r.URL.RawQuery),
		Status:        status,
		DurationMS:    durationMS(time.Since(x.start)),
		Variant:       variant,
		InjectedFault: x.fault,
		InjectedBy:    contract.ShortPath(x.faultBy),
	}
	if x.route != nil {
		e.Operation = x.route.OperationID()
	}
	if x.refused && x.err != nil {
		// The entry lists what the answer did, bounded alike: it is kept
		// for the journal's 10,000 requests, on every backend. A refusal
		// answered as another error lists the contract's own words.
		why := x.err
		if x.refusal != nil {
			why = x.refusal
		}
		_, de := classify(why)
		de = de.Bounded()
		e.Violations = de.Violations
		if len(e.Violations) == 0 {
			e.Violations = []paymock.Violation{{Param: de.Param, Code: de.Code, Message: de.Message}}
		}
	}
	return paymock.JournalRecord{Entry: e, Counted: x.doc == s.docs.Service, Violating: x.refused && x.fault == ""}
}
