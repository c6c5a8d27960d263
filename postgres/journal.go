// The request journal shared by the replicas: append, trim, list, count.

package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
)

var _ paymock.JournalStore = (*Store)(nil)

// journalWriteTimeout bounds the write of one entry: a database that
// stalls delays an answer by this much at most, and never fails it.
const journalWriteTimeout = 5 * time.Second

// AppendRequest implements paymock.JournalStore. Appends that arrive
// while another is being written wait and go together in the next INSERT
// (journalWriter), so that concurrent requests share a round trip; each
// still returns only once its own entry is stored.
func (s *Store) AppendRequest(ctx context.Context, merchantID string, r paymock.JournalRecord) error {
	// Written even when the client has gone, for the report.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
	defer cancel()
	row, err := journalRowOf(merchantID, r)
	if err != nil {
		return err
	}
	row.done = make(chan error, 1)
	s.journal.add(ctx, s, row)
	select {
	case err = <-row.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return check("append to the request journal of "+merchantID, err)
	}
	return nil
}

// journalRowOf is r as a row of request_journal.
func journalRowOf(merchantID string, r paymock.JournalRecord) (*journalRow, error) {
	e := r.Entry
	e.Violations = nil // a column of their own
	entry, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode the journal entry %s: %w", e.ID, err)
	}
	row := &journalRow{merchantID: merchantID, status: e.Status, operation: e.Operation, counted: r.Counted,
		violating: r.Violating, injected: e.InjectedFault != "", entry: string(entry)}
	if len(r.Entry.Violations) > 0 {
		b, err := json.Marshal(r.Entry.Violations)
		if err != nil {
			return nil, fmt.Errorf("postgres: encode the violations of %s: %w", e.ID, err)
		}
		row.violations = new(string(b))
	}
	return row, nil
}

// journalRow is one entry waiting to be written, and where its outcome goes.
type journalRow struct {
	merchantID                   string
	status                       int
	operation                    string
	counted, violating, injected bool
	entry                        string
	violations                   *string
	done                         chan error
}

// maxJournalBatch bounds the entries of one INSERT.
const maxJournalBatch = 256

// journalWriter groups the appends of this replica: one writer at a time
// writes all that are waiting in one statement. An append that finds
// none writing writes its own at once, so a lone request waits for
// nothing more than its INSERT.
type journalWriter struct {
	mu      sync.Mutex
	writing bool
	waiting []*journalRow
}

// add queues r and, when no write runs, writes what waits.
func (w *journalWriter) add(ctx context.Context, s *Store, r *journalRow) {
	w.mu.Lock()
	w.waiting = append(w.waiting, r)
	if w.writing {
		w.mu.Unlock()
		return
	}
	w.writing = true
	w.mu.Unlock()
	w.write(ctx, s)
}

// write writes what waits, batch after batch, until nothing does. Its
// caller's entry is in the first batch; later batches are written in the
// background, so that no caller waits for others' entries.
func (w *journalWriter) write(ctx context.Context, s *Store) {
	w.mu.Lock()
	n := min(len(w.waiting), maxJournalBatch)
	batch := w.waiting[:n:n]
	w.waiting = w.waiting[n:]
	w.mu.Unlock()
	s.insertJournal(ctx, batch)
	w.mu.Lock()
	more := len(w.waiting) > 0
	w.writing = more
	w.mu.Unlock()
	if more {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), journalWriteTimeout)
			defer cancel()
			w.write(ctx, s)
		}()
	}
}

// insertJournalRows inserts the rows of arrays of equal length. The
// arrays are taken apart in the select list, which steps through them
// together, rather than by unnest in FROM: that one collects its rows in
// a tuplestore first, whose memory PostgreSQL then hands back to the
// system at the end of every statement (and takes again at the next).
const insertJournalRows = `INSERT INTO request_journal
	(merchant_id, status, operation, has_violations, counted, violating, injected, entry, violations)
	SELECT unnest($1::text[]), unnest($2::integer[]), unnest($3::text[]), unnest($4::boolean[]), unnest($5::boolean[]),
		unnest($6::boolean[]), unnest($7::boolean[]), unnest($8::json[]), unnest($9::json[])`

