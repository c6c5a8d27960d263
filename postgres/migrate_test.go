// Tests of the migrations: from nothing, from the previous version, by two
// replicas at once, and the refusal of a schema from a newer paymock.

package postgres

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/internal/storetest"
)

// applied lists the versions recorded in schema_migrations, in order.
func applied(t *testing.T, url string) []int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(t.Context(), `SELECT version FROM schema_migrations ORDER BY version`)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

// allVersions is 1..n for the embedded migrations.
func allVersions(t *testing.T) []int {
	t.Helper()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(all))
	for i := range all {
		out[i] = i + 1
	}
	return out
}

// fillAsBefore stores n of storetest's payments of merchantID as a paymock
// before payment_counts (migration 11) did: a plain INSERT each.
func fillAsBefore(t *testing.T, s *Store, merchantID string, n int) {
	t.Helper()
	for i := range n {
		p := storetest.StoredPayment(merchantID, i)
		doc, err := encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.pool.Exec(t.Context(), `INSERT INTO payments (merchant_id, id, status, expires_at, payment)
			VALUES ($1, $2, $3, $4, $5)`, p.MerchantID, p.ID, string(p.Status), p.ExpiresAt, doc); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
}

func TestMigrations_AreNumberedWithoutGaps(t *testing.T) {
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	// Two at least, so that "the previous version" is a real schema.
	if len(all) < 2 {
		t.Fatalf("%d migrations", len(all))
	}
	for i, m := range all {
		if m.version != i+1 || strings.TrimSpace(m.sql) == "" {
			t.Errorf("migration %d is %s, version %d", i+1, m.name, m.version)
		}
	}
}

func TestOpen_MigratesAnEmptyDatabase(t *testing.T) {
	s, url := openStore(t)
	if got, want := applied(t, url), allVersions(t); !slices.Equal(got, want) {
		t.Errorf("applied %v, want %v", got, want)
	}
	// The schema works: a payment goes in and comes out.
	storetest.Fill(t, s, "acme", 1)
	if _, err := s.Get(t.Context(), "acme", storetest.StoredPayment("acme", 0).ID); err != nil {
		t.Error(err)
	}
	// Opening again applies nothing more.
	again, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if got := applied(t, url); !slices.Equal(got, allVersions(t)) {
		t.Errorf("second Open: applied %v", got)
	}
}

func TestOpen_MigratesADatabaseAtThePreviousVersion(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	all := allVersions(t)
	previous := len(all) - 1
	old, err := open(ctx, Config{URL: url}, previous)
	if err != nil {
		t.Fatal(err)
	}
	if got := applied(t, url); !slices.Equal(got, all[:previous]) {
		t.Fatalf("at the previous version, applied %v", got)
	}
	// Data written under the previous schema survives the migration, and
	// is counted.
	fillAsBefore(t, old, "acme", 3)
	old.Close()

	s, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := applied(t, url); !slices.Equal(got, all) {
		t.Errorf("after Open, applied %v, want %v", got, all)
	}
	items, total, err := s.List(ctx, "acme", 0, 10)
	if err != nil || total != 3 || len(items) != 3 || items[0].ID != storetest.StoredPayment("acme", 2).ID {
		t.Errorf("payments of before the migration: %d items, total %d, %v", len(items), total, err)
	}
	if _, err := s.Update(ctx, "acme", items[0].ID, func(p *paymock.Payment) error { p.Status = paymock.StatusCompleted; return nil }); err != nil {
		t.Error(err)
	}
}

func TestOpen_TwoReplicasOpeningAnEmptyDatabaseTogether(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 4
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			s, err := Open(context.Background(), Config{URL: url})
			errs[i] = err
			if err == nil {
				s.Close()
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if got := applied(t, url); !slices.Equal(got, allVersions(t)) {
		t.Errorf("applied %v, want each version once: %v", got, allVersions(t))
	}
}

func TestOpen_RefusesASchemaFromANewerPaymock(t *testing.T) {
	ctx := t.Context()
	s, url := openStore(t)
	newer := len(allVersions(t)) + 1
	if _, err := s.pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')`, newer); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, Config{URL: url})
	if err == nil || !strings.Contains(err.Error(), "newer than this paymock") {
		t.Errorf("Open = %v, want a refusal of the newer schema", err)
	}
}
