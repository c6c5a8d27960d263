// Tests that a client holding connections open cannot lock other clients
// out of the server (connlimit), over real connections to the binary.

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/largeanswertest"
)

// connLimits hold a connection for longer than any of these tests, so
// that only the connection bound can close one.
var connLimits = serverLimits{
	readHeader:     safetyNet,
	read:           safetyNet,
	write:          safetyNet,
	answer:         safetyNet,
	idle:           safetyNet,
	maxHeaderBytes: 4 << 10,
	maxConns:       20,
}

// checkedDo makes req on a connection of its own and checks the answer
// against the contract of doc, failing the test on a broken one.
func checkedDo(t *testing.T, doc *contract.Document, req *http.Request) (int, []byte) {
	t.Helper()
	st, body, err := tryChecked(doc, req)
	if err != nil {
		t.Fatal(err)
	}
	return st, body
}

// tryChecked is checkedDo for another goroutine than the test's.
func tryChecked(doc *contract.Document, req *http.Request) (int, []byte, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: safetyNet}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: reading the answer: %w", req.Method, req.URL.Path, err)
	}
	rt, err := doc.Match(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: no route of the contract: %w", req.Method, req.URL.Path, err)
	}
	if err := doc.ValidateResponse(context.Background(), req, rt, resp.StatusCode, resp.Header, body); err != nil {
		return 0, nil, fmt.Errorf("%s %s: the answer breaks the contract: %w", req.Method, req.URL.Path, err)
	}
	return resp.StatusCode, body, nil
}

// listPayments is a GET /api/v1/payments with key.
func listPayments(t *testing.T, addr, key string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}

// handlerCounts count the requests of the sandbox's handler.
type handlerCounts struct {
	inside atomic.Int64 // under way
	done   atomic.Int64 // returned
}

// counting wraps the sandbox's handler to count its requests in n.
func counting(n *handlerCounts) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.inside.Add(1)
			defer func() {
				n.inside.Add(-1)
				n.done.Add(1)
			}()
			h.ServeHTTP(w, r)
		})
	}
}

// hold opens n connections to addr, each left as open does, and returns
// them.
func hold(t *testing.T, addr string, n int, open func(net.Conn) error) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := open(c); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

// stillOpen counts the connections the server has not closed: a read
// that times out finds the connection open, an end of file closed.
func stillOpen(conns []net.Conn) int {
	n := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			n++
		}
	}
	return n
}

func TestRun_ConnectionsPastTheBoundTakeThePlaceOfOnesServingNoRequest(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		open func(net.Conn) error
	}{
		{"kept alive after a request", func(c net.Conn) error {
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: paymock\r\n\r\n"); err != nil {
				return err
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		}},
		{"headers never finished", func(c net.Conn) error {
			_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: paymock\r\nX-Pad: ")
			return err
		}},
		{"nothing sent", func(net.Conn) error { return nil }},
	}
	// serve, and a proxy in front of a paymock: a proxy shared by teams
	// is held by as many clients.
	servers := []struct {
		name  string
		start func(t *testing.T) string
	}{
		{"serve", func(t *testing.T) string {
			return startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &connLimits}).addr
		}},
		{"proxy", func(t *testing.T) string {
			up := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
			return startRun(t, []string{"proxy", "--addr", "127.0.0.1:0", "--upstream", "http://" + up.addr}, nil, hooks{limits: &connLimits}).addr
		}},
	}
	for _, srv := range servers {
		for _, tt := range tests {
			t.Run(srv.name+"/"+tt.name, func(t *testing.T) {
				addr := srv.start(t)
				held := hold(t, addr, 2*connLimits.maxConns, tt.open)
				for i := range 5 {
					st, body := checkedDo(t, docs.Service, listPayments(t, addr, "sk_test_other"))
					if st != http.StatusOK {
						t.Fatalf("another client's request %d = %d %s, want 200", i, st, body)
					}
				}
				if n := stillOpen(held); n > connLimits.maxConns {
					t.Errorf("the %s holds %d of the %d connections, past its bound of %d", srv.name, n, len(held), connLimits.maxConns)
				}
			})
		}
	}
}

