// The pool's size: the default, the config's, or the URL's own.

package postgres

import (
	"context"
	"runtime"
	"strings"
	"testing"

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
