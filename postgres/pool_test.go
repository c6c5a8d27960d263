// The pool's size: the default, the config's, or the URL's own.

package postgres

import (
	"context"
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
		{"default", Config{URL: url}, DefaultMaxConns},
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
