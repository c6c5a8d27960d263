// The statements of requests that arrive together (a create, a retrieve,
// a list page, each with its journal entry) sent to the database as one
// pipeline and committed together: one write, one read and one commit for
// many, where each alone costs both processes a wake-up and a commit.

package postgres

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// groupMax is the most statements in one pipeline.
	groupMax = 32
	// groupTimeout bounds one pipeline. A statement's caller waits for
	// its outcome once it is sent, whatever its own context says then: a
	// write may commit, and is never answered as failed while it does.
	groupTimeout = 30 * time.Second
)

// groupedCall is one statement waiting for, or in, a pipeline.
type groupedCall struct {
	// merchantID orders a pipeline's statements (sendGroup).
	merchantID string
	sql        string
	args       []any
	// read reads the statement's result, in the pipeline's order.
	read func(pgx.BatchResults) error
	err  error
	// taken: a pipeline holds the call; set under groupedStatements.mu.
	taken bool
	done  chan struct{} // closed once err is set
}

// groupedStatements sends the statements of concurrent calls together.
// One pipeline is in flight at a time: the statements that arrive while
// it is wait, and go together in the next, so the busier the store, the
// larger each pipeline (on 2 cores under 8 clients, about 3 statements).
// Two pipelines at once were measured to send smaller ones for no more
// requests served (docs/performance.md).
//
// A pipeline is one implicit transaction (pgx ends it with one Sync): it
// commits all its statements or none. When one fails, none happened, and
// each runs again alone for its own outcome.
type groupedStatements struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pending []*groupedCall
	sending bool

	// pipelines and statements sent, for tests.
	pipelines, statements atomic.Int64
}

// run runs sql, a statement of merchantID's, with args in the next
// pipeline, and reads its result with read once it has committed or
// failed. A caller whose context ends before its statement is sent gets
// the context's error, and the statement is not sent.
func (g *groupedStatements) run(ctx context.Context, merchantID, sql string, args []any, read func(pgx.BatchResults) error) error {
	c := &groupedCall{merchantID: merchantID, sql: sql, args: args, read: read, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	if !g.sending {
		g.sending = true
		go g.send()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	if !c.taken {
		if i := slices.Index(g.pending, c); i >= 0 {
			g.pending = slices.Delete(g.pending, i, i+1)
		}
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	<-c.done
	return c.err
}

// send sends the pending statements, groupMax at a time, until none is
// left.
func (g *groupedStatements) send() {
	var calls []*groupedCall
	for {
		g.mu.Lock()
		n := min(len(g.pending), groupMax)
		if n == 0 {
			g.sending = false
			g.pending = nil // a burst's backing array is not kept
			g.mu.Unlock()
			return
		}
		calls = append(calls[:0], g.pending[:n]...)
		for _, c := range calls {
			c.taken = true
		}
		g.pending = slices.Delete(g.pending, 0, n)
		g.mu.Unlock()
		g.sendGroup(calls)
		clear(calls)
	}
}

// sendGroup sends calls as one pipeline, or, should one of them fail,
// each alone. The statements go in the order of their merchants: a
// create takes a lock on its merchant's count (payment_counts) until the
// pipeline commits, and two pipelines (of two replicas) taking two
// merchants' locks in opposite orders would deadlock.
func (g *groupedStatements) sendGroup(calls []*groupedCall) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	slices.SortStableFunc(calls, func(a, b *groupedCall) int { return cmp.Compare(a.merchantID, b.merchantID) })
	if err := g.pipeline(ctx, calls); err != nil && len(calls) > 1 {
		for _, c := range calls {
			_ = g.pipeline(ctx, []*groupedCall{c})
		}
	}
	for _, c := range calls {
		close(c.done)
	}
}

// pipeline sends calls in one pipeline and reads each one's result. Its
// error is the pipeline's: a statement that failed, and so rolled back
// the others, or the connection lost.
func (g *groupedStatements) pipeline(ctx context.Context, calls []*groupedCall) error {
	g.pipelines.Add(1)
	g.statements.Add(int64(len(calls)))
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(calls))}
	for _, c := range calls {
		b.Queue(c.sql, c.args...)
	}
	br := g.pool.SendBatch(ctx, b)
	for _, c := range calls {
		c.err = c.read(br)
	}
	err := br.Close()
	if err != nil {
		for _, c := range calls {
			if c.err == nil {
				c.err = err
			}
		}
	}
	return err
}