func TestRun_ARequestUnderWayIsNeverClosedForRoom(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var n handlerCounts
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &connLimits, wrap: counting(&n)})
	// A delay fault keeps the merchant's lists inside the handler.
	rule := `{"target": "api", "operation": "listPayments", "delay_ms": 3000}`
	addFaultRule(t, docs, r.addr, "sk_test_slow", rule)

	var wg sync.WaitGroup
	type answer struct {
		status int
		err    error
	}
	answers := make(chan answer, connLimits.maxConns)
	for range connLimits.maxConns {
		req := listPayments(t, r.addr, "sk_test_slow")
		wg.Go(func() {
			st, _, err := tryChecked(docs.Service, req)
			answers <- answer{st, err}
		})
	}
	// Once every connection held is inside the handler, a connection past
	// the bound is refused: closed before any answer.
	waitUntil(t, func() bool { return n.inside.Load() == int64(connLimits.maxConns) }, "every request to be inside the handler")
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: paymock\r\nConnection: close\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(safetyNet))
	reply, _ := io.ReadAll(c)
	_ = c.Close()
	refused := len(reply) == 0
	wg.Wait()
	close(answers)
	if !refused {
		t.Errorf("a connection past the bound was answered %q while every held one was inside the handler", reply)
	}
	for a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Errorf("a request under way was answered %d (%v), want 200 after its delay", a.status, a.err)
		}
	}
}

func TestRun_AnAnswerItsClientDoesNotReadIsCutAtItsDeadline(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	limits := connLimits
	limits.answer = 500 * time.Millisecond
	limits.write = 2 * safetyNet // past the test's waits: only the answer's deadline can cut it
	var n handlerCounts
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &limits, wrap: counting(&n)})
	for i := range 100 {
		if st, body := checkedDo(t, docs.Service, largeanswertest.BigCreate(t, r.addr, "sk_test_big")); st != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, st, body)
		}
	}
	page := "/api/v1/payments?per_page=100"
	req, err := http.NewRequest(http.MethodGet, "http://"+r.addr+page, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_test_big")
	if _, whole := checkedDo(t, docs.Service, req); len(whole) < 2<<20 {
		t.Fatalf("the page is %d bytes, want more than 2 MB", len(whole))
	}

	c := largeanswertest.DialSmallWindow(t, r.addr)
	// Three answers of 2.9 MB each, asked for at once: more than the
	// kernel's buffers take (4 MB at most on the sending side), so at
	// least one write waits on the client, which reads nothing. Every
	// handler, and the answer it holds, must be let go soon after its
	// answer's deadline, not at the write timeout.
	before := n.done.Load()
	start := time.Now()
	fmt.Fprint(c, strings.Repeat("GET "+page+" HTTP/1.1\r\nHost: paymock\r\nAuthorization: Bearer sk_test_big\r\n\r\n", 3))
	// Between two of the answers no handler runs for a moment; once none
	// has run for a second, the server has let the connection go.
	lastBusy := time.Now()
	waitUntil(t, func() bool {
		if n.done.Load() == before || n.inside.Load() > 0 {
			lastBusy = time.Now()
		}
		return time.Since(lastBusy) > time.Second
	}, "the handlers to return")
	if held := lastBusy.Sub(start); held > 3*limits.answer+5*time.Second {
		t.Errorf("answers not read held their handlers for %v, past their %v deadline", held, limits.answer)
	}
}

// waitUntil polls cond until it holds, failing the test after safetyNet.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(safetyNet)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", safetyNet, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRun_AResetFaultStillResetsTheConnection(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &connLimits})
	rule := `{"target": "api", "operation": "listPayments", "reset": true}`
	addFaultRule(t, docs, r.addr, "sk_test_reset", rule)
	// The rule hijacks the connection through the answer's writer, which
	// the answer deadline wraps: the client must see no answer at all.
	if st, body, err := tryChecked(docs.Service, listPayments(t, r.addr, "sk_test_reset")); err == nil {
		t.Errorf("GET /api/v1/payments under a reset rule answered %d %s, want the connection reset", st, body)
	}
}

// addFaultRule adds a fault rule for key's merchant through the control
// API, its answer checked against the contract.
func addFaultRule(t *testing.T, docs *contract.Documents, addr, key, rule string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/_sandbox/faults", strings.NewReader(rule))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if st, body := checkedDo(t, docs.Sandbox, req); st != http.StatusCreated {
		t.Fatalf("add the rule %s: %d %s", rule, st, body)
	}
}
