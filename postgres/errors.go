// Telling a database that is down from a request that is wrong.

package postgres

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paymock/paymock"
)

// ErrUnavailable is wrapped by every error that means the database could
// not be reached or dropped the connection: the request may succeed later,
// so the HTTP side answers 503 rather than 500.
var ErrUnavailable = paymock.ErrUnavailable

// check returns err wrapped with what was being done and, when it means
// the database is unreachable, ErrUnavailable too.
func check(what string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

func unavailable(err error) bool {
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case len(pg.Code) == 5 && pg.Code[:2] == "08": // connection exception
			return true
		case pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03": // admin or crash shutdown, starting up
			return true
		case pg.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	// A connection that broke between statements, or that pgx found
	// closed before sending anything.
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err)
}
