// Tests of the throwaway cluster: it starts, each URL is its own database,
// and databases are dropped when their test ends.

package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestURL_GivesEachTestItsOwnEmptyDatabase(t *testing.T) {
	ctx := t.Context()
	var names []string
	for range 2 {
		conn, err := pgx.Connect(ctx, pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var name string
		var tables int
		if err := conn.QueryRow(ctx, `SELECT current_database(), (SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&name, &tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("%s has %d tables, want an empty database", name, tables)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if names[0] == names[1] {
		t.Errorf("two URLs name the same database %s", names[0])
	}
}

func TestURL_DropsTheDatabaseAtTheEndOfTheTest(t *testing.T) {
	ctx := t.Context()
	var name string
	t.Run("user", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: the drop must not wait for it.
		if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if name == "" || n != 0 {
		t.Errorf("database %q still exists after its test (%d)", name, n)
	}
}

// TestServerCPU_CountsTheBackendsWork: work a backend of the database
// does shows in ServerCPU, and a database left idle shows none of it.
func TestServerCPU_CountsTheBackendsWork(t *testing.T) {
	ctx := t.Context()
	busy, idle := pgtest.URL(t), pgtest.URL(t)
	conn, err := pgx.Connect(ctx, busy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	busyCPU, idleCPU := pgtest.ServerCPU(t, busy), pgtest.ServerCPU(t, idle)
	// Millions of rows: far more than /proc's 10 ms tick of CPU.
	if _, err := conn.Exec(ctx, `SELECT count(*) FROM generate_series(1, 5000000)`); err != nil {
		t.Fatal(err)
	}
	used, ok := busyCPU()
	if !ok {
		t.Skip("the server's processes cannot be read here")
	}
	if used <= 0 {
		t.Errorf("the busy database's backends used %s, want some", used)
	}
	if used, _ := idleCPU(); used != 0 {
		t.Errorf("the idle database's backends used %s, want none", used)
	}
}
