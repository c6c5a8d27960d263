// Tests that a client holding connections open cannot lock other clients
// out of the server (connlimit), over real connections to the binary.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock/contract"
)

// connLimits hold a connection for longer than any of these tests, so
// that only the connection bound can close one.
var connLimits = serverLimits{
	readHeader:     safetyNet,
	read:           safetyNet,
	write:          safetyNet,
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &connLimits})
			held := hold(t, r.addr, 2*connLimits.maxConns, tt.open)
			for i := range 5 {
				st, body := checkedDo(t, docs.Service, listPayments(t, r.addr, "sk_test_other"))
				if st != http.StatusOK {
					t.Fatalf("another client's request %d = %d %s, want 200", i, st, body)
				}
			}
			if n := stillOpen(held); n > connLimits.maxConns {
				t.Errorf("the server holds %d of the %d connections, past its bound of %d", n, len(held), connLimits.maxConns)
			}
		})
	}
}

func TestRun_ARequestUnderWayIsNeverClosedForRoom(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &connLimits})
	// A delay fault keeps the merchant's lists inside the handler.
	rule := `{"target": "api", "operation": "listPayments", "delay_ms": 1500}`
	req, err := http.NewRequest(http.MethodPost, "http://"+r.addr+"/_sandbox/faults", strings.NewReader(rule))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_test_slow")
	req.Header.Set("Content-Type", "application/json")
	if st, body := checkedDo(t, docs.Sandbox, req); st != http.StatusCreated {
		t.Fatalf("add the delay rule: %d %s", st, body)
	}

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
	// Every connection is inside the handler once the server holds the
	// bound: a connection past it is refused, closed before any answer.
	deadline := time.Now().Add(safetyNet)
	var refused bool
	for !refused && time.Now().Before(deadline) {
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: paymock\r\nConnection: close\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(safetyNet))
		reply, _ := io.ReadAll(c)
		_ = c.Close()
		refused = len(reply) == 0
		if !refused && !bytes.HasPrefix(reply, []byte("HTTP/1.1 200")) {
			t.Fatalf("GET /healthz answered %q", reply)
		}
	}
	wg.Wait()
	close(answers)
	if !refused {
		t.Error("a connection past the bound was served while every held one was inside the handler")
	}
	for a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Errorf("a request under way was answered %d (%v), want 200 after its delay", a.status, a.err)
		}
	}
}
