// Advances of one merchant's clock taken in turn across replicas.

package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
)

// advanceLock is the first key of the advisory locks that serialise
// advances ("adv" in ASCII); the second is the merchant id's hash. A hash
// shared by two merchants only makes their advances wait for each other.
const advanceLock = 0x616476

// maxAdvanceConns is how many advances of a replica may hold or wait for
// their lock at once, each on a connection of its own; more wait here.
const maxAdvanceConns = 4

var _ paymock.AdvanceLocker = (*Store)(nil)

// LockAdvance implements paymock.AdvanceLocker with a session advisory
// lock on a connection of its own, outside the pool: the advance it
// guards uses pooled connections, and holding one of those while waiting
// could starve the pool. A replica that dies mid-advance ends its session,
// which releases the lock.
func (s *Store) LockAdvance(ctx context.Context, merchantID string) (func(), error) {
	select {
	case s.advancing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		<-s.advancing
		return nil, check("connecting to take the advance lock", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1::int, hashtext($2))`, advanceLock, merchantID); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		<-s.advancing
		return nil, check("taking the advance lock of "+merchantID, err)
	}
	// The advance that held the lock before committed its clock, and told
	// every replica, before letting go; this replica may not have heard
	// it yet, and would read the clock it kept, moving the merchant's
	// clock from where it was before that advance. Once heard, the clock
	// is read from the database.
	if err := s.Sync(ctx); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		<-s.advancing
		return nil, err
	}
	return func() {
		// Closing the session releases the lock with it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(ctx)
		<-s.advancing
	}, nil
}
