// The store: Open, and the paymock.Store methods on PostgreSQL.

package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/paymock/paymock"
)

// Config says which database to use and how.
type Config struct {
	// URL is a PostgreSQL connection URL or key=value string, as libpq
	// reads it: postgres://user:password@host:5432/paymock?sslmode=disable.
	URL string
	// MaxConns bounds the pool; 0 means DefaultPoolSize (see the
	// package doc).
	MaxConns int32
	// ConnectTimeout bounds each attempt to connect; 0 means the URL's
	// connect_timeout, or 5 seconds without one.
	ConnectTimeout time.Duration
	// Logger receives the migrations applied; nil discards.
	Logger *slog.Logger
	// DialFunc opens each connection to the server; nil means pgx's
	// own. Tests wrap the connection to count round trips.
	DialFunc pgconn.DialFunc
}

// statementGrace is how long a statement already sent may still take
// once its context is done. A request's context ends when its client
// goes away; pgx's default then cuts the connection at once, and the next
// statement pays for a new one (a backend forked, its caches cold), so
// that a client closing each of its requests early made the database
// start a backend for every other one. A statement of a request takes
// milliseconds: given this grace it ends, and its connection is kept. A
// context's own deadline is met this much late at most; a statement sent
// in one pipeline with others (grouped.go), this much after the latest
// of their deadlines.
const statementGrace = time.Second

// DefaultMaxConns is the most connections a replica's pool opens when
// neither Config.MaxConns nor the URL says.
const DefaultMaxConns = 10

// minDefaultConns is the fewest: a statement, a journal write, a sweep
// and a webhook claim can each hold one at the same moment.
const minDefaultConns = 4

// DefaultPoolSize is the pool size when neither Config.MaxConns nor the
// URL's pool_max_conns says: two connections for each core this process
// may use, from 4 to DefaultMaxConns. Statements that write contend for
// PostgreSQL's locks on the same index pages and the WAL; more backends
// running them than twice the cores (here shared with the database, as
// on a CI runner or a laptop) make each cost more CPU without serving
// more: on 2 cores busy with other work too, 4 connections served about
// a third more requests than 10, at less CPU each (docs/performance.md).
func DefaultPoolSize(procs int) int32 {
	return int32(min(max(2*procs, minDefaultConns), DefaultMaxConns))
}

// Store keeps paymock's state in one PostgreSQL database. It is safe for
// concurrent use, by any number of replicas on the same database.
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	// advancing bounds the connections LockAdvance opens outside the
	// pool, so that many advances at once cannot use up the server's.
	advancing chan struct{}
	// clockReads shares one query among the reads of a merchant's clock
	// that arrive together (clockreads.go).
	clockReads *coalescedReads
	// changes holds keys, fault rules, clocks and customers while every
	// replica's change of them is heard (changes.go).
	changes *changes
	// decoded spares decoding a payment read again unchanged (record.go).
	decoded decodedPayments
	// journal groups the appends to the request journal (journal.go).
	journal journalWriter
	// grouped sends the statements of creates, retrieves and lists that
	// arrive together in one pipeline (grouped.go).
	grouped groupedStatements
	// carriedSQL are the statements that carry a request's journal entry
	// (carry.go); carryRefused is set once the database refused one.
	carriedSQL   carriedStatements
	carryRefused atomic.Bool
	// inserted counts this replica's inserts, for analyzeGrowing.
	inserted atomic.Int64
	// background is the work Close waits for.
	background sync.WaitGroup
	// hearing, when set, runs as the listener takes in each notification,
	// before it acts on it: a test holds a notification there, as a
	// replica slow to hear one would.
	hearing atomic.Pointer[func(merchantID string)]
	// stop ends the listening for changes; listening is closed when it
	// has.
	stop      context.CancelFunc
	listening chan struct{}
}

var _ paymock.Store = (*Store)(nil)

// Open connects to the database, brings its schema up to date and returns
// the store. A database that cannot be reached is an error wrapping
// ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	return open(ctx, cfg, 0)
}

