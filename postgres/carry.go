// Journal entries carried by the statements of creates, retrieves and
// lists (paymock.JournalCarry): one round trip for a request, not two.

package postgres

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/paymock/paymock"
)

// durationKey is where an encoded journal entry's duration goes: the
// statement that carries the entry writes its digits, once it knows its
// own time. Inside a JSON string every quote is escaped, so the key's
// quotes and colon are found nowhere else in the entry.
const durationKey = `"duration_ms":`

// carriedEntry is the journal entry a statement writes with its work.
type carriedEntry struct {
	carry paymock.JournalCarry
	row   *journalRow
	// head and tail are the entry's JSON around its duration's digits;
	// elapsed is the request's time before the statement.
	head, tail string
	elapsed    elapsedAtSend
}

// elapsedAtSend is a request's time in µs up to when pgx encodes it as
// the statement's parameter, that is, when the statement leaves: the
// time it waited for its pipeline (grouped.go) is the request's too.
type elapsedAtSend struct {
	before int64     // µs before at
	at     time.Time // when before was taken
}

// Int64Value implements pgtype.Int64Valuer.
func (e elapsedAtSend) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: e.before + time.Since(e.at).Microseconds(), Valid: true}, nil
}

// carriedOf is the entry ctx offers its store call, or nil. An entry
// that cannot be encoded is left to the server's own append, which
// reports why.
func carriedOf(ctx context.Context) *carriedEntry {
	carry := paymock.JournalCarryOf(ctx)
	if carry == nil {
		return nil
	}
	merchantID, r := carry.JournalRecord()
	ms := r.Entry.DurationMS
	r.Entry.DurationMS = 0
	row, err := journalRowOf(merchantID, r)
	if err != nil {
		return nil
	}
	i := strings.Index(row.entry, durationKey+"0")
	if i < 0 || math.IsNaN(ms) || ms < 0 || ms > 1<<40 {
		return nil
	}
	i += len(durationKey)
	return &carriedEntry{carry: carry, row: row, head: row.entry[:i], tail: row.entry[i+1:], elapsed: elapsedAtSend{before: int64(math.Round(ms * 1000)), at: time.Now()}}
}

// args are the entry's parameters after the work's, in the order of
// carriedEntrySQL's.
func (c *carriedEntry) args(work []any) []any {
	r := c.row
	return append(slices.Clip(work), r.merchantID, r.status, r.operation, r.violations != nil, r.counted, r.violating, r.injected,
		c.head, c.elapsed, c.tail, r.violations)
}

// carriedEntrySQL is a WITH list's item that inserts the entry of args,
// its parameters numbered from first, for each row of the item done
// (the statement's work, one row when it succeeded). The entry's duration
// is the request's time before the statement and the statement's own up
// to this row: both differences of one clock each, so the database's
// clock and the replica's need not agree; the database's, a wall clock,
// may step back (then 0). extract gives a double before PostgreSQL 14,
// which round(x, 3) does not take: hence the cast.
func carriedEntrySQL(first int) string {
	p := func(i int) string { return "$" + strconv.Itoa(first+i) }
	return `entry AS (INSERT INTO request_journal
	(merchant_id, status, operation, has_violations, counted, violating, injected, entry, violations)
	SELECT ` + p(0) + `::text, ` + p(1) + `::integer, ` + p(2) + `::text, ` + p(3) + `::boolean, ` + p(4) + `::boolean, ` +
		p(5) + `::boolean, ` + p(6) + `::boolean, (` + p(7) + `::text || round((` + p(8) +
		`::bigint + greatest(0, extract(epoch FROM clock_timestamp() - statement_timestamp())::numeric) * 1000000) / 1000, 3)::text || ` +
		p(9) + `::text)::json, ` + p(10) + `::json FROM done)`
}

// carriedStatements are the statements of Insert, Get and List that carry
// a journal entry, made once per Store.
type carriedStatements struct {
	insert, get, list string
}

func newCarriedStatements() carriedStatements {
	with := func(work string, params int, rest string) string {
		return "WITH done AS (" + work + "), " + carriedEntrySQL(params+1) + "\n" + rest
	}
	return carriedStatements{
		insert: with(insertPaymentRow, 6, countInsertedPayment),
		get:    with(getPayment, 2, `SELECT payment FROM done`),
		list:   with(`SELECT 1`, 3, listPayments),
	}
}

// carryOrNot runs a statement of the store: with ctx's carried entry,
// when it offers one, and should the database refuse that statement,
// again without the entry. An entry the journal cannot take (its table
// gone, a value it refuses) so never fails its request: the server's own
// append of it then fails, and counts it lost. Each statement is one
// transaction, so the refused one changed nothing. run runs sql with args
// and says whether its work was done (a payment inserted or found): only
// then was the entry written.
func (s *Store) carryOrNot(ctx context.Context, sql, carriedSQL string, args []any, run func(sql string, args []any) (bool, error)) error {
	entry := carriedOf(ctx)
	if entry == nil {
		_, err := run(sql, args)
		return err
	}
	done, err := run(carriedSQL, entry.args(args))
	var pg *pgconn.PgError
	// A unique violation is the work's own (a payment id used already):
	// the statement without the entry would meet it again.
	if errors.As(err, &pg) && pg.Code != "23505" && ctx.Err() == nil {
		// Once a process: a database that refuses one such statement
		// refuses them all, each costing a round trip more.
		if s.carryRefused.CompareAndSwap(false, true) {
			s.log.Warn("postgres: a statement carrying its request's journal entry was refused; it ran again without it, and such requests take one more round trip while this lasts",
				"error", err)
		}
		_, err = run(sql, args)
		return err
	}
	if err == nil && done {
		entry.carry.Carried()
	}
	return err
}
