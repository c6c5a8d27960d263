// Cutting a test's database off, as a failover does, to test an outage.

package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// CutOff refuses new connections to the database at url and ends the open
// ones, as a database that fails over does. The returned function lets
// connections in again; so does the end of the test, whichever comes first.
func CutOff(t testing.TB, url string) (restore func()) {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	ident := pgx.Identifier{db}.Sanitize()
	if _, err := admin.Exec(t.Context(), `ALTER DATABASE `+ident+` WITH ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		if _, err := admin.Exec(context.Background(), `ALTER DATABASE `+ident+` WITH ALLOW_CONNECTIONS true`); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(restore)
	if _, err := admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, db); err != nil {
		t.Fatal(err)
	}
	return restore
}