// open is Open migrating only up to version upTo (0: all), so that tests
// can make a database of an earlier version.
func open(ctx context.Context, cfg Config, upTo int) (*Store, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// pgx's message names the problem and hides any password.
		return nil, fmt.Errorf("postgres: reading the database URL: %w", err)
	}
	switch {
	case cfg.MaxConns > 0:
		pc.MaxConns = cfg.MaxConns
	case !strings.Contains(cfg.URL, "pool_max_conns"): // the URL's own pool_max_conns stands
		pc.MaxConns = DefaultPoolSize(runtime.GOMAXPROCS(0))
	}
	switch {
	case cfg.ConnectTimeout > 0:
		pc.ConnConfig.ConnectTimeout = cfg.ConnectTimeout
	case pc.ConnConfig.ConnectTimeout == 0:
		pc.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	if cfg.DialFunc != nil {
		pc.ConnConfig.DialFunc = cfg.DialFunc
	}
	pc.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: statementGrace}
	}
	where := fmt.Sprintf("%s:%d/%s", pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, check("cannot reach the database at "+where, err)
	}
	version, err := migrate(ctx, pool, upTo, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	log.Debug("database ready", "database", where, "schema_version", version, "max_conns", pc.MaxConns)
	s := &Store{pool: pool, log: log, advancing: make(chan struct{}, maxAdvanceConns), carriedSQL: newCarriedStatements()}
	s.grouped.pool, s.grouped.maxSenders = pool, int(pc.MaxConns)
	s.clockReads = &coalescedReads{query: s.queryClock}
	s.changes = newChanges()
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop, s.listening = stop, make(chan struct{})
	go func() {
		defer close(s.listening)
		s.listen(lctx)
	}()
	return s, nil
}

// Backend is the store as a paymock.Backend, every concern on this
// database.
func (s *Store) Backend() paymock.Backend {
	return paymock.Backend{
		Payments:  s,
		Ready:     s.Ping,
		Merchants: s,
		Clocks:    s,
		Due:       s,
		Advances:  s,
		Outbox:    s,
		Events:    s,
		Faults:    s,
		Journal:   s,
		Sequences: s,
		// Replicas share the database: one that forgets a merchant leaves
		// its rows to the others (see paymock.Backend.Release).
		Release: func(context.Context, string) error { return nil },
	}
}

// Close closes every connection, waiting for those in use.
func (s *Store) Close() {
	s.background.Wait()
	s.stop()
	<-s.listening
	s.pool.Close()
}

// Ping checks that the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return check("ping", err)
	}
	return nil
}

// insertPayment inserts one payment and adds it to its merchant's count
// (migration 11), in the slot of this connection, unless $6 >= 0 and the
// merchant's count is $6 already: then it inserts nothing and affects no
// row. The check is in the statement, so the cap costs no round trip.
//
// The count is read from the statement's snapshot, and creates on other
// connections update other slots without waiting for each other, so
// creates of one merchant running at the same moment on several
// connections may each see room for one more: the cap is passed by at
// most the merchant's concurrent creates less one, so at most the
// connections of every replica less one. An exact cap would need the
// merchant's creates to queue on one lock, which the slots exist to avoid.
const insertPayment = `WITH done AS (` + insertPaymentRow + `) ` + countInsertedPayment

// insertPaymentRow and countInsertedPayment are insertPayment's two
// parts, the second counting the rows of the first, which it names done.
const (
	insertPaymentRow = `INSERT INTO payments (merchant_id, id, status, expires_at, payment)
	SELECT $1, $2, $3, $4, $5
	WHERE $6::bigint < 0 OR (SELECT coalesce(sum(n), 0) FROM payment_counts WHERE merchant_id = $1) < $6::bigint
	RETURNING 1`
	countInsertedPayment = `INSERT INTO payment_counts AS c (merchant_id, slot, n) SELECT $1, pg_backend_pid() % 16, 1 FROM done
	ON CONFLICT (merchant_id, slot) DO UPDATE SET n = c.n + 1`
)

// Insert implements paymock.Store. The limit may be passed by concurrent
// inserts of the merchant (see insertPayment).
func (s *Store) Insert(ctx context.Context, p paymock.Payment, limit int) error {
	doc, err := encode(p)
	if err != nil {
		return err
	}
	var tag pgconn.CommandTag
	err = s.carryOrNot(ctx, insertPayment, s.carriedSQL.insert,
		[]any{p.MerchantID, p.ID, string(p.Status), p.ExpiresAt, doc, int64(limit)},
		func(sql string, args []any) (bool, error) {
			err := s.grouped.run(ctx, p.MerchantID, sql, args, func(rows pgx.Rows) error {
				rows.Close()
				tag = rows.CommandTag()
				return rows.Err()
			})
			return tag.RowsAffected() > 0, err
		})
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" { // unique_violation
		return fmt.Errorf("insert %s: id already used", p.ID)
	}
	if err != nil {
		return check("insert "+p.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("insert %s: %w", p.ID, paymock.ErrLimitReached)
	}
	s.analyzeGrowing()
	return nil
}

// analyzeGrowing has PostgreSQL analyze payments and payment_counts at
// this replica's 100th and 1,000th insert. PostgreSQL plans a statement
// that a connection runs often once, from the statistics of the moment,
// and keeps the plan until the statistics change: planned while the
// tables of a new database were nearly empty, a list page read every
// payment of the merchant and sorted them, rather than the newest few
// through payments_newest_first. Autovacuum would bring the statistics,
// but only after a minute or more; past that, it keeps them current.
func (s *Store) analyzeGrowing() {
	const analyzeTimeout = 10 * time.Second
	if n := s.inserted.Add(1); n != 100 && n != 1_000 {
		return
	}
	s.background.Go(func() {
		// Bounded, as Close waits for it.
		ctx, cancel := context.WithTimeout(context.Background(), analyzeTimeout)
		defer cancel()
		if _, err := s.pool.Exec(ctx, `ANALYZE payments, payment_counts`); err != nil {
			s.log.Warn("postgres: analyzing the payments", "error", err)
		}
	})
}

