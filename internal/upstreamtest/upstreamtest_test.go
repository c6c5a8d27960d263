// Tests of the stand-in layer: what it forwards and what it answers.

package upstreamtest_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/upstreamtest"
)

// echo answers with what it was sent: method, target, the X-Test header
// and the body, with a header of its own.
func echo(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Upstream", "yes")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.RequestURI(), r.Header.Get("X-Test"), body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLayer_ChangesOnlyWhatItIsAskedTo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		layer upstreamtest.Layer
		// want: the answer's status, body, and its X-Upstream and X-Layer
		// headers.
		status                 int
		body, upstream, xLayer string
	}{
		{name: "the zero layer forwards as it is", status: http.StatusTeapot,
			body: "POST /a?b=c sent payload", upstream: "yes"},
		{name: "a target sends the request elsewhere",
			layer:  upstreamtest.Layer{Target: func(r *http.Request) string { return "/elsewhere" + r.URL.Path }},
			status: http.StatusTeapot, body: "POST /elsewhere/a sent payload", upstream: "yes"},
		{name: "forward edits the request sent upstream",
			layer:  upstreamtest.Layer{Forward: func(out *http.Request) { out.Header.Set("X-Test", "changed") }},
			status: http.StatusTeapot, body: "POST /a?b=c changed payload", upstream: "yes"},
		{name: "answer rewrites the body and the header",
			layer: upstreamtest.Layer{Answer: func(r *http.Request, h http.Header, body []byte) []byte {
				h.Set("X-Layer", r.Header.Get("X-Test"))
				h.Del("X-Upstream")
				return append(bytes.ToUpper(body), "!"...) // a longer body: the upstream's length must go
			}},
			status: http.StatusTeapot, body: "POST /A?B=C SENT PAYLOAD!", xLayer: "sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.layer.Serve(t, echo(t).URL)
			req, err := http.NewRequest("POST", srv.URL+"/a?b=c", strings.NewReader("payload"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Test", "sent")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || string(body) != tc.body ||
				resp.Header.Get("X-Upstream") != tc.upstream || resp.Header.Get("X-Layer") != tc.xLayer {
				t.Errorf("answered %d %q, X-Upstream %q, X-Layer %q; want %d %q, %q, %q", resp.StatusCode, body,
					resp.Header.Get("X-Upstream"), resp.Header.Get("X-Layer"), tc.status, tc.body, tc.upstream, tc.xLayer)
			}
			if resp.ContentLength != int64(len(body)) && resp.ContentLength != -1 {
				t.Errorf("Content-Length %d for a body of %d bytes", resp.ContentLength, len(body))
			}
		})
	}
}

func TestLayer_AnUpstreamThatDoesNotAnswerIsA502(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	srv := upstreamtest.Layer{}.Serve(t, gone.URL)
	resp, err := http.Get(srv.URL + "/api/v1/payments")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("answered %d, want 502", resp.StatusCode)
	}
}
