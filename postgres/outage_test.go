// A database that goes away while a replica serves: requests fail fast
// with 503 store_unavailable, and the replica recovers by itself.

package postgres_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/internal/pgtest"
)

// database lets a test cut its database off and bring it back, through
// an administrator's connection to another database of the same server.
type database struct {
	t     *testing.T
	admin *pgx.Conn
	name  string
}

func openDatabase(t *testing.T, dbURL string) database {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := u.Path[1:]
	u.Path = "/postgres"
	admin, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return database{t: t, admin: admin, name: name}
}

// down refuses new connections and ends the open ones, as a database
// that restarts or fails over does.
func (d database) down() {
	d.t.Helper()
	ident := pgx.Identifier{d.name}.Sanitize()
	if _, err := d.admin.Exec(d.t.Context(), "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false"); err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.admin.Exec(d.t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, d.name); err != nil {
		d.t.Fatal(err)
	}
}

// up lets connections in again.
func (d database) up() {
	d.t.Helper()
	ident := pgx.Identifier{d.name}.Sanitize()
	if _, err := d.admin.Exec(d.t.Context(), "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS true"); err != nil {
		d.t.Fatal(err)
	}
}

func TestProcesses_DatabaseDownWhileServingIs503ThenRecovers(t *testing.T) {
	dbURL := pgtest.URL(t)
	db := openDatabase(t, dbURL)
	p := startProcess(t, dbURL) // real clock: its sweep runs through the outage too
	before := p.create(3600, nil)

	db.down()
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"create", "POST", "/api/v1/payments", createBody(3600, nil)},
		{"retrieve", "GET", "/api/v1/payments/" + before, nil},
		{"list", "GET", "/api/v1/payments", nil},
		{"complete", "POST", "/_sandbox/payments/" + before + "/complete", nil},
		{"advance", "POST", "/_sandbox/clock/advance", map[string]any{"seconds": 1}},
	} {
		start := time.Now()
		st, body := p.call(tc.method, tc.path, tc.body)
		took := time.Since(start)
		e, _ := body["error"].(map[string]any)
		if st != http.StatusServiceUnavailable || e["type"] != "api_error" || e["code"] != "store_unavailable" {
			t.Errorf("%s with the database down: %d %v, want 503 api_error store_unavailable", tc.name, st, body)
		}
		// Never a hang: connecting gives up after the pool's timeout.
		if took > 8*time.Second {
			t.Errorf("%s took %s to fail", tc.name, took)
		}
	}

	db.up()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, _ := p.call("GET", "/api/v1/payments/"+before, nil)
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d 15 s after the database came back", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := p.status(before); s != "pending" {
		t.Errorf("the payment of before the outage is %s, want pending (nothing was applied while down)", s)
	}
	after := p.create(3600, nil)
	if st, q := p.call("POST", "/_sandbox/payments/"+after+"/complete", nil); st != http.StatusOK || q["status"] != "completed" {
		t.Errorf("complete after the outage: %d %v", st, q)
	}
	select {
	case <-p.done:
		t.Fatal("paymock exited during the outage")
	default:
	}
}