// getPayment reads one payment of a merchant.
const getPayment = `SELECT payment FROM payments WHERE merchant_id = $1 AND id = $2`

// Get implements paymock.Store.
func (s *Store) Get(ctx context.Context, merchantID, id string) (paymock.Payment, error) {
	if !storable(id) {
		return paymock.Payment{}, notFound(id, pgx.ErrNoRows)
	}
	var doc []byte
	err := s.carryOrNot(ctx, getPayment, s.carriedSQL.get, []any{merchantID, id}, func(sql string, args []any) (bool, error) {
		err := s.grouped.run(ctx, merchantID, sql, args, func(rows pgx.Rows) (err error) {
			doc, err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[[]byte])
			return err
		})
		return err == nil, err
	})
	if err != nil {
		return paymock.Payment{}, notFound(id, err)
	}
	return s.decoded.decode(merchantID, id, doc)
}

// Locate implements paymock.Store. Ids are unique in practice (they are
// random); should two merchants share one, the newer payment is found, as
// in the memory store.
func (s *Store) Locate(ctx context.Context, id string) (paymock.Payment, error) {
	if !storable(id) {
		return paymock.Payment{}, notFound(id, pgx.ErrNoRows)
	}
	var merchantID string
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, payment FROM payments WHERE id = $1
		ORDER BY seq DESC LIMIT 1`, id).Scan(&merchantID, &doc)
	if err != nil {
		return paymock.Payment{}, notFound(id, err)
	}
	return s.decoded.decode(merchantID, id, doc)
}

func notFound(id string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("payment %s: %w", id, paymock.ErrNotFound)
	}
	return check("reading payment "+id, err)
}

// listPayments pages through merchant $1's payments, newest first, with
// their total in a row of its own (no id), in one statement so that the
// total and the page come from the same snapshot. It is a plain UNION ALL
// of two index reads rather than a join, and sorts nothing. Nothing
// orders the union's rows, so the reader puts the page in order.
//
// Each parameter is read through a subquery, (SELECT $n), so that
// PostgreSQL keeps one plan per connection rather than planning every
// call. It plans a prepared statement afresh while a plan for the call's
// values looks cheaper than the plan for any values: with the merchant
// and the page size in view, a custom plan always did (a page of 10 of a
// known merchant against 10% of an average one), so two lists in three
// were planned again, which cost PostgreSQL more than running them. A
// subquery's value is unknown to the planner either way, so both plans
// cost the same, and the generic one wins: the same index reads
// (TestList_PlanIsKeptAndReadsOnlyThePage).
const listPayments = `SELECT coalesce(sum(n), 0), NULL, NULL, NULL FROM payment_counts WHERE merchant_id = (SELECT $1::text)
UNION ALL (
	SELECT NULL, seq, id, payment FROM payments WHERE merchant_id = (SELECT $1::text)
	ORDER BY seq DESC OFFSET (SELECT $2::bigint) LIMIT (SELECT $3::bigint)
)`

// List implements paymock.Store.
func (s *Store) List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("list: negative offset or limit")
	}
	type listed struct {
		seq int64
		id  string
		doc []byte
	}
	var (
		page  []listed
		total int64
	)
	err := s.carryOrNot(ctx, listPayments, s.carriedSQL.list, []any{merchantID, int64(offset), int64(limit)},
		func(sql string, args []any) (bool, error) {
			err := s.grouped.run(ctx, merchantID, sql, args, func(rows pgx.Rows) error {
				page, total = make([]listed, 0, min(limit, 100)), 0
				var n, seq *int64
				var id *string
				var doc []byte
				_, err := pgx.ForEachRow(rows, []any{&n, &seq, &id, &doc}, func() error {
					if id == nil { // the total's row
						total = *n
					} else {
						page = append(page, listed{*seq, *id, doc})
					}
					return nil
				})
				return err
			})
			return err == nil, err
		})
	if err != nil {
		return nil, 0, check("listing payments", err)
	}
	slices.SortFunc(page, func(a, b listed) int { return cmp.Compare(b.seq, a.seq) })
	out := make([]paymock.Payment, len(page))
	for i, l := range page {
		p, err := s.decoded.decode(merchantID, l.id, l.doc)
		if err != nil {
			return nil, 0, err
		}
		out[i] = p
	}
	return out, int(total), nil
}

// CustomerID implements paymock.Store. Emails are matched without regard
// to case. newID is called only when the email is new; should two replicas
// race on a new email, both get the id that was stored first.
func (s *Store) CustomerID(ctx context.Context, merchantID, email string, newID func() string, limit int) (string, error) {
	key := strings.ToLower(email)
	ck := customerKey{merchantID, key}
	if id, ok := cached(s.changes, s.changes.customers, ck); ok {
		return id, nil
	}
	gen := s.changes.begin()
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM customers WHERE merchant_id = $1 AND email = $2`,
		merchantID, key).Scan(&id)
	if err == nil {
		put(s.changes, gen, s.changes.customers, ck, id)
		return id, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", check("reading a customer", err)
	}
	// The payment cap is checked in the insert, as insertPayment does.
	if _, err := s.pool.Exec(ctx, `INSERT INTO customers (merchant_id, email, id)
		SELECT $1, $2, $3
		WHERE $4::bigint < 0 OR (SELECT coalesce(sum(n), 0) FROM payment_counts WHERE merchant_id = $1) < $4::bigint
		ON CONFLICT (merchant_id, email) DO NOTHING`, merchantID, key, newID(), int64(limit)); err != nil {
		return "", check("adding a customer", err)
	}
	// Read back rather than trust our insert: another writer may have won.
	err = s.pool.QueryRow(ctx, `SELECT id FROM customers WHERE merchant_id = $1 AND email = $2`,
		merchantID, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("customer of %s: %w", merchantID, paymock.ErrLimitReached)
	}
	if err != nil {
		return "", check("reading a customer", err)
	}
	put(s.changes, gen, s.changes.customers, ck, id)
	return id, nil
}

