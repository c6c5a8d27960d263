// Tests of HEAD: a GET's answer without its body, on a connection kept.

package sandbox

import (
	"net/http"
	"net/http/httptrace"
	"testing"
)

func TestHTTP_HeadAnswersLikeGetWithoutABody(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	for _, path := range []string{"/api/v1/payments", "/api/v1/payments/" + id, "/_sandbox/clock", "/healthz"} {
		get := env.request("GET", path, keyA, nil)
		gresp, err := http.DefaultClient.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		gbody := readAll(t, gresp)
		head := env.request("HEAD", path, keyA, nil)
		hresp, err := http.DefaultClient.Do(head)
		if err != nil {
			t.Fatal(err)
		}
		hbody := readAll(t, hresp)
		if hresp.StatusCode != gresp.StatusCode || hbody != "" || hresp.Header.Get("Content-Type") != gresp.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q %q, GET: %d %q", path, hresp.StatusCode, hbody, hresp.Header.Get("Content-Type"), gresp.StatusCode, gresp.Header.Get("Content-Type"))
		}
		// Under rotating variants the GET and the HEAD may get different
		// wire forms, and so different lengths.
		if hresp.ContentLength != int64(len(gbody)) && path != "/healthz" && !env.normalize {
			t.Errorf("HEAD %s: length %d, GET's body %d", path, hresp.ContentLength, len(gbody))
		}
	}
}

// A HEAD leaves its connection open for the next request, as a GET does:
// clients that keep connections alive (Python's http.client, Go's
// transport) would otherwise find it closed under them.
func TestHTTP_HeadKeepsTheConnection(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for i, tc := range []struct{ method, path string }{
		{"HEAD", "/api/v1/payments"}, {"HEAD", "/api/v1/payments/" + id}, {"HEAD", "/_sandbox/clock"}, {"GET", "/api/v1/payments"},
	} {
		var reused bool
		req := env.request(tc.method, tc.path, keyA, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %d", tc.method, tc.path, resp.StatusCode)
		}
		if i > 0 && !reused {
			t.Errorf("%s %s: a new connection; the HEAD before it closed the last one", tc.method, tc.path)
		}
	}
}
