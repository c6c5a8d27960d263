// Tests of the held connections' coarse deadlines, over real loopback
// connections.

package connlimit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// safetyNet ends a test whose connection was never cut: the client
// closes, and the server's read sees the end of the stream instead of
// its deadline.
const safetyNet = 10 * time.Second

// pair is a connection accepted through a limiter and its client's end.
func pair(t *testing.T) (server net.Conn, client net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(Config{Max: 8}).Listen(inner)
	t.Cleanup(func() { _ = ln.Close() })
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	go func() { time.Sleep(safetyNet); _ = client.Close() }()
	return server, client
}

// serve runs srv under l on a loopback port until the test ends, and
// returns its address.
func serve(t *testing.T, l *Limiter, srv *http.Server) string {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Server(srv)
	go func() { _ = srv.Serve(l.Listen(inner)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return inner.Addr().String()
}

func TestConn_ACallPastItsDeadlineIsCut(t *testing.T) {
	tests := []struct {
		name string
		cut  func(c net.Conn) error // sets a deadline, then blocks until cut
	}{
		{"a read, its deadline ahead", func(c net.Conn) error {
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			return err
		}},
		{"a read, its deadline from SetDeadline", func(c net.Conn) error {
			_ = c.SetDeadline(time.Now().Add(50 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			return err
		}},
		{"a read under way, a deadline already past", func(c net.Conn) error {
			go func() { time.Sleep(50 * time.Millisecond); _ = c.SetReadDeadline(time.Unix(1, 0)) }()
			_, err := c.Read(make([]byte, 1))
			return err
		}},
		{"a write its client does not read", func(c net.Conn) error {
			_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			chunk := make([]byte, 1<<20)
			for {
				if _, err := c.Write(chunk); err != nil {
					return err
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, _ := pair(t)
			if err := tt.cut(server); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the call ended with %v, want its deadline exceeded", err)
			}
		})
	}
}

func TestConn_ADeadlineClearedAfterACutReadsAgain(t *testing.T) {
	// net/http's pattern: its background read is cut by a deadline in the
	// past, and the deadline cleared before the next request is read.
	server, client := pair(t)
	_ = server.SetReadDeadline(time.Unix(1, 0))
	if _, err := server.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v, want its deadline exceeded", err)
	}
	for _, next := range []time.Time{{}, time.Now().Add(time.Hour)} {
		_ = server.SetReadDeadline(next)
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Read(make([]byte, 1)); err != nil {
			t.Fatalf("a read after the deadline was set to %v: %v, want the byte sent", next, err)
		}
	}
}

func TestConn_AHijackedConnectionKeepsItsDeadlines(t *testing.T) {
	// A hijacked connection leaves the limiter's sweep: its deadlines must
	// go to the connection itself, or nothing would ever cut it.
	l := New(Config{Max: 8})
	got := make(chan error, 1)
	srv := &http.Server{Handler: l.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		got <- err
	}))}
	client, err := net.Dial("tcp", serve(t, l, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the hijacked read ended with %v, want its deadline exceeded", err)
		}
	case <-time.After(safetyNet):
		t.Fatal("the hijacked connection's read was never cut")
	}
}

func TestLimiter_KeepsServingOverItsHeldConnections(t *testing.T) {
	// Keep-alive requests through the limiter, its deadlines set and moved
	// by net/http each request, are all answered on one connection.
	l := New(Config{Max: 8})
	srv := &http.Server{
		Handler: l.Handler(AnswerWithin(time.Minute, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}))),
		ReadHeaderTimeout: time.Minute, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: time.Minute,
	}
	client, err := net.Dial("tcp", serve(t, l, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	_ = client.SetDeadline(time.Now().Add(safetyNet))
	br := bufio.NewReader(client)
	for i := range 200 {
		if _, err := io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if n := l.Open(); n != 1 {
		t.Errorf("the limiter holds %d connections, want the one", n)
	}
}

func TestLimiter_AnAnswerStillBeingWrittenIsNeverClosedForRoom(t *testing.T) {
	// net/http writes the last of an answer after the handler returns,
	// and marks the connection idle only then: until it does, the
	// connection is serving, not reading, whatever its age.
	l := New(Config{Max: 2})
	held := func() *conn {
		a, b := net.Pipe()
		t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
		c := &conn{Conn: a, l: l}
		if ok, _ := l.admit(c); !ok {
			t.Fatal("admit refused a connection under the bound")
		}
		l.connState(c, http.StateActive)
		return c
	}
	flushing := held() // the older: its handler has returned, its answer not all out
	ctx := context.WithValue(context.Background(), connKey{}, flushing)
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), req)
	reading := held() // the newer: still sending its request line and headers

	l.mu.Lock()
	spare := l.spareLocked()
	l.mu.Unlock()
	if spare != reading {
		t.Fatalf("the limiter would close %p for room, want the one still reading %p, not the one writing its answer %p", spare, reading, flushing)
	}
	l.connState(flushing, http.StateIdle) // its answer written
	l.mu.Lock()
	spare = l.spareLocked()
	l.mu.Unlock()
	if spare != flushing {
		t.Errorf("once idle, the limiter would close %p, want the idle one %p", spare, flushing)
	}
}

