// Tests of the statements sent together, against a real server.

package postgres

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/internal/storetest"
)

// TestGrouped_StatementsArrivingTogetherShareAPipeline creates and
// retrieves from many goroutines at once: each finds what it stored, in
// fewer pipelines than statements.
func TestGrouped_StatementsArrivingTogetherShareAPipeline(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	const workers, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				p := storetest.StoredPayment("acme", w*each+i)
				if err := s.Insert(ctx, p, -1); err != nil {
					errs <- err
					return
				}
				got, err := s.Get(ctx, "acme", p.ID)
				if err != nil {
					errs <- err
					return
				}
				if got.ID != p.ID || got.Amount != p.Amount {
					errs <- errors.New("retrieved " + got.ID + ", want " + p.ID)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pipes, stmts := s.grouped.pipelines.Load(), s.grouped.statements.Load()
	if stmts != 2*workers*each {
		t.Fatalf("%d statements sent, want %d", stmts, 2*workers*each)
	}
	if pipes >= stmts {
		t.Fatalf("%d statements in %d pipelines: none went together", stmts, pipes)
	}
	t.Logf("%d statements in %d pipelines", stmts, pipes)
}

// TestGrouped_AFailingStatementLeavesTheOthersTheirOwnOutcome sends three
// inserts as one pipeline, the middle one of a key already taken: it
// fails, alone, and the two others are committed.
func TestGrouped_AFailingStatementLeavesTheOthersTheirOwnOutcome(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE grouped_test (k integer PRIMARY KEY); INSERT INTO grouped_test VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	insert := func(k int) *groupedCall {
		return &groupedCall{ctx: ctx, merchantID: "acme", sql: `INSERT INTO grouped_test VALUES ($1)`, args: []any{k},
			read: func(rows pgx.Rows) error { rows.Close(); return rows.Err() }, done: make(chan struct{})}
	}
	calls := []*groupedCall{insert(1), insert(2), insert(3)}
	s.grouped.sendGroup(calls)
	var pg *pgconn.PgError
	if calls[0].err != nil || calls[2].err != nil {
		t.Fatalf("the valid inserts failed: %v, %v", calls[0].err, calls[2].err)
	}
	if !errors.As(calls[1].err, &pg) || pg.Code != "23505" {
		t.Fatalf("the insert of a taken key got %v, want its unique violation", calls[1].err)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM grouped_test WHERE k IN (1, 3)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d of the two valid inserts committed", n)
	}
	if got := s.grouped.pipelines.Load(); got != 4 {
		t.Fatalf("%d pipelines, want 4: the three together, then each alone", got)
	}
	for _, c := range calls {
		select {
		case <-c.done:
		default:
			t.Fatal("a call was never told its outcome")
		}
	}
}

// TestGrouped_ACallerThatGivesUpBeforeItsStatementIsSentSendsNothing
// queues a statement behind a pipeline in flight, then ends its context:
// the caller gets its context's error, and the statement is never sent.
func TestGrouped_ACallerThatGivesUpBeforeItsStatementIsSentSendsNothing(t *testing.T) {
	s, _ := openStore(t)
	g := &s.grouped
	g.mu.Lock()
	g.sending = true // a pipeline is in flight: what arrives waits
	g.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	result := make(chan error, 1)
	go func() {
		result <- g.run(ctx, "acme", `SELECT 1`, nil, func(rows pgx.Rows) error { rows.Close(); return rows.Err() })
	}()
	for {
		g.mu.Lock()
		n := len(g.pending)
		g.mu.Unlock()
		if n == 1 {
			break
		}
	}
	cancel()
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller got %v, want its context's end", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) != 0 {
		t.Fatalf("%d statements still wait to be sent", len(g.pending))
	}
	if n := g.statements.Load(); n != 0 {
		t.Fatalf("%d statements sent", n)
	}
	g.sending = false
}

// TestGrouped_APipelinesStatementsGoInTheOrderOfTheirMerchants sends
// statements of three merchants out of order: they run in the order of
// the merchants, so that two pipelines never lock two merchants' counts
// in opposite orders.
func TestGrouped_APipelinesStatementsGoInTheOrderOfTheirMerchants(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE grouped_order (n bigint GENERATED ALWAYS AS IDENTITY, merchant text)`); err != nil {
		t.Fatal(err)
	}
	insert := func(m string) *groupedCall {
		return &groupedCall{ctx: ctx, merchantID: m, sql: `INSERT INTO grouped_order (merchant) VALUES ($1)`, args: []any{m},
			read: func(rows pgx.Rows) error { rows.Close(); return rows.Err() }, done: make(chan struct{})}
	}
	s.grouped.sendGroup([]*groupedCall{insert("m2"), insert("m1"), insert("m3"), insert("m1")})
	rows, err := s.pool.Query(ctx, `SELECT merchant FROM grouped_order ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m1", "m1", "m2", "m3"}; !slices.Equal(got, want) {
		t.Fatalf("ran in the order %v, want %v", got, want)
	}
}

