// Package connlimit bounds the connections an HTTP server holds, so that
// one client holding many open cannot use up the process's file
// descriptors and lock every other client out. At the bound a new
// connection takes the place of one that is not serving a request: the
// longest idle keep-alive connection, or else the oldest one still
// sending its request line and headers. Only when every connection held
// is inside a handler is the new one refused.
//
// Holding each connection, the limiter also keeps its deadlines (a sweep
// cuts the calls past theirs, conn.go) and words the refusals net/http
// writes to it before any handler runs (refusal.go).
package connlimit

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultMax is the most connections held when the file limit allows
// more: past it memory, not descriptors, is what a client would fill
// (each held connection costs a goroutine and its buffers).
const DefaultMax = 10_000

// ForFileLimit is the bound for a process that may open nofile
// descriptors: an eighth of them (at least 64) kept for everything else
// (the listener, outbound webhooks, the database pool, log files), and
// no more than DefaultMax.
func ForFileLimit(nofile uint64) int {
	reserve := max(nofile/8, 64)
	if nofile <= reserve {
		return 1
	}
	return int(min(nofile-reserve, DefaultMax))
}

// FromFileLimit is ForFileLimit of the process's current soft limit on
// open files (Go raises it to the hard limit at start), or DefaultMax
// where it cannot be read.
func FromFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur >= 1<<62 { // RLIM_INFINITY
		return DefaultMax
	}
	return ForFileLimit(rl.Cur)
}

// Resolution is how late past its deadline a connection's read or write
// may be cut: the period of the limiter's sweep.
const Resolution = 100 * time.Millisecond

// Limiter holds at most its bound of connections. Install it with
// Listen, Server and Handler together; it is safe for concurrent use.
type Limiter struct {
	max     int
	refusal Refusal // Config.Refusal

	// order and now each on a cache line of its own: order changes twice
	// a request, and now is read by every deadline set.
	_     [64]byte
	order atomic.Int64 // orders the connections' changes of state
	_     [56]byte
	now   atomic.Int64 // Unix nanoseconds at the last sweep (or New)
	_     [56]byte

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// Config configures a Limiter.
type Config struct {
	// Max is the most connections held at once (at least 1).
	Max int
	// Refusal, when set, words the answers net/http writes itself to
	// requests it cannot parse (refusal.go), which no handler sees.
	Refusal Refusal
}

// New makes a limiter.
func New(cfg Config) *Limiter {
	l := &Limiter{max: max(cfg.Max, 1), refusal: cfg.Refusal, conns: make(map[*conn]struct{})}
	l.now.Store(time.Now().UnixNano())
	return l
}

// Max is the bound.
func (l *Limiter) Max() int { return l.max }

// Listen wraps ln so that its Accept holds to the bound. The limiter
// sweeps the connections' deadlines until the listener is closed.
func (l *Limiter) Listen(ln net.Listener) net.Listener {
	done := make(chan struct{})
	go l.sweep(done)
	return &listener{Listener: ln, l: l, done: done}
}

// sweep cuts, each Resolution, the reads and writes whose deadline has
// passed. It stops once done is closed and no connection is left: a
// server shutting down has closed its listener, and its requests under
// way keep their deadlines.
func (l *Limiter) sweep(done <-chan struct{}) {
	t := time.NewTicker(Resolution)
	defer t.Stop()
	var held []*conn
	for now := range t.C {
		n := now.UnixNano()
		l.now.Store(n)
		l.mu.Lock()
		for c := range l.conns {
			held = append(held, c)
		}
		l.mu.Unlock()
		for _, c := range held {
			c.sweep(n)
		}
		if len(held) == 0 {
			select {
			case <-done:
				return
			default:
			}
		}
		clear(held) // hold no closed connection until the next sweep
		held = held[:0]
	}
}

// Server sets srv's ConnState and ConnContext hooks, which the limiter
// needs to know what each connection is doing; hooks already set still
// run.
func (l *Limiter) Server(srv *http.Server) {
	prevState, prevCtx := srv.ConnState, srv.ConnContext
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.connState(c, s)
		if prevState != nil {
			prevState(c, s)
		}
	}
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		return context.WithValue(ctx, connKey{}, c)
	}
}

type connKey struct{}

// Handler marks each request's connection as serving from when h starts
// until its answer is written (net/http marks the connection idle after
// the last of it), so that it is never the one closed to make room: what
// is closed is a connection with no request under way, whose client
// loses nothing a retry does not bring back.
func (l *Limiter) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _ := r.Context().Value(connKey{}).(*conn); c != nil {
			c.serving.Store(true) // until net/http marks it idle, its answer written
		}
		h.ServeHTTP(w, r)
	})
}

// connState follows a connection's state. A connection leaves the count
// only when the server says it is closed or hijacked (or when admit
// closes it), never on the Close of another goroutine alone.
func (l *Limiter) connState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	switch s {
	case http.StateClosed, http.StateHijacked:
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		c.release()
	default:
		if s == http.StateIdle {
			c.serving.Store(false)
		}
		c.state.Store(int32(s))
		c.since.Store(l.order.Add(1))
	}
}

// Open is the number of connections held.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// admit counts c in, first making room at the bound; false when there is
// none to make and c must be refused. The connection closed for room,
// if any, is returned for the caller to close outside the lock.
func (l *Limiter) admit(c *conn) (ok bool, evict *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		evict = l.spareLocked()
		if evict == nil {
			return false, nil
		}
		delete(l.conns, evict)
	}
	c.state.Store(int32(http.StateNew))
	c.since.Store(l.order.Add(1))
	l.conns[c] = struct{}{}
	return true, evict
}

// spareLocked picks the connection to close for a new one: the longest
// idle keep-alive one, else the oldest one not yet inside the handler (a
// client still sending its request line and headers); nil when every
// connection is serving a request.
func (l *Limiter) spareLocked() *conn {
	var idle, reading *conn
	for c := range l.conns {
		state, since := http.ConnState(c.state.Load()), c.since.Load()
		switch {
		case c.serving.Load():
		case state == http.StateIdle:
			if idle == nil || since < idle.since.Load() {
				idle = c
			}
		case state == http.StateNew || state == http.StateActive:
			if reading == nil || since < reading.since.Load() {
				reading = c
			}
		}
	}
	if idle != nil {
		return idle
	}
	return reading
}

// listener is a net.Listener under a Limiter.
type listener struct {
	net.Listener
	l *Limiter

	closeOnce sync.Once
	done      chan struct{} // closed with the listener: the sweep stops
}

// Close closes the listener and stops the limiter's sweep.
func (ln *listener) Close() error {
	ln.closeOnce.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// Accept returns the next connection the bound lets in. A connection
// refused is closed at once; the client sees it closed before any answer
// and may try again, as after a server's idle timeout.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		nc, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: nc, l: ln.l}
		ok, evict := ln.l.admit(c)
		if evict != nil {
			_ = evict.Close()
		}
		if ok {
			return c, nil
		}
		_ = c.Close()
	}
}
