// Tests of HEAD through the proxy, over real HTTP: its answer is checked
// as its GET's, status and headers, with no body.

package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymock/paymock/paymocktest"
)

// headUpstream answers every HEAD with status and header, as a deployment
// (or Prism, which answers HEAD with 405) would.
func headUpstream(t *testing.T, status int, header http.Header) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			http.Error(w, "this upstream answers HEAD only", http.StatusTeapot)
			return
		}
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProxy_AHeadIsCheckedAsItsGetWithoutTheBody(t *testing.T) {
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name   string
		path   string
		status int
		header http.Header
		want   []string // operation side param code, of the one exchange
	}{
		{name: "a 200 with the GET's JSON passes", path: "/api/v1/payments", status: 200, header: jsonCT},
		{name: "a 200 without a Content-Type passes", path: "/api/v1/payments/pay_000000000000000000000001", status: 200, header: http.Header{}},
		{name: "a gzip Content-Encoding with no body to decode passes", path: "/api/v1/payments", status: 200,
			header: http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}},
		{name: "a 404 of retrieve passes", path: "/api/v1/payments/pay_000000000000000000000001", status: 404, header: jsonCT},
		{name: "a 405, as Prism answers, is a status the GET does not declare", path: "/api/v1/payments", status: 405,
			header: http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, POST"}},
			want:   []string{"listPayments upstream  status_undeclared"}},
		{name: "a 404 of list is a status the GET does not declare", path: "/api/v1/payments", status: 404, header: jsonCT,
			want: []string{"listPayments upstream  status_undeclared"}},
		{name: "a 200 of another media type is not the GET's", path: "/api/v1/payments", status: 200,
			header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
			want:   []string{"listPayments upstream  content_type"}},
		{name: "a declared header out of its schema is named", path: "/api/v1/payments", status: 429,
			header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"soon"}},
			want:   []string{"listPayments upstream  header_invalid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := startProxy(t, Config{Upstream: headUpstream(t, tc.status, tc.header)})
			a := send(t, http.MethodHead, base+tc.path, "sk_test_head", "")
			if a.status != tc.status || len(a.body) != 0 {
				t.Fatalf("the client got %d with %d bytes, want the upstream's %d and no body", a.status, len(a.body), tc.status)
			}
			r := report(t, base, "sk_test_head")
			var found []string
			for _, op := range r.Operations {
				for _, v := range op.Violations {
					found = append(found, op.OperationID+" "+v.Side+" "+v.Param+" "+v.Code)
				}
			}
			if strings.Join(found, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations %q, want %q", found, tc.want)
			}
			if r.Calls != 1 {
				t.Errorf("%d calls journaled, want the HEAD", r.Calls)
			}
		})
	}
}

func TestProxy_AHeadToAPaymockPassesAndAStatusMessageSaysItIsTheGets(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	_, base := startProxy(t, Config{Upstream: s.URL})
	for _, path := range []string{"/api/v1/payments", "/api/v1/payments?per_page=5", "/api/v1/payments/pay_000000000000000000000001"} {
		send(t, http.MethodHead, base+path, s.APIKey, "")
	}
	if r := report(t, base, s.APIKey); r.Calls != 3 || r.ViolatingCalls != 0 {
		t.Errorf("HEADs to a paymock: %d calls, %d violating; want 3 and 0: %+v", r.Calls, r.ViolatingCalls, r.Operations)
	}

	_, base = startProxy(t, Config{Upstream: headUpstream(t, http.StatusMethodNotAllowed, nil)})
	send(t, http.MethodHead, base+"/api/v1/payments", "sk_test_head", "")
	a := send(t, http.MethodGet, base+"/_sandbox/requests", "sk_test_head", "")
	for _, want := range []string{`"method":"HEAD"`, `status 405 is not declared for listPayments, whose GET a HEAD asks for without the body`} {
		if !strings.Contains(string(a.body), want) {
			t.Errorf("the journal does not say %q: %s", want, a.body)
		}
	}
}
