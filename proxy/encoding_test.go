// Tests of compressed and oversized answers through the proxy, over real
// HTTP, in front of a paymock whose answers a compressing layer encodes
// as a CDN would.

package proxy

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paymock/paymock/internal/upstreamtest"
	"github.com/paymock/paymock/paymocktest"
)

// compressing is a deployment stand-in: a real paymock behind a layer
// that encodes each answer with the first coding of the request's
// Accept-Encoding it knows (br stands for any coding the proxy cannot
// read: its body is the plain answer under that name, as a server that
// mislabels would send). It remembers the Accept-Encoding it was sent.
type compressing struct {
	mu   sync.Mutex
	seen []string
	// force, when set, is the coding of every answer, asked for or not.
	force string
}

// serve starts the layer in front of the paymock at base.
func (c *compressing) serve(t *testing.T, base string) *httptest.Server {
	return upstreamtest.Layer{Forward: c.forward, Answer: c.encode}.Serve(t, base)
}

// forward remembers the Accept-Encoding sent and asks the paymock for
// its plain answer.
func (c *compressing) forward(out *http.Request) {
	c.mu.Lock()
	c.seen = append(c.seen, out.Header.Get("Accept-Encoding"))
	c.mu.Unlock()
	out.Header.Del("Accept-Encoding")
}

// encode encodes the answer to r in the coding chosen for it.
func (c *compressing) encode(r *http.Request, header http.Header, body []byte) []byte {
	coding := c.force
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if coding == "" && (name == "br" || name == "gzip" || name == "deflate") {
			coding = name
		}
	}
	var buf bytes.Buffer
	switch coding {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	case "deflate":
		zw := zlib.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	if coding != "" {
		header.Set("Content-Encoding", coding)
	}
	return body
}

func (c *compressing) accepted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// sendEncoded sends a GET with an Accept-Encoding of its own; Go's
// client then hands back the body as it came.
func sendEncoded(t *testing.T, url, key, acceptEncoding string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept-Encoding", acceptEncoding)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

func TestProxy_CompressedAnswersAreCheckedDecodedAndPassedOnEncoded(t *testing.T) {
	for _, tc := range []struct {
		name, clientAccepts, upstreamGets, coding string
	}{
		// curl --compressed: the upstream would pick br, whose body the
		// proxy could not check; it is offered what the proxy reads.
		{"curl --compressed", "deflate, gzip, br, zstd", "deflate, gzip", "deflate"},
		{"br first, weights kept", "br;q=1.0, gzip;q=0.8", "gzip;q=0.8", "gzip"},
		{"any coding", "*", "gzip, deflate", "gzip"},
		{"only codings the proxy cannot read", "br, zstd", "identity", ""},
		{"gzip", "gzip", "gzip", "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := paymocktest.New(t, paymocktest.AllowViolations())
			up := &compressing{}
			upSrv := up.serve(t, s.URL)
			_, base := startProxy(t, Config{Upstream: upSrv.URL})
			session(t, base, s.APIKey)
			a := sendEncoded(t, base+"/api/v1/payments", s.APIKey, tc.clientAccepts)
			if a.status != 200 || a.header.Get("Content-Encoding") != tc.coding {
				t.Fatalf("list through the proxy: %d, Content-Encoding %q; want 200 and %q", a.status, a.header.Get("Content-Encoding"), tc.coding)
			}
			if got := up.accepted(); got[len(got)-1] != tc.upstreamGets {
				t.Errorf("the upstream was sent Accept-Encoding %q, want %q", got[len(got)-1], tc.upstreamGets)
			}
			plain, _, err := decoded(a.header, a.body, DefaultAnswerLimit)
			if err != nil || !bytes.HasPrefix(plain, []byte(`{"items":[`)) {
				t.Errorf("the client's answer does not decode to the list: %v %q", err, a.body)
			}
			// The session's typo is the one violation: the encoded answers
			// were read and found conformant.
			r := report(t, base, s.APIKey)
			if got := sides(r); got["upstream"] != 0 || r.ViolatingCalls != 1 {
				t.Errorf("violations by side %v, violating calls %d; want none of the upstream and 1 call", got, r.ViolatingCalls)
			}
		})
	}
}

func TestProxy_AnAnswerInACodingItCannotReadIsNamedNotCalledInvalidJSON(t *testing.T) {
	s := paymocktest.New(t)
	up := &compressing{force: "br"}
	upSrv := up.serve(t, s.URL)
	_, base := startProxy(t, Config{Upstream: upSrv.URL})
	a := sendEncoded(t, base+"/api/v1/payments", s.APIKey, "gzip")
	if a.status != 200 || a.header.Get("Content-Encoding") != "br" {
		t.Fatalf("list through the proxy: %d %q, want the upstream's 200 br answer", a.status, a.header.Get("Content-Encoding"))
	}
	r := report(t, base, s.APIKey)
	var codes []string
	for _, op := range r.Operations {
		for _, v := range op.Violations {
			codes = append(codes, v.Side+" "+v.Code)
		}
	}
	if len(codes) != 1 || codes[0] != "upstream content_encoding" {
		t.Errorf("violations %q, want one upstream content_encoding", codes)
	}
}

func TestProxy_AnAnswerPastTheLimitIsA502NotABodyCutShort(t *testing.T) {
	s := paymocktest.New(t)
	_, base := startProxy(t, Config{Upstream: s.URL, AnswerLimit: 1 << 10})
	a := send(t, "GET", base+"/api/v1/payments/pay_000000000000000000000000", s.APIKey, "")
	if a.status != 404 {
		t.Fatalf("a short answer: %d %s, want the upstream's 404", a.status, a.body)
	}
	// Ten payments listed are well past 1 KiB.
	for range 10 {
		send(t, "POST", base+"/api/v1/payments", s.APIKey, createBody)
	}
	a = send(t, "GET", base+"/api/v1/payments", s.APIKey, "")
	if a.status != http.StatusBadGateway || !strings.Contains(string(a.body), `"code":"upstream_answer_too_large"`) ||
		!strings.Contains(string(a.body), "larger than 1024 bytes") {
		t.Errorf("a long answer: %d %s, want 502 upstream_answer_too_large", a.status, a.body)
	}
}
