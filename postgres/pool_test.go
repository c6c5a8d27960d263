// The pool's size: the default, the config's, or the URL's own.

package postgres

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/pgtest"
)

func TestOpen_PoolSizeIsTheConfigsTheURLsOrTheDefault(t *testing.T) {
	url := pgtest.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	tests := []struct {
		name string
		cfg  Config
		want int32
	}{
		{"default", Config{URL: url}, DefaultPoolSize(runtime.GOMAXPROCS(0))},
		{"pool_max_conns in the URL", Config{URL: url + sep + "pool_max_conns=3"}, 3},
		{"MaxConns wins over the URL", Config{URL: url + sep + "pool_max_conns=3", MaxConns: 7}, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(context.Background(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if got := st.pool.Config().MaxConns; got != tc.want {
				t.Errorf("pool of %d connections, want %d", got, tc.want)
			}
		})
	}
}

func TestDefaultPoolSize_IsTwoPerCoreFromFourToTen(t *testing.T) {
	for _, tc := range []struct {
		procs int
		want  int32
	}{{1, 4}, {2, 4}, {3, 6}, {4, 8}, {5, 10}, {64, 10}} {
		if got := DefaultPoolSize(tc.procs); got != tc.want {
			t.Errorf("DefaultPoolSize(%d) = %d, want %d", tc.procs, got, tc.want)
		}
	}
}

// A request's context ends when its client goes away. The statement it
// had sent is let finish and its connection kept (else a client closing
// each request early made the database start a backend for every other
// one); one that outlasts the grace is still cut.
func TestOpen_AStatementWhoseContextEndsKeepsItsConnection(t *testing.T) {
	st, err := Open(context.Background(), Config{URL: pgtest.URL(t), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	backend := func() int32 {
		t.Helper()
		var pid int32
		if err := st.pool.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	for _, tc := range []struct {
		name  string
		sleep time.Duration
		kept  bool
	}{
		{"a statement ending within the grace", 200 * time.Millisecond, true},
		{"a statement outlasting the grace", statementGrace + 2*time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := backend()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := st.pool.Exec(ctx, "SELECT pg_sleep($1)", tc.sleep.Seconds())
			if tc.kept && err != nil {
				t.Errorf("the statement failed: %v", err)
			}
			if !tc.kept && err == nil {
				t.Errorf("a statement of %v ended without error after %v", tc.sleep, time.Since(start))
			}
			if after := backend(); (after == before) != tc.kept {
				t.Errorf("backend %d before, %d after: kept = %v, want %v", before, after, after == before, tc.kept)
			}
		})
	}
}
