// Package connlimit bounds the connections an HTTP server holds, so that
// one client holding many open cannot use up the process's file
// descriptors and lock every other client out. At the bound a new
// connection takes the place of one that is not serving a request: the
// longest idle keep-alive connection, or else the oldest one still
// sending its request line and headers. Only when every connection held
// is inside a handler is the new one refused.
package connlimit

import (
	"context"
	"net"
	"net/http"
	"sync"
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

// held is one connection the limiter counts.
type held struct {
	conn     net.Conn
	state    http.ConnState
	handling int       // requests of the connection inside the handler
	since    time.Time // of the last change of state
}

// Limiter holds at most its bound of connections. Install it with
// Listen, Server and Handler together; it is safe for concurrent use.
type Limiter struct {
	max int

	mu    sync.Mutex
	conns map[net.Conn]*held
}

// New makes a limiter of n connections (at least 1).
func New(n int) *Limiter {
	return &Limiter{max: max(n, 1), conns: make(map[net.Conn]*held)}
}

// Max is the bound.
func (l *Limiter) Max() int { return l.max }

// Listen wraps ln so that its Accept holds to the bound.
func (l *Limiter) Listen(ln net.Listener) net.Listener { return &listener{Listener: ln, l: l} }

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

// Handler marks each request's connection as serving while h runs, so
// that it is never the one closed to make room: what is closed is a
// connection with no request under way, whose client loses nothing a
// retry does not bring back.
func (l *Limiter) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(net.Conn)
		l.mark(c, +1)
		defer l.mark(c, -1)
		h.ServeHTTP(w, r)
	})
}

func (l *Limiter) mark(c net.Conn, d int) {
	if c == nil {
		return
	}
	l.mu.Lock()
	if e := l.conns[c]; e != nil {
		e.handling += d
	}
	l.mu.Unlock()
}

// connState follows a connection's state. A connection leaves the count
// only when the server says it is closed or hijacked (or when admit
// closes it), never on the Close of another goroutine alone.
func (l *Limiter) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.conns[c]
	if e == nil {
		return
	}
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		e.state, e.since = s, time.Now()
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
func (l *Limiter) admit(c net.Conn) (ok bool, evict net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		evict = l.spareLocked()
		if evict == nil {
			return false, nil
		}
		delete(l.conns, evict)
	}
	l.conns[c] = &held{conn: c, state: http.StateNew, since: time.Now()}
	return true, evict
}

// spareLocked picks the connection to close for a new one: the longest
// idle keep-alive one, else the oldest one not yet inside the handler (a
// client still sending its request line and headers); nil when every
// connection is serving a request.
func (l *Limiter) spareLocked() net.Conn {
	var idle, reading *held
	for _, e := range l.conns {
		switch {
		case e.handling > 0:
		case e.state == http.StateIdle:
			if idle == nil || e.since.Before(idle.since) {
				idle = e
			}
		case e.state == http.StateNew || e.state == http.StateActive:
			if reading == nil || e.since.Before(reading.since) {
				reading = e
			}
		}
	}
	switch {
	case idle != nil:
		return idle.conn
	case reading != nil:
		return reading.conn
	}
	return nil
}

// listener is a net.Listener under a Limiter.
type listener struct {
	net.Listener
	l *Limiter
}

// Accept returns the next connection the bound lets in. A connection
// refused is closed at once; the client sees it closed before any answer
// and may try again, as after a server's idle timeout.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
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
