// Tests of the PostgreSQL store against a real server: the conformance
// suite every paymock.Store passes, and what only a database can do wrong.

package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/internal/storetest"
)

// openStore opens a store on a fresh database, closed when t ends.
func openStore(t testing.TB) (*Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	s, err := Open(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, url
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) paymock.Store {
		s, _ := openStore(t)
		return s
	})
}

// TestStore_RequestValuesAreParameters stores and finds payments whose
// merchant and id hold what would break SQL built by concatenation.
func TestStore_RequestValuesAreParameters(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	for i, m := range []string{`o'brien`, `x"; DROP TABLE payments; --`, `back\slash`, `$1`, `%_`} {
		p := storetest.StoredPayment("acme", i)
		p.MerchantID, p.ID = m, "pay_"+m
		if err := s.Insert(ctx, p, -1); err != nil {
			t.Fatalf("%q: Insert: %v", m, err)
		}
		if got, err := s.Get(ctx, m, p.ID); err != nil || got.ID != p.ID || got.MerchantID != m {
			t.Errorf("%q: Get = %q/%q, %v", m, got.MerchantID, got.ID, err)
		}
		if got, err := s.Locate(ctx, p.ID); err != nil || got.MerchantID != m {
			t.Errorf("%q: Locate = %q, %v", m, got.MerchantID, err)
		}
		if items, total, err := s.List(ctx, m, 0, 10); err != nil || total != 1 || len(items) != 1 {
			t.Errorf("%q: List = %d items, total %d, %v", m, len(items), total, err)
		}
		if _, err := s.Update(ctx, m, p.ID, func(p *paymock.Payment) error { p.Status = paymock.StatusCompleted; return nil }); err != nil {
			t.Errorf("%q: Update: %v", m, err)
		}
		if id, err := s.CustomerID(ctx, m, m+"@example.com", func() string { return "cus_" + m }, -1); err != nil || id != "cus_"+m {
			t.Errorf("%q: CustomerID = %q, %v", m, id, err)
		}
	}
	// Nothing matched more than it should: the LIKE wildcards and the
	// quote found only their own rows, and the table is still there.
	if err := s.Reset(ctx, `%_`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM payments`).Scan(&n); err != nil || n != 4 {
		t.Errorf("payments left after one merchant's reset: %d, %v; want 4", n, err)
	}
}

func TestOpen_UnreachableDatabaseIsAClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	start := time.Now()
	_, err = Open(t.Context(), Config{URL: "postgres://paymock:secret@127.0.0.1:" + strconv.Itoa(port) + "/paymock?sslmode=disable"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	if want := "cannot reach the database at 127.0.0.1:" + strconv.Itoa(port) + "/paymock"; !strings.Contains(msg, want) {
		t.Errorf("error %q does not say %q", msg, want)
	}
	if strings.Contains(msg, "secret") {
		t.Errorf("error shows the password: %q", msg)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v to give up on a refused connection", d)
	}
}

func TestOpen_RefusesABadURL(t *testing.T) {
	_, err := Open(t.Context(), Config{URL: "postgres://paymock:secret@127.0.0.1:notaport/x"})
	if err == nil || errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open = %v, want a URL error without the password", err)
	}
}

// TestStore_DatabaseGoneWhileServingIsUnavailableThenRecovers cuts the
// store off its database (every connection ended, new ones refused), then
// lets it back in.
func TestStore_DatabaseGoneWhileServingIsUnavailableThenRecovers(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	storetest.Fill(t, s, "acme", 1)
	id := storetest.StoredPayment("acme", 0).ID
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	// The database cannot shut itself off: do it from the server's
	// default database.
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	allow := func(on bool) {
		t.Helper()
		if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s WITH ALLOW_CONNECTIONS %v`, pgx.Identifier{db}.Sanitize(), on)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1`, db); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		run  func() error
	}{
		{"Get", func() error { _, err := s.Get(ctx, "acme", id); return err }},
		{"List", func() error { _, _, err := s.List(ctx, "acme", 0, 10); return err }},
		{"Update", func() error {
			_, err := s.Update(ctx, "acme", id, func(*paymock.Payment) error { return nil })
			return err
		}},
		{"Insert", func() error { return s.Insert(ctx, storetest.StoredPayment("acme", 1), -1) }},
		{"Ping", func() error { return s.Ping(ctx) }},
	} {
		err := call.run()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s with the database gone = %v, want ErrUnavailable", call.name, err)
		}
		if errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("%s: a database that is gone reads as not found", call.name)
		}
	}
	allow(true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := s.Get(ctx, "acme", id)
		if err == nil && p.ID == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery within 10s of the database coming back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func benchStore(b *testing.B) *Store {
	s, _ := openStore(b)
	return s
}

// reportServerCPU starts counting the database's CPU time; the function
// returned, deferred, reports it per operation of the benchmark.
func reportServerCPU(b *testing.B, url string) func() {
	cpu := pgtest.ServerCPU(b, url)
	return func() {
		if used, ok := cpu(); ok && b.N > 0 {
			b.ReportMetric(float64(used.Microseconds())/float64(b.N), "pg-µs/op")
		}
	}
}

func BenchmarkStore_Insert(b *testing.B) {
	s, url := openStore(b)
	ctx := context.Background()
	i := 0
	defer reportServerCPU(b, url)()
	for b.Loop() {
		if err := s.Insert(ctx, storetest.StoredPayment("acme", i), -1); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkStore_Get(b *testing.B) {
	s, url := openStore(b)
	storetest.Fill(b, s, "acme", 1000)
	ctx := context.Background()
	i := 0
	defer reportServerCPU(b, url)()
	for b.Loop() {
		if _, err := s.Get(ctx, "acme", storetest.StoredPayment("acme", i%1000).ID); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkStore_ListPageOf10At1000Stored(b *testing.B) {
	s, url := openStore(b)
	storetest.Fill(b, s, "acme", 1000)
	storetest.Fill(b, s, "globex", 10)
	ctx := context.Background()
	defer reportServerCPU(b, url)()
	for b.Loop() {
		items, total, err := s.List(ctx, "acme", 50, 10)
		if err != nil || len(items) != 10 || total != 1000 {
			b.Fatalf("List: %d items, total %d, %v", len(items), total, err)
		}
	}
}

// TestList_TotalIsExactWhenCreatesRaceResets: the total comes from
// payment_counts, not a count of the rows, and must still match them when
// creates on several connections race resets of their merchant.
func TestList_TotalIsExactWhenCreatesRaceResets(t *testing.T) {
	ctx := t.Context()
	s, _ := openStore(t)
	const writers, each = 6, 40
	errs := make(chan error, writers+1)
	done := make(chan struct{})
	go func() { // resets until the writers are done
		defer func() { errs <- nil }()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.Reset(ctx, "acme"); err != nil {
				errs <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				p := storetest.StoredPayment("acme", w*each+i)
				if err := s.Insert(ctx, p, -1); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	// What the last reset left, and then some more on a known count.
	for i := range 3 {
		if err := s.Insert(ctx, storetest.StoredPayment("acme", writers*each+i), -1); err != nil {
			t.Fatal(err)
		}
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM payments WHERE merchant_id = 'acme'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	_, total, err := s.List(ctx, "acme", 0, 1)
	if err != nil || total != rows || rows < 3 {
		t.Errorf("List total = %d, %v; the merchant has %d payments", total, err, rows)
	}
	if err := s.Reset(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if items, total, err := s.List(ctx, "acme", 0, 10); err != nil || total != 0 || len(items) != 0 {
		t.Errorf("after a reset: %d items, total %d, %v", len(items), total, err)
	}
}

// TestInsert_AnalyzesTheTablesItGrows: PostgreSQL's statistics of a new
// database are those of empty tables until autovacuum comes; a replica
// has them analyzed as it fills payments, so that the plans each
// connection keeps are made for tables of their size.
func TestInsert_AnalyzesTheTablesItGrows(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	s, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	analyzed := func() (n int) {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_user_tables
			WHERE relname IN ('payments', 'payment_counts') AND analyze_count > 0`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Autovacuum would analyze them too, in its own time: not here.
	if _, err := s.pool.Exec(ctx, `ALTER TABLE payments SET (autovacuum_enabled = false);
		ALTER TABLE payment_counts SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	storetest.Fill(t, s, "acme", 99)
	if n := analyzed(); n != 0 {
		t.Fatalf("after 99 inserts, %d tables analyzed", n)
	}
	if err := s.Insert(ctx, storetest.StoredPayment("acme", 99), -1); err != nil {
		t.Fatal(err)
	}
	s.Close() // waits for the analysis the 100th insert started
	if n := analyzed(); n != 2 {
		t.Errorf("after 100 inserts, %d of the 2 tables analyzed", n)
	}
}
