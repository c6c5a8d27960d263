// A deadline on each answer, from its first byte: a client that does not
// read cannot hold its connection, and the answer's memory, for the
// server's whole write timeout.

package connlimit

import (
	"net/http"
	"time"
)

// AnswerWithin has every answer of h written within d of its first byte
// (its status line), else its connection is closed. The server's write
// timeout must outlast the longest fault delay, which comes before the
// answer (11 minutes); without this, a client that asked for a large
// answer and read none of it held the connection and the whole answer in
// memory that long.
func AnswerWithin(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&answerWriter{ResponseWriter: w, d: d}, r)
	})
}

// answerWriter sets its connection's write deadline at the answer's
// first byte.
type answerWriter struct {
	http.ResponseWriter
	d       time.Duration
	started bool
}

// deadliner is what http.ResponseController calls; the server's writer
// has it, and asking it directly saves the controller's allocation.
type deadliner interface{ SetWriteDeadline(time.Time) error }

func (a *answerWriter) start() {
	if a.started {
		return
	}
	a.started = true
	if dw, ok := a.ResponseWriter.(deadliner); ok {
		_ = dw.SetWriteDeadline(time.Now().Add(a.d))
	}
}

func (a *answerWriter) WriteHeader(status int) {
	a.start()
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.start()
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer (the
// reset fault hijacks the connection through it).
func (a *answerWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
