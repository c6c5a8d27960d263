// The statements of requests that arrive together (a create, a retrieve,
// a list page, each with its journal entry) sent to the database as one
// pipeline and committed together: one write, one read and one commit for
// many, where each alone costs both processes a wake-up and a commit.

package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// groupMax is the most statements in one pipeline.
	groupMax = 32
	// groupStall is how long a statement waits behind a pipeline in
	// flight before another pipeline goes beside it: a pipeline held up
	// (a statement waiting on a lock, say) holds up only its own
	// statements, not every merchant's after it. A pipeline takes well
	// under a millisecond when the database is not held up.
	groupStall = 10 * time.Millisecond
	// groupTimeout bounds a pipeline whose callers have no deadline.
	groupTimeout = 30 * time.Second
)

// groupedCall is one statement waiting for, or in, a pipeline.
type groupedCall struct {
	ctx context.Context // the caller's
	// merchantID orders a pipeline's statements (sendGroup).
	merchantID string
	sql        string
	args       []any
	// read reads the statement's result, in the pipeline's order; the
	// pipeline closes rows after it, read or not.
	read func(rows pgx.Rows) error
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
// requests served (docs/performance.md). Only a statement kept waiting
// groupStall has another pipeline sent beside the one in flight, up to
// the pool's size.
//
// A pipeline is one implicit transaction (pgx ends it with one Sync): it
// commits all its statements or none. When a statement fails, none
// happened, and each runs again alone for its own outcome.
type groupedStatements struct {
	pool       *pgxpool.Pool
	maxSenders int // the pool's size

	mu      sync.Mutex
	pending []*groupedCall
	sending bool // the main sender runs (send)
	extra   int  // pipelines sent for a stall, in flight (sendStalled)

	// pipelines and statements sent, for tests.
	pipelines, statements atomic.Int64
}

// run runs sql, a statement of merchantID's, with args in the next
// pipeline, and reads its result with read once it has committed or
// failed. A caller whose context ends before its statement is sent gets
// the context's error, and the statement is not sent. Once sent, it
// waits for the outcome: a write may be committing, and is never
// answered as failed while it does. The pipeline ends at the latest of
// its callers' deadlines, or once all of them have given up (pgx then
// gives its statements statementGrace).
func (g *groupedStatements) run(ctx context.Context, merchantID, sql string, args []any, read func(rows pgx.Rows) error) error {
	c := &groupedCall{ctx: ctx, merchantID: merchantID, sql: sql, args: args, read: read, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	var stall <-chan time.Time
	if !g.sending {
		g.sending = true
		go g.send()
	} else {
		t := time.NewTimer(groupStall)
		defer t.Stop()
		stall = t.C
	}
	g.mu.Unlock()
	gaveUp := ctx.Done()
	for {
		select {
		case <-c.done:
			return c.err
		case <-stall:
			stall = nil
			g.mu.Lock()
			if !c.taken && 1+g.extra < g.maxSenders {
				g.extra++
				go g.sendStalled()
			}
			g.mu.Unlock()
		case <-gaveUp:
			g.mu.Lock()
			if c.taken {
				g.mu.Unlock()
				gaveUp = nil // sent: its outcome is waited for
				continue
			}
			if i := slices.Index(g.pending, c); i >= 0 {
				g.pending = slices.Delete(g.pending, i, i+1)
			}
			g.mu.Unlock()
			return ctx.Err()
		}
	}
}

// send sends the pending statements, groupMax at a time, until none is
// left.
func (g *groupedStatements) send() {
	var calls []*groupedCall
	for {
		g.mu.Lock()
		if calls = g.take(calls); len(calls) == 0 {
			g.sending = false
			g.pending = nil // a burst's backing array is not kept
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.sendGroup(calls)
		clear(calls)
	}
}

// sendStalled sends one pipeline of the pending statements beside the
// one in flight, which has held them up groupStall.
func (g *groupedStatements) sendStalled() {
	g.mu.Lock()
	calls := g.take(nil)
	g.mu.Unlock()
	if len(calls) > 0 {
		g.sendGroup(calls)
	}
	g.mu.Lock()
	g.extra--
	g.mu.Unlock()
}

// take moves up to groupMax pending calls into calls, marked taken; the
// caller holds mu.
func (g *groupedStatements) take(calls []*groupedCall) []*groupedCall {
	n := min(len(g.pending), groupMax)
	calls = append(calls[:0], g.pending[:n]...)
	for _, c := range calls {
		c.taken = true
	}
	g.pending = slices.Delete(g.pending, 0, n)
	return calls
}

// sendGroup sends calls as one pipeline, or, should a statement of it
// fail, each alone. The statements go in the order of their merchants: a
// create takes a lock on its merchant's count (payment_counts) until the
// pipeline commits, and two pipelines taking two merchants' locks in
// opposite orders would deadlock.
func (g *groupedStatements) sendGroup(calls []*groupedCall) {
	ctx, cancel := groupContext(calls)
	defer cancel()
	slices.SortStableFunc(calls, func(a, b *groupedCall) int { return cmp.Compare(a.merchantID, b.merchantID) })
	err := g.pipeline(ctx, calls)
	// A statement's own error rolled back the others: each runs again
	// alone. Any other (the connection lost, the database unreachable,
	// the deadline passed) is every statement's outcome as it is.
	var pg *pgconn.PgError
	if errors.As(err, &pg) && len(calls) > 1 {
		for _, c := range calls {
			_ = g.pipeline(ctx, []*groupedCall{c})
		}
	}
	for _, c := range calls {
		close(c.done)
	}
}

// groupContext is the context of a pipeline of calls: done at the
// latest of their deadlines (groupTimeout if one has none), or once
// every caller's context is done.
func groupContext(calls []*groupedCall) (context.Context, context.CancelFunc) {
	end := time.Now().Add(groupTimeout)
	var latest time.Time
	for _, c := range calls {
		d, ok := c.ctx.Deadline()
		if !ok {
			latest = end
			break
		}
		if d.After(latest) {
			latest = d
		}
	}
	if latest.After(end) {
		latest = end
	}
	ctx, cancel := context.WithDeadline(context.Background(), latest)
	var left atomic.Int64
	left.Store(int64(len(calls)))
	stops := make([]func() bool, len(calls))
	for i, c := range calls {
		stops[i] = context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
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
		// Each call's result is taken and closed here, whatever its read
		// did with it, so that the next call reads its own.
		rows, err := br.Query()
		if err == nil {
			err = readResult(c.read, rows)
		}
		rows.Close()
		c.err = err
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

// readResult is read(rows), a panic in it turned into its call's error:
// it runs on the goroutine sending the pipeline, outside the request's
// recovery, where a panic would end the process and every tenant's
// requests with it.
func readResult(read func(pgx.Rows) error, rows pgx.Rows) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("postgres: reading a statement's result: panic: %v", p)
		}
	}()
	return read(rows)
}
