// A connection the limiter holds: what it is doing in atomics, and its
// deadlines kept coarse, so that a request pays no lock of the limiter
// and no runtime timer for either.

package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// conn is a connection the limiter holds. net/http sets a deadline four
// to six times a request (header, body, write, answer, idle); each on the
// connection itself moves a runtime timer, which cost about a tenth of a
// small request's CPU. Here a deadline in the future is only written
// down, and the limiter's sweep cuts a blocked read or write once it has
// passed, at most one Resolution late. A deadline already past (net/http
// aborting its background read) goes to the connection at once.
type conn struct {
	net.Conn
	l *Limiter

	state atomic.Int32 // the http.ConnState net/http last gave
	since atomic.Int64 // the limiter's order of that change (older is smaller)
	// serving: a request of the connection reached the handler, and its
	// answer is not all written yet (net/http flushes the last of it
	// after the handler returns, then marks the connection idle).
	serving atomic.Bool

	read, write deadline
}

// deadline is one direction's deadline of a conn.
type deadline struct {
	// want is the deadline in Unix nanoseconds, 0 for none; read by the
	// sweep without mu to pass connections with none.
	want atomic.Int64
	// slow is applied || direct, read without mu: while it is false a
	// future deadline is only stored, with no lock (set's fast path).
	slow atomic.Bool
	mu   sync.Mutex
	// direct: the connection itself carries a deadline (one past, set to
	// cut a blocked call) that a new deadline must first clear; or the
	// limiter no longer sweeps the connection (hijacked, closed) and every
	// deadline goes straight to it.
	applied, direct bool
}

// set records t as the deadline; set calls apply with the deadline for
// the connection itself, when it is past, cleared or no longer swept.
func (d *deadline) set(l *Limiter, t time.Time, apply func(time.Time) error) error {
	var w int64 // none
	if !t.IsZero() {
		w = t.UnixNano()
	}
	if !d.slow.Load() && (w == 0 || w > l.now.Load()) {
		d.want.Store(w)
		if !d.slow.Load() {
			return nil
		}
		// A sweep cut the connection while w was stored: settle under mu.
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.direct:
	case w != 0 && w <= l.now.Load(): // past: cut a call under way now
		d.want.Store(0)
		d.applied = true
	case d.applied: // an earlier cut is still on the connection
		d.want.Store(w)
		d.applied = false
		t = time.Time{}
	default:
		d.want.Store(w)
		return nil
	}
	d.slow.Store(d.applied || d.direct)
	return apply(t)
}

// expire hands a deadline that has passed by now to the connection, which
// cuts a read or write under way.
func (d *deadline) expire(now int64, apply func(time.Time) error) {
	if w := d.want.Load(); w == 0 || w > now {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.want.Load()
	if d.direct || w == 0 || w > now {
		return
	}
	// slow first, so that a set storing a new deadline past this point
	// sees it and waits for mu; the swap then fails if one came before.
	d.slow.Store(true)
	if !d.want.CompareAndSwap(w, 0) {
		d.slow.Store(d.applied || d.direct)
		return
	}
	d.applied = true
	_ = apply(time.Unix(0, w))
}

// release stops the sweep of d: a deadline still wanted goes to the
// connection, and every later one straight to it.
func (d *deadline) release(apply func(time.Time) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slow.Store(true)
	if w := d.want.Swap(0); w != 0 {
		_ = apply(time.Unix(0, w))
	}
	d.direct = true
}

// Write writes b, or, when b is one of net/http's own refusals and the
// limiter has words for them, the refusal in those words.
func (c *conn) Write(b []byte) (int, error) {
	if f := c.l.refusal; f != nil {
		if out, ok := reword(f, b); ok {
			if _, err := c.Conn.Write(out); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	return c.read.set(c.l, t, c.Conn.SetReadDeadline)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	return c.write.set(c.l, t, c.Conn.SetWriteDeadline)
}

func (c *conn) SetDeadline(t time.Time) error {
	err := c.SetReadDeadline(t)
	if werr := c.SetWriteDeadline(t); err == nil {
		err = werr
	}
	return err
}

// sweep cuts the calls of c whose deadline has passed.
func (c *conn) sweep(now int64) {
	c.read.expire(now, c.Conn.SetReadDeadline)
	c.write.expire(now, c.Conn.SetWriteDeadline)
}

// release hands c's deadlines to the connection itself, for a connection
// the limiter stops sweeping.
func (c *conn) release() {
	c.read.release(c.Conn.SetReadDeadline)
	c.write.release(c.Conn.SetWriteDeadline)
}

// CloseWrite lets net/http half-close the connection before it closes it,
// as it does a *net.TCPConn, so that a client's last bytes are not met
// with a reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SetLinger lets a hijacker reset the connection (the reset fault).
func (c *conn) SetLinger(sec int) error {
	if tc, ok := c.Conn.(interface{ SetLinger(int) error }); ok {
		return tc.SetLinger(sec)
	}
	return nil
}

// NetConn is the connection the limiter wraps.
func (c *conn) NetConn() net.Conn { return c.Conn }
