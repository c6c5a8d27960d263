// Package pgbackendtest gives a test a paymock.Backend kept in a fresh
// PostgreSQL database (pgtest's), closed when the test ends: what tests
// outside package postgres need to run on the shared store. It cannot
// live in pgtest, which postgres's own tests import.
package pgbackendtest

import (
	"context"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/postgres"
)

// Backend opens a store on a fresh database and returns its Backend; the
// test fails if it cannot, and is skipped as pgtest.URL skips it. The
// store outlives the test's own context, which ends before the cleanups.
func Backend(t testing.TB) paymock.Backend {
	t.Helper()
	st, err := postgres.Open(context.Background(), postgres.Config{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st.Backend()
}