// TestDeadline_ANewDeadlineRacingASweepsCutIsNeverLost sets a future
// deadline while a sweep cuts the one before it, many times over, the two
// released together on two threads: the connection must not be left
// carrying the cut under a deadline the limiter holds as future.
func TestDeadline_ANewDeadlineRacingASweepsCutIsNeverLost(t *testing.T) {
	l := New(Config{Max: 1})
	l.now.Store(1000)
	var d deadline
	var onConn, cuts atomic.Int64 // what apply last gave the connection (0 none); the cuts it gave
	apply := func(t time.Time) error {
		if t.IsZero() {
			onConn.Store(0)
		} else {
			onConn.Store(t.UnixNano())
			cuts.Add(1)
		}
		return nil
	}
	const runs = 50000
	var round, swept atomic.Int64
	go func() {
		for i := int64(1); i <= runs; i++ {
			for round.Load() != i { // spin: released with the set below
			}
			d.expire(2000, apply) // 1500 has passed: cut
			swept.Store(i)
		}
	}()
	for i := int64(1); i <= runs; i++ {
		d = deadline{}
		onConn.Store(0)
		if err := d.set(l, time.Unix(0, 1500), apply); err != nil {
			t.Fatal(err)
		}
		round.Store(i)
		if err := d.set(l, time.Unix(0, 3000), apply); err != nil {
			t.Fatal(err)
		}
		for swept.Load() != i {
		}
		if got := onConn.Load(); got != 0 {
			t.Fatalf("run %d: the limiter holds %d as the deadline, and the connection carries the cut %d", i, d.want.Load(), got)
		}
		if got := d.want.Load(); got != 3000 {
			t.Fatalf("run %d: the deadline 3000 was lost: the limiter holds %d", i, got)
		}
	}
	t.Logf("in %d of %d runs the sweep's cut landed before the new deadline", cuts.Load(), runs)
}

// TestDeadline_ASetRacingAReleaseReachesTheConnection sets a deadline
// while the limiter releases the connection (hijacked or closed), the two
// released together on two threads, many times over: whichever comes
// first, the deadline must end on the connection, which no sweep looks
// at any more.
func TestDeadline_ASetRacingAReleaseReachesTheConnection(t *testing.T) {
	l := New(Config{Max: 1})
	l.now.Store(1000)
	var d deadline
	var onConn atomic.Int64 // what apply last gave the connection, 0 none
	apply := func(t time.Time) error {
		if t.IsZero() {
			onConn.Store(0)
		} else {
			onConn.Store(t.UnixNano())
		}
		return nil
	}
	const runs = 50000
	var round, released atomic.Int64
	go func() {
		for i := int64(1); i <= runs; i++ {
			for round.Load() != i { // spin: released with the set below
			}
			d.release(apply)
			released.Store(i)
		}
	}()
	for i := int64(1); i <= runs; i++ {
		d = deadline{}
		onConn.Store(0)
		round.Store(i)
		if err := d.set(l, time.Unix(0, 3000), apply); err != nil {
			t.Fatal(err)
		}
		for released.Load() != i {
		}
		if got := onConn.Load(); got != 3000 {
			t.Fatalf("run %d: the connection carries %d, want the deadline 3000 (the limiter holds %d)", i, got, d.want.Load())
		}
	}
}
