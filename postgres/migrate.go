// The embedded schema migrations and how Open applies them.

package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key held while migrating: any
// constant no other application on the database uses ("paymock" in ASCII).
const migrationLock int64 = 0x7061796d6f636b

// migration is one numbered step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the embedded files, which must be numbered 1, 2, 3...
// with no gap, as NNNN_what.sql.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration %s: want a name like 0001_what.sql", name)
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("migration %s: want version %d next", name, len(out)+1)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	return out, nil
}

// migrate brings the database's schema up to version upTo (every known
// migration when upTo is 0) and returns the version it is at afterwards.
func migrate(ctx context.Context, pool *pgxpool.Pool, upTo int, log *slog.Logger) (version int, err error) {
	all, err := migrations()
	if err != nil {
		return 0, err
	}
	if upTo == 0 || upTo > len(all) {
		upTo = len(all)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, check("migrating", err)
	}
	// The lock is the session's: it must be released on this connection,
	// and a connection whose release failed must not go back to the pool
	// still holding it.
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock); uerr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return 0, check("waiting for the migration lock", err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return 0, check("creating schema_migrations", err)
	}
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&version); err != nil {
		return 0, check("reading the schema version", err)
	}
	if version > len(all) {
		return version, fmt.Errorf("postgres: the database's schema is at version %d, newer than this paymock knows (%d): run a paymock at least as new as the one that migrated it", version, len(all))
	}
	for _, m := range all[version:upTo] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// No arguments: pgx sends the file as one simple query, so it
			// may hold several statements.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return version, check("applying migration "+m.name, err)
		}
		version = m.version
		log.Info("applied database migration", "version", m.version, "name", m.name)
	}
	return version, nil
}