// insertJournal writes rows in one statement, in their order, and tells
// each its outcome. A batch the database refuses for a reason other than
// its connection is written again one entry at a time, so that an entry
// it cannot take costs no other its place.
func (s *Store) insertJournal(ctx context.Context, rows []*journalRow) {
	if len(rows) == 1 {
		r := rows[0]
		_, err := s.pool.Exec(ctx, `INSERT INTO request_journal
			(merchant_id, status, operation, has_violations, counted, violating, injected, entry, violations)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			r.merchantID, r.status, r.operation, r.violations != nil, r.counted, r.violating, r.injected, r.entry, r.violations)
		r.done <- err
		return
	}
	var (
		merchants, ops, entries, violations []*string
		statuses                            []int
		has, counted, violating, injected   []bool
	)
	for _, r := range rows {
		merchants, ops, entries = append(merchants, &r.merchantID), append(ops, &r.operation), append(entries, &r.entry)
		violations, statuses = append(violations, r.violations), append(statuses, r.status)
		has, counted = append(has, r.violations != nil), append(counted, r.counted)
		violating, injected = append(violating, r.violating), append(injected, r.injected)
	}
	_, err := s.pool.Exec(ctx, insertJournalRows, merchants, statuses, ops, has, counted, violating, injected, entries, violations)
	if err != nil && !unavailable(err) && ctx.Err() == nil {
		for _, r := range rows {
			s.insertJournal(ctx, []*journalRow{r})
		}
		return
	}
	for _, r := range rows {
		r.done <- err
	}
}

// trimRequests deletes a merchant's requests older than its newest $2 and,
// in the same statement, adds them to the counts: a request is counted
// either as a row or in the counts, never both nor neither, and two
// replicas trimming at once delete (and count) each row once. Rows are
// locked in seq order before they are deleted, and the counts are added
// in key order, so that two trims never wait on each other's rows in
// opposite orders: deleting in whatever order its plan read them (an
// index's, or the table's), one trim of a merchant and another of the
// same merchant on another replica were seen to deadlock.
//
// The rows locked are deleted by their ctid, a TID scan: joined on seq
// instead, PostgreSQL hashed every row of the merchant's journal to find
// them again, and the trim took four times as long (39 against 9 ms for
// 1,700 rows of 10,700, which a trim every 1,000 requests spreads as
// 30 µs on each). A row a correction (ReplaceRequest) changed after the
// statement began is locked in its new version, which the statement's
// snapshot does not see: it is neither deleted nor counted, and the next
// trim takes it.
//
// Of the violations, an operation's first $3 distinct ones (by the seq of
// the request that first made each, and its place among that request's
// violations) have a row each, and the others are added to its row whose
// violation is the empty text, which no violation's json text is: a
// client making up a new violation with every request adds no rows past
// those. Two trims of one merchant at the same moment each count the rows
// there were when it began, so each may add up to $3 new ones: the rows
// kept stay bounded, and CountRequests tells apart $3 whatever the rows.
const trimRequests = `WITH cut AS (
	SELECT seq FROM request_journal WHERE merchant_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1
), doomed AS (
	SELECT j.ctid FROM request_journal j, cut WHERE j.merchant_id = $1 AND j.seq <= cut.seq
	ORDER BY j.seq FOR UPDATE OF j
), gone AS (
	DELETE FROM request_journal j WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM doomed)) AND j.merchant_id = $1
	RETURNING j.seq, j.operation, j.status, j.counted, j.violating, j.injected, j.violations
), calls AS (
	INSERT INTO request_journal_calls AS c (merchant_id, operation, status, violating, injected, calls)
	SELECT $1, operation, status, violating, injected, count(*) FROM gone WHERE counted
	GROUP BY operation, status, violating, injected ORDER BY operation, status, violating, injected
	ON CONFLICT (merchant_id, operation, status, violating, injected) DO UPDATE SET calls = c.calls + excluded.calls
), made AS (
	SELECT g.operation, x.v::text AS violation, count(*) AS calls, min(g.seq::numeric * 65536 + x.i) AS first
	FROM gone g CROSS JOIN LATERAL json_array_elements(g.violations) WITH ORDINALITY AS x(v, i)
	WHERE g.counted AND g.violating AND g.operation <> ''
	GROUP BY g.operation, x.v::text
), kept AS (
	SELECT operation, md5(violation) AS digest FROM request_journal_violations WHERE merchant_id = $1 AND violation <> ''
), placed AS (
	SELECT m.operation, m.calls,
		CASE WHEN k.digest IS NOT NULL
			OR (SELECT count(*) FROM kept WHERE kept.operation = m.operation)
				+ row_number() OVER (PARTITION BY m.operation, k.digest IS NULL ORDER BY m.first) <= $3
		THEN m.violation ELSE '' END AS violation
	FROM made m LEFT JOIN kept k ON k.operation = m.operation AND k.digest = md5(m.violation)
)
INSERT INTO request_journal_violations AS v (merchant_id, operation, violation, calls)
SELECT $1, operation, violation, sum(calls) FROM placed
GROUP BY operation, violation ORDER BY operation, md5(violation)
ON CONFLICT (merchant_id, operation, md5(violation)) DO UPDATE SET calls = v.calls + excluded.calls`

// TrimRequests implements paymock.JournalStore.
func (s *Store) TrimRequests(ctx context.Context, merchantID string, keep int) error {
	if keep < 0 {
		return fmt.Errorf("postgres: trim the request journal to %d requests: want 0 or more", keep)
	}
	// A trim runs on a request's way out: bounded as an append is.
	ctx, cancel := context.WithTimeout(ctx, journalWriteTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, trimRequests, merchantID, keep, paymock.MaxDistinctViolations); err != nil {
		return check("trim the request journal of "+merchantID, err)
	}
	return nil
}

// listRequests pages through the requests matching the filters among the
// merchant's newest $2, reading the primary key (which carries the
// filters' columns) to find them and the rows of the page only. The count
// comes in every row, and in a row of its own (with no entry) when the
// page is past the last match.
const listRequests = `WITH hit AS (
	SELECT seq FROM (
		SELECT seq, status, has_violations FROM request_journal
		WHERE merchant_id = $1 ORDER BY seq DESC LIMIT $2
	) live
	WHERE ($3::integer = 0 OR status = $3) AND (NOT $4::boolean OR has_violations)
)
SELECT t.total, j.entry, j.violations
FROM (SELECT count(*) AS total FROM hit) t
LEFT JOIN LATERAL (SELECT seq FROM hit ORDER BY seq DESC OFFSET $5 LIMIT $6) p ON true
LEFT JOIN request_journal j ON j.merchant_id = $1 AND j.seq = p.seq
ORDER BY p.seq DESC`

// ListRequests implements paymock.JournalStore.
func (s *Store) ListRequests(ctx context.Context, merchantID string, q paymock.JournalQuery) ([]paymock.JournalEntry, int, error) {
	if q.Keep < 0 || q.Offset < 0 || q.Limit < 0 {
		return nil, 0, fmt.Errorf("postgres: list the request journal: keep %d, offset %d, limit %d: want 0 or more", q.Keep, q.Offset, q.Limit)
	}
	rows, err := s.pool.Query(ctx, listRequests, merchantID, q.Keep, q.Status, q.Violations, q.Offset, q.Limit)
	if err != nil {
		return nil, 0, check("list the request journal of "+merchantID, err)
	}
	out := []paymock.JournalEntry{}
	total := 0
	var entry, violations []byte
	_, err = pgx.ForEachRow(rows, []any{&total, &entry, &violations}, func() error {
		if entry == nil {
			return nil
		}
		var e paymock.JournalEntry
		if err := json.Unmarshal(entry, &e); err != nil {
			return fmt.Errorf("a stored journal entry: %w", err)
		}
		if violations != nil {
			if err := json.Unmarshal(violations, &e.Violations); err != nil {
				return fmt.Errorf("the violations of %s: %w", e.ID, err)
			}
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, 0, check("list the request journal of "+merchantID, err)
	}
	return out, total, nil
}

// countRequests adds up, in one snapshot, the counts of trimmed requests
// and the requests still in the journal: the calls first (kind 0), then
// the violations (kind 1), each violation as the json text of one, or the
// empty text for those not told apart. Per operation, the violations with
// a row of their own come first (more rows than $2 only from trims at the
// same moment, or a database counted before the bound), then those only
// in the journal, in the order first made, and all past the first $2 are
// counted as the empty text.
const countRequests = `SELECT 0, operation, status, violating, injected, sum(calls)::bigint, ''
FROM (
	SELECT operation, status, violating, injected, calls FROM request_journal_calls WHERE merchant_id = $1
	UNION ALL
	SELECT operation, status, violating, injected, 1 FROM request_journal WHERE merchant_id = $1 AND counted
) c
GROUP BY operation, status, violating, injected
UNION ALL
SELECT 1, operation, 0, true, false, sum(calls)::bigint, CASE WHEN nth <= $2 THEN violation ELSE '' END
FROM (
	SELECT operation, violation, sum(calls) AS calls,
		row_number() OVER (PARTITION BY operation
			ORDER BY violation = '', bool_or(kept) DESC, min(first), sum(calls) DESC, md5(violation)) AS nth
	FROM (
		SELECT operation, violation, calls, true AS kept, NULL::numeric AS first
		FROM request_journal_violations WHERE merchant_id = $1
		UNION ALL
		SELECT j.operation, x.v::text, 1, false, j.seq::numeric * 65536 + x.i
		FROM (
			SELECT seq FROM request_journal
			WHERE merchant_id = $1 AND counted AND violating AND has_violations AND operation <> ''
			OFFSET 0 -- found in the primary key: only violating rows are read
		) bad
		JOIN request_journal j ON j.merchant_id = $1 AND j.seq = bad.seq
		CROSS JOIN LATERAL json_array_elements(j.violations) WITH ORDINALITY AS x(v, i)
	) v
	GROUP BY operation, violation
) ranked
GROUP BY operation, CASE WHEN nth <= $2 THEN violation ELSE '' END`

// CountRequests implements paymock.JournalStore.
func (s *Store) CountRequests(ctx context.Context, merchantID string) (paymock.JournalCounts, error) {
	rows, err := s.pool.Query(ctx, countRequests, merchantID, paymock.MaxDistinctViolations)
	if err != nil {
		return paymock.JournalCounts{}, check("count the request journal of "+merchantID, err)
	}
	var c paymock.JournalCounts
	var (
		kind                int
		op, violation       string
		status              int
		violating, injected bool
		calls               int64
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &op, &status, &violating, &injected, &calls, &violation}, func() error {
		if kind == 0 {
			c.Calls = append(c.Calls, paymock.JournalCallCount{Operation: op, Status: status,
				Violating: violating, Injected: injected, Calls: int(calls)})
			return nil
		}
		if violation == "" {
			c.Unlisted = append(c.Unlisted, paymock.JournalUnlistedCount{Operation: op, Violations: int(calls)})
			return nil
		}
		var v paymock.Violation
		if err := json.Unmarshal([]byte(violation), &v); err != nil {
			return fmt.Errorf("a stored violation: %w", err)
		}
		c.Violations = append(c.Violations, paymock.JournalViolationCount{Operation: op, Violation: v, Calls: int(calls)})
		return nil
	})
	if err != nil {
		return paymock.JournalCounts{}, check("count the request journal of "+merchantID, err)
	}
	return c, nil
}

// ForgetRequests implements paymock.JournalStore: the journal is every
// replica's, and another may still serve the merchant, so a replica that
// forgets an idle merchant leaves it, as it leaves its payments.
func (s *Store) ForgetRequests(ctx context.Context, merchantID string) error { return nil }

// replaceRequest overwrites the newest row of merchant $1 whose entry is
// request $2's. It looks among the newest rows only: the server replaces
// an entry right after its request's statement wrote it.
const replaceRequest = `UPDATE request_journal SET status = $3, operation = $4, has_violations = $5, counted = $6,
	violating = $7, injected = $8, entry = $9, violations = $10
WHERE merchant_id = $1 AND seq = (
	SELECT seq FROM (
		SELECT seq, entry FROM request_journal WHERE merchant_id = $1 ORDER BY seq DESC LIMIT 1000
	) newest WHERE entry->>'id' = $2 ORDER BY seq DESC LIMIT 1
)`

// ReplaceRequest implements paymock.JournalStore. The counts are the
// rows', so overwriting the row counts r in place of was.
func (s *Store) ReplaceRequest(ctx context.Context, merchantID string, was, r paymock.JournalRecord) error {
	if was.Entry.ID != r.Entry.ID {
		return fmt.Errorf("postgres: replace request %s of the request journal with %s: want the same request", was.Entry.ID, r.Entry.ID)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
	defer cancel()
	row, err := journalRowOf(merchantID, r)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, replaceRequest, merchantID, r.Entry.ID, row.status, row.operation, row.violations != nil,
		row.counted, row.violating, row.injected, row.entry, row.violations)
	if err != nil {
		return check("replace request "+r.Entry.ID+" of the request journal of "+merchantID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: replace request %s of the request journal of %s: %w", r.Entry.ID, merchantID, paymock.ErrNotFound)
	}
	return nil
}