// TestGrouped_AStatementHeldUpHoldsUpNoOtherMerchant holds a create on a
// lock of the counts: another merchant's retrieve, queued behind its
// pipeline, goes in one beside it and is answered within its deadline.
func TestGrouped_AStatementHeldUpHoldsUpNoOtherMerchant(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	other := storetest.StoredPayment("bravo", 1)
	if err := s.Insert(ctx, other, -1); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE payment_counts IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() { held <- s.Insert(ctx, storetest.StoredPayment("acme", 2), -1) }()
	for s.grouped.statements.Load() < 2 { // the setup's insert, then the held one
		time.Sleep(time.Millisecond)
	}
	gctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if got, err := s.Get(gctx, "bravo", other.ID); err != nil || got.ID != other.ID {
		t.Fatalf("the other merchant's retrieve got %v, %v while a create was held up", got.ID, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-held; err != nil {
		t.Fatalf("the held create, once the lock was let go: %v", err)
	}
}

// TestGrouped_ACallersDeadlineEndsItsPipeline holds a statement on a lock
// past its caller's deadline: the caller is answered once the deadline
// and pgx's grace have passed, not when the lock is let go.
func TestGrouped_ACallersDeadlineEndsItsPipeline(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE grouped_held (k integer PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE grouped_held IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.grouped.run(cctx, "acme", `INSERT INTO grouped_held VALUES (1)`, nil,
		func(rows pgx.Rows) error { rows.Close(); return rows.Err() })
	took := time.Since(start)
	if err == nil {
		t.Fatal("the held insert succeeded under its lock")
	}
	if limit := 200*time.Millisecond + statementGrace + time.Second; took > limit {
		t.Fatalf("answered after %s, past the deadline and grace (%s)", took, limit)
	}
}

// TestGrouped_AnUnreachableDatabaseIsEveryStatementsOutcomeAtOnce makes
// connections hang: the statements of a pipeline that could not be sent
// get its error, and none is sent again alone (each would wait out the
// connect timeout in turn).
func TestGrouped_AnUnreachableDatabaseIsEveryStatementsOutcomeAtOnce(t *testing.T) {
	url := pgtest.URL(t)
	var hang atomic.Bool
	d := &net.Dialer{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if hang.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return d.DialContext(ctx, network, addr)
	}
	s, err := Open(context.Background(), Config{URL: url, DialFunc: dial, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	hang.Store(true)
	s.pool.Reset()
	const gets = 5
	var wg sync.WaitGroup
	took := make([]time.Duration, gets)
	for i := range gets {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			start := time.Now()
			if _, err := s.Get(ctx, "acme", "pay_x"); err == nil {
				t.Error("a retrieve succeeded with the database unreachable")
			}
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, d := range took {
		if d > 2500*time.Millisecond {
			t.Errorf("retrieve %d answered after %s: more than a connect timeout and a pipeline's", i, d)
		}
	}
	if n := s.grouped.statements.Load(); n > gets {
		t.Errorf("%d statements sent for %d retrieves: some were sent again alone", n, gets)
	}
}

// TestElapsedAtSend_IsTheRequestsTimeWhenTheStatementLeaves encodes the
// carried entry's elapsed time through pgx: it counts the time since it
// was taken, up to the statement's sending.
func TestElapsedAtSend_IsTheRequestsTimeWhenTheStatementLeaves(t *testing.T) {
	s, _ := openStore(t)
	e := elapsedAtSend{before: 5, at: time.Now().Add(-time.Second)}
	var got int64
	if err := s.pool.QueryRow(t.Context(), `SELECT $1::bigint`, e).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got < 1_000_005 || got > 60_000_000 {
		t.Fatalf("elapsed %d µs, want the 5 before and the second since", got)
	}
}

// TestGrouped_APanicReadingOneResultIsItsCallsErrorAlone reads one
// statement's result with a panic: that call gets an error, the others
// their results, and the process goes on (the pipeline's goroutine is
// outside any request's recovery).
func TestGrouped_APanicReadingOneResultIsItsCallsErrorAlone(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	var got [2]int
	call := func(i int, read func(rows pgx.Rows) error) *groupedCall {
		return &groupedCall{ctx: ctx, merchantID: "acme", sql: `SELECT $1::integer`, args: []any{i}, read: read, done: make(chan struct{})}
	}
	calls := []*groupedCall{
		call(1, func(rows pgx.Rows) (err error) {
			got[0], err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
			return err
		}),
		call(2, func(pgx.Rows) error { panic("a bug reading the result") }),
		call(3, func(rows pgx.Rows) (err error) {
			got[1], err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
			return err
		}),
	}
	s.grouped.sendGroup(calls)
	if calls[0].err != nil || calls[2].err != nil || got != [2]int{1, 3} {
		t.Fatalf("the other calls got %v, %v and %v", calls[0].err, calls[2].err, got)
	}
	if calls[1].err == nil || !strings.Contains(calls[1].err.Error(), "a bug reading the result") {
		t.Fatalf("the panicking call got %v, want an error naming the panic", calls[1].err)
	}
}
