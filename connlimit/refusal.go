// net/http's own refusals of requests it cannot parse (headers too large,
// a malformed request line or header, an unknown transfer coding), which
// it writes to the connection before any handler runs, reworded by the
// server that holds the connection.

package connlimit

import (
	"bytes"
	"net/http"
	"strconv"
)

// Refusal words a refusal of net/http: status is its code, reason what
// net/http says of it (as "400 Bad Request: missing required Host header"
// or "Unsupported transfer encoding"). It returns the answer's Content-Type
// and body.
type Refusal func(status int, reason string) (contentType string, body []byte)

// refusalHeaders are the headers net/http writes, and only writes, after
// the status line of a refusal: a handler's answer always has a Date.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// reword returns the answer b says in the words of f, when b is one of
// net/http's refusals whole (net/http writes each in one Write).
func reword(f Refusal, b []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(b, []byte(proto)) {
		return nil, false
	}
	end := bytes.IndexByte(b, '\r')
	if end < len(proto)+3 || !bytes.HasPrefix(b[end:], []byte(refusalHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(b[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	ct, body := f(status, string(b[end+len(refusalHeaders):]))
	out := make([]byte, 0, 128+len(body))
	out = append(out, proto...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(status)...)
	out = append(out, "\r\nContent-Type: "...)
	out = append(out, ct...)
	out = append(out, "\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"...)
	return append(out, body...), true
}
