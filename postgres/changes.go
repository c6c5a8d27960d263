// What a request reads on every call and a merchant rarely changes (its
// keys, fault rules, clock and customers) is kept in the process, and
// dropped when any replica changes it: each change sends a notification
// in the transaction that makes it, and every replica listens.

package postgres

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/paymock/paymock"
)

// changesChannel is the channel of the notifications. A payload is a
// token, ":", and the id of the merchant whose keys, fault rules, clock
// or customers changed ("" for none: a Sync). The token tells the
// replica that sent it that it was heard.
const changesChannel = "paymock_changes"

// notifyChange is the statement that announces a change of merchant $1
// with token $2, sent in the change's own transaction or batch:
// PostgreSQL delivers it to every listener when, and only if, the change
// commits, in the order of the commits.
const notifyChange = `SELECT pg_notify('` + changesChannel + `', $2 || ':' || $1)`

// heardWait bounds how long a change waits to hear its own notification
// before it is answered (see changed).
const heardWait = time.Second

// maxCached bounds each of the caches; one that fills is emptied, and
// fills again with what is in use.
const maxCached = 100_000

// listenRetry is the pause between two attempts to listen again after the
// listening connection failed.
const listenRetry = time.Second

// customerKey is a customer's key in the cache.
type customerKey struct{ merchantID, email string }

// cachedClock is a merchant's stored clock, or its absence.
type cachedClock struct {
	st paymock.ClockState
	ok bool
}

// changes holds what the replicas change rarely, as this replica last
// read it. It serves only while the listening connection is up: from its
// start (everything dropped) to its end (everything dropped again), every
// change committed anywhere reaches drop, so what is held is never older
// than the last notification received. A read that started before a
// notification is not kept (gen), so a fill cannot put back what a
// change just dropped.
type changes struct {
	mu        sync.Mutex
	live      bool
	gen       uint64
	keys      map[[32]byte]paymock.StoredKey
	rules     map[string][]ruleRow
	clocks    map[string]cachedClock
	customers map[customerKey]string
	// synced are Sync's waiters, by token.
	synced map[string]chan struct{}
}

func newChanges() *changes {
	return &changes{synced: map[string]chan struct{}{}, gen: 1,
		keys: map[[32]byte]paymock.StoredKey{}, rules: map[string][]ruleRow{},
		clocks: map[string]cachedClock{}, customers: map[customerKey]string{}}
}

// reset drops everything; the caller holds mu. The maps are emptied, never
// replaced, so that a caller may name one without the lock (cached, put).
func (c *changes) reset() {
	c.gen++
	clear(c.keys)
	clear(c.rules)
	clear(c.clocks)
	clear(c.customers)
}

// setLive starts or stops serving from the cache, dropping everything.
func (c *changes) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.reset()
	// Reads go to the database while not listening: nothing to wait for.
	for token, ch := range c.synced {
		close(ch)
		delete(c.synced, token)
	}
}

// drop forgets what is held of a merchant. Keys are held by digest, and
// changes of keys are rare: all of them go.
func (c *changes) drop(merchantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	delete(c.rules, merchantID)
	delete(c.clocks, merchantID)
	for k := range c.customers {
		if k.merchantID == merchantID {
			delete(c.customers, k)
		}
	}
}

// begin is taken before a read whose result may be kept: the generation
// to hand to the put that keeps it.
func (c *changes) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keep reports whether a read begun at gen may be kept, and makes room;
// the caller holds mu.
func keep[K comparable, V any](c *changes, gen uint64, m map[K]V) bool {
	if !c.live || gen != c.gen {
		return false
	}
	if len(m) >= maxCached {
		clear(m)
	}
	return true
}

// cached reads m[k] under c's lock; false while not listening.
func cached[K comparable, V any](c *changes, m map[K]V, k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := m[k]
	return v, ok && c.live
}

// put keeps v as m[k] when the read that made it began in the current
// generation (keep).
func put[K comparable, V any](c *changes, gen uint64, m map[K]V, k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if keep(c, gen, m) {
		m[k] = v
	}
}

