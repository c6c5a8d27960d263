// Package largeanswertest gives tests of large answers what they take to
// make a server hold one: the create of the largest payment a client may
// send, so that a page of them is large, and a connection that reads
// nothing, so that such a page waits in the server for its client.
package largeanswertest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// BigCreate is a create, as key, of the largest payment a client may send
// to the server at addr: about 28 kB, 50 metadata values of 500
// characters, so that 100 of them make a page of 2.9 MB.
func BigCreate(tb testing.TB, addr, key string) *http.Request {
	tb.Helper()
	md := make([]string, 50)
	for i := range md {
		md[i] = fmt.Sprintf("%q: %q", fmt.Sprintf("k%02d", i)+strings.Repeat("x", 37), strings.Repeat("v", 500))
	}
	body := `{"amount": 10, "currency": "USD", "description": "` + strings.Repeat("d", 1000) + `", "expires_in": 3600, "mcc": 5732,
		"customer": {"email": "ada@example.com", "name": "Ada"}, "metadata": {` + strings.Join(md, ", ") + `},
		"success_url": "https://shop.example/success", "cancel_url": "https://shop.example/cancel"}`
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/payments", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// DialSmallWindow connects to addr with a receive window of 4 KiB, set
// before it connects: the kernel's buffers cannot take a large answer for
// it, so the server's write waits on a client that reads nothing and the
// answer stays in the server. It is closed at the test's end, before a
// server the test started earlier is (cleanups run last first).
func DialSmallWindow(tb testing.TB, addr string) net.Conn {
	tb.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}
