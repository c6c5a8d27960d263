// Tests that net/http's own refusals reach the client in the words of the
// limiter's Refusal, over real loopback connections.

package connlimit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange sends raw on a connection of its own to addr and reads the
// one answer.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(safetyNet))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, string(body)
}

func TestConn_NetHTTPsOwnRefusalsAreReworded(t *testing.T) {
	l := New(Config{Max: 8, Refusal: func(status int, reason string) (string, []byte) {
		return "application/json", fmt.Appendf(nil, `{"status":%d,"reason":%q}`, status, reason)
	}})
	srv := &http.Server{MaxHeaderBytes: 1 << 10, ReadHeaderTimeout: safetyNet,
		Handler: l.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			// A handler's own plain-text answer is its own: never reworded.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "418 I'm a teapot")
		}))}
	addr := serve(t, l, srv)

	tests := []struct {
		name   string
		raw    string
		status int
		body   string // "" for the handler's own answer
	}{
		{"headers past the bound", "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("x", 8<<10) + "\r\n\r\n",
			431, `{"status":431,"reason":"431 Request Header Fields Too Large"}`},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n",
			400, `{"status":400,"reason":"400 Bad Request: missing required Host header"}`},
		{"a header line without a colon", "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
			400, `{"status":400,"reason":"400 Bad Request"}`},
		{"an unknown transfer coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
			501, `{"status":501,"reason":"Unsupported transfer encoding"}`},
		{"HTTP/2 over a plain HTTP/1 connection", "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
			505, `{"status":505,"reason":"505 HTTP Version Not Supported: unsupported protocol version"}`},
		{"a handler's own plain-text answer", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusTeapot, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawExchange(t, addr, tt.raw)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.status, body)
			}
			if tt.body == "" {
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || body != "418 I'm a teapot" {
					t.Errorf("the handler's answer came as %q %q, want it untouched", ct, body)
				}
				return
			}
			if body != tt.body {
				t.Errorf("body %s, want %s", body, tt.body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want the Refusal's application/json", ct)
			}
			if resp.ContentLength != int64(len(body)) {
				t.Errorf("Content-Length %d, want the body's %d", resp.ContentLength, len(body))
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			if got := resp.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			if !resp.Close {
				t.Error("the connection is kept, want it closed as net/http closes it")
			}
		})
	}
}