// Update implements paymock.Store: the row stays locked from read to
// write, so updates of one payment from any replica apply one at a time.
func (s *Store) Update(ctx context.Context, merchantID, id string, fn func(*paymock.Payment) error) (paymock.Payment, error) {
	return s.update(ctx, merchantID, id, fn, nil)
}

// update is Update running after, when not nil, in the same transaction
// once the payment is written: an error from it undoes the update.
func (s *Store) update(ctx context.Context, merchantID, id string, fn func(*paymock.Payment) error,
	after func(pgx.Tx, paymock.Payment) error) (paymock.Payment, error) {
	if !storable(id) {
		return paymock.Payment{}, notFound(id, pgx.ErrNoRows)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return paymock.Payment{}, check("updating payment "+id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op once committed
	var doc []byte
	err = tx.QueryRow(ctx, `SELECT payment FROM payments WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
		merchantID, id).Scan(&doc)
	if err != nil {
		return paymock.Payment{}, notFound(id, err)
	}
	before, err := decode(merchantID, id, doc)
	if err != nil {
		return paymock.Payment{}, err
	}
	// fn gets its own decoded copy, so that nothing it changes, pointers
	// included, reaches the payment returned when it fails.
	p, _ := decode(merchantID, id, doc)
	if err := fn(&p); err != nil {
		return before, err
	}
	p.ID, p.MerchantID = id, merchantID
	if doc, err := encode(p); err != nil {
		return before, err
	} else if _, err := tx.Exec(ctx, `UPDATE payments SET status = $3, expires_at = $4, payment = $5
		WHERE merchant_id = $1 AND id = $2`, merchantID, id, string(p.Status), p.ExpiresAt, doc); err != nil {
		return before, check("updating payment "+id, err)
	}
	if after != nil {
		if err := after(tx, p); err != nil {
			return before, check("updating payment "+id, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return before, check("updating payment "+id, err)
	}
	return p, nil
}

// resetPayments deletes merchant $1's payments and takes them from its
// count. It subtracts what it deleted rather than deleting the count: a
// payment inserted while it runs may be counted already and not deleted.
const resetPayments = `WITH gone AS (
	DELETE FROM payments WHERE merchant_id = $1 RETURNING 1
) INSERT INTO payment_counts AS c (merchant_id, slot, n)
	SELECT $1, pg_backend_pid() % 16, -count(*) FROM gone
	ON CONFLICT (merchant_id, slot) DO UPDATE SET n = c.n + excluded.n`

// Reset implements paymock.Store. A payment inserted while the reset runs
// is either deleted with the rest or kept whole, and counted as it is.
func (s *Store) Reset(ctx context.Context, merchantID string) error {
	err := s.changedIn(ctx, merchantID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, resetPayments, merchantID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM customers WHERE merchant_id = $1`, merchantID)
		return err
	})
	if err != nil {
		return check("resetting merchant "+merchantID, err)
	}
	return nil
}

// storable reports whether PostgreSQL can hold a text value at all: it
// refuses NUL and bytes that are not UTF-8. A path id like that is no
// payment's id, so a look-up of it is simply not found, never an error.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
