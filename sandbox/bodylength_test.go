// Tests of a body whose declared length is past the limit.

package sandbox

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A Content-Length past the body limit is answered 413 at once, without
// waiting for the bytes it announces, which a client may never send: the
// connection would be held until the server's read timeout.
func TestCreate_RefusesADeclaredLengthPastTheLimitAtOnce(t *testing.T) {
	env := newEnv(t)
	for _, length := range []string{"99999999999", "9223372036854775807"} {
		t.Run(length, func(t *testing.T) {
			conn, err := net.Dial("tcp", env.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Only a guard against hanging the test: the answer is due
			// before any more bytes are sent.
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			_, err = conn.Write([]byte("POST /api/v1/payments HTTP/1.1\r\nHost: paymock\r\nAuthorization: Bearer " + keyA +
				"\r\nContent-Type: application/json\r\nContent-Length: " + length + "\r\n\r\n{\"amount\":"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before more of the body came: %v", err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"code":"body_too_large"`) {
				t.Errorf("%d %s, want 413 body_too_large", resp.StatusCode, body)
			}
		})
	}
}
