// Tests of the statements sent together, against a real server.

package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
		return &groupedCall{merchantID: "acme", sql: `INSERT INTO grouped_test VALUES ($1)`, args: []any{k},
			read: func(br pgx.BatchResults) error { _, err := br.Exec(); return err }, done: make(chan struct{})}
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
		result <- g.run(ctx, "acme", `SELECT 1`, nil, func(br pgx.BatchResults) error { _, err := br.Exec(); return err })
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
		return &groupedCall{merchantID: m, sql: `INSERT INTO grouped_order (merchant) VALUES ($1)`, args: []any{m},
			read: func(br pgx.BatchResults) error { _, err := br.Exec(); return err }, done: make(chan struct{})}
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