// listen keeps a connection of its own listening for changes until ctx
// ends, serving from the cache only while it listens.
func (s *Store) listen(ctx context.Context) {
	failing := false
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		s.changes.setLive(false)
		if ctx.Err() != nil {
			return
		}
		if !failing {
			// Logged once an outage: reads go to the database meanwhile.
			s.log.Warn("not listening for changes of other replicas: reading keys, fault rules and clocks from the database until back", "error", err)
		}
		failing = true
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// listenOnce listens on one connection until it fails.
func (s *Store) listenOnce(ctx context.Context) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	// The pool's statements are given statementGrace once their context
	// ends; this connection waits for notifications until the store
	// closes, and is cut at once then.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is dropped either way
	if _, err := conn.Exec(ctx, `LISTEN `+changesChannel); err != nil {
		return err
	}
	// From here every change committed reaches WaitForNotification:
	// anything read before is dropped.
	s.changes.setLive(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		token, merchantID, _ := strings.Cut(n.Payload, ":")
		if hearing := s.hearing.Load(); hearing != nil {
			(*hearing)(merchantID)
		}
		if merchantID != "" {
			s.changes.drop(merchantID)
		}
		s.changes.heard(token)
	}
}

// heard wakes the Sync waiting for token, if any.
func (c *changes) heard(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.synced[token]; ok {
		close(ch)
		delete(c.synced, token)
	}
}

// Sync returns once this store has heard of every change committed, on
// any replica, before it was called: it sends a notification of its own
// and waits for it, and PostgreSQL delivers notifications in the order
// of their commits. Reads of keys, fault rules and clocks are served from
// what was heard; a change made on another replica reaches them within
// the time a notification takes (see docs/postgres.md), and at once after
// a Sync. While the store is not listening, it reads the database and
// Sync returns at once.
func (s *Store) Sync(ctx context.Context) error {
	token, heard := s.expect()
	defer s.changes.heard(token) // forgets the waiter when not heard
	if _, err := s.pool.Exec(ctx, notifyChange, "", token); err != nil {
		return check("sync with the other replicas", err)
	}
	select {
	case <-heard:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// expect makes the token of a notification about to be sent, and a
// channel closed once this store hears it (at once when not listening).
func (s *Store) expect() (string, <-chan struct{}) {
	token := rand.Text()
	ch := make(chan struct{})
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if s.changes.live {
		s.changes.synced[token] = ch
	} else {
		close(ch)
	}
	return token, ch
}

// announced ends a change of merchantID that sent token's notification:
// this replica's copy is dropped at once, and, when the change committed
// (err nil), it waits until it hears its own notification, at most
// heardWait: PostgreSQL hands a notification to every listener at once,
// so by then the other replicas have been sent it too, and a client told
// of the change finds them, all but always, already past it.
func (s *Store) announced(ctx context.Context, merchantID, token string, heard <-chan struct{}, err error) {
	s.changes.drop(merchantID)
	defer s.changes.heard(token)
	if err != nil {
		return
	}
	t := time.NewTimer(heardWait)
	defer t.Stop()
	select {
	case <-heard:
	case <-t.C:
	case <-ctx.Done():
	}
}

// changed runs a change of merchantID's keys, fault rules, clock or
// customers in one round trip with its notification (one batch is one
// transaction), and drops this replica's copy at once. fn queues the
// change and reads its result.
func (s *Store) changed(ctx context.Context, merchantID string, queue func(b *pgx.Batch)) error {
	token, heard := s.expect()
	b := &pgx.Batch{}
	queue(b)
	b.Queue(notifyChange, merchantID, token)
	err := s.pool.SendBatch(ctx, b).Close()
	s.announced(ctx, merchantID, token, heard, err)
	return err
}

// changedIn is changed for a change made in a transaction of its own: fn
// runs in it, then the notification.
func (s *Store) changedIn(ctx context.Context, merchantID string, fn func(tx pgx.Tx) error) error {
	token, heard := s.expect()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, notifyChange, merchantID, token)
		return err
	})
	s.announced(ctx, merchantID, token, heard, err)
	return err
}
