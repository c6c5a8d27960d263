// Package upstreamtest gives tests a stand-in for a deployment: a server
// that forwards every request to a real upstream (a paymock) and can
// change what it forwards and what it answers, as a cache, a CDN or a mock
// that answers its examples would.
package upstreamtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Layer is what the stand-in changes; its zero value forwards every
// request and answer as they are.
type Layer struct {
	// Target is the path and query to forward r to; nil keeps r's.
	Target func(r *http.Request) string
	// Forward edits the request sent upstream, whose header is a copy of
	// the incoming request's; nil sends it as it is.
	Forward func(out *http.Request)
	// Answer rewrites the answer to r before it is written: its body
	// (returned) and its header (in place; the upstream's Content-Length
	// is already dropped, as the body may change). nil keeps both.
	Answer func(r *http.Request, header http.Header, body []byte) []byte
}

// Serve starts the stand-in in front of the upstream at base (a URL with
// no path) and closes it when the test ends. The upstream's answers are
// read whole before they are changed; a request that cannot be forwarded
// is a 500, an upstream that does not answer a 502.
func (l Layer) Serve(t testing.TB, base string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.URL.RequestURI()
		if l.Target != nil {
			target = l.Target(r)
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, base+target, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out.Header = r.Header.Clone()
		if l.Forward != nil {
			l.Forward(out)
		}
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		if l.Answer != nil {
			body = l.Answer(r, w.Header(), body)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}
