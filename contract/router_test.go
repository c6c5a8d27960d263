// Tests that the segment router routes exactly as gorillamux does.

package contract

import (
	"maps"
	"net/http"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/routers"
)

// sameRoute compares the segment router with gorillamux on one request
// of each document, and says how they differ.
func sameRoute(t testing.TB, method, rawPath string) {
	t.Helper()
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse("http://127.0.0.1" + rawPath)
	if err != nil || u.Host != "127.0.0.1" {
		return // not a request path
	}
	for _, d := range []*Document{docs.Service, docs.Sandbox} {
		d.ready()
		if d.segments == nil {
			t.Fatal("a document has no segment router: every request goes through gorillamux")
		}
		r := &http.Request{Method: method, URL: u, Header: http.Header{}, Host: u.Host}
		got, gotParams, gotErr := d.segments.FindRoute(r)
		want, wantParams, wantErr := d.router.FindRoute(r)
		if gotErr != wantErr {
			t.Fatalf("%s %q: error %v, gorillamux %v", method, rawPath, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if got.Path != want.Path || got.Method != want.Method || got.Operation != want.Operation ||
			got.PathItem != want.PathItem || got.Server != want.Server || got.Spec != want.Spec {
			t.Fatalf("%s %q: route %s %s, gorillamux %s %s", method, rawPath, got.Method, got.Path, want.Method, want.Path)
		}
		if len(gotParams) != len(wantParams) {
			t.Fatalf("%s %q: params %v, gorillamux %v", method, rawPath, gotParams, wantParams)
		}
		for k, v := range wantParams {
			if gotParams[k] != v {
				t.Fatalf("%s %q: params %v, gorillamux %v", method, rawPath, gotParams, wantParams)
			}
		}
	}
}

func TestSegmentRouter_RoutesAsGorillamux(t *testing.T) {
	paths := []string{"/api/v1/payments", "/api/v1/payments/", "/api/v1/payments/pay_x", "/api/v1/payments/pay_x/", "/api/v1/payments//",
		"/api/v1/payments/a%2Fb", "/api/v1/payments/é", "/api/v1/payments/a/b", "/api/v1/payment", "/", "", "/_sandbox/payments/pay_x/complete",
		"/_sandbox/events", "/_sandbox/events/evt_1", "/_sandbox/clock", "/_sandbox/faults", "//api/v1/payments", "/api/v1/payments?x=1"}
	for _, p := range paths {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, "get", "BREW"} {
			sameRoute(t, m, p)
		}
	}
	// Not every request may be a 404, or the comparison proves little.
	docs, _ := Embedded()
	rt, _, err := docs.Service.segments.FindRoute(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/api/v1/payments/pay_x"}})
	if err != nil || rt.Operation.OperationID != "retrievePayment" {
		t.Fatalf("retrieve routed to %v, %v", rt, err)
	}
	if _, _, err := docs.Service.segments.FindRoute(&http.Request{Method: http.MethodPatch, URL: &url.URL{Path: "/api/v1/payments"}}); err != routers.ErrMethodNotAllowed {
		t.Fatalf("PATCH on the collection: %v", err)
	}
}

// TestMatchTo_MatchesAsMatchIntoTheCallersRoute: MatchTo fills the
// caller's Route as Match returns one, with the same error where none
// matches, and a path of no parameters allocates nothing (no Route, no
// map of parameters).
func TestMatchTo_MatchesAsMatchIntoTheCallersRoute(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		allocs       float64 // -1: not counted
	}{
		{http.MethodPost, "/api/v1/payments", 0},
		{http.MethodGet, "/api/v1/payments", 0},
		{http.MethodGet, "/api/v1/payments/pay_a%2Fb", -1},
		{http.MethodPatch, "/api/v1/payments", -1},
		{http.MethodGet, "/api/v1/nothing", -1},
	} {
		r := &http.Request{Method: tc.method, URL: &url.URL{Path: tc.path}, Header: http.Header{}}
		want, wantErr := docs.Service.Match(r)
		var got Route
		gotErr := docs.Service.MatchTo(r, &got)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s %s: MatchTo error %v, Match %v", tc.method, tc.path, gotErr, wantErr)
		}
		if wantErr != nil {
			if got.Route != nil || got.Params != nil {
				t.Errorf("%s %s: a failed match changed the route: %+v", tc.method, tc.path, got)
			}
			continue
		}
		if got.Route != want.Route || !maps.Equal(got.Params, want.Params) {
			t.Errorf("%s %s: MatchTo %+v, Match %+v", tc.method, tc.path, got, *want)
		}
		if tc.allocs >= 0 {
			if n := testing.AllocsPerRun(100, func() { _ = docs.Service.MatchTo(r, &got) }); n != tc.allocs {
				t.Errorf("%s %s: MatchTo made %v allocations, want %v", tc.method, tc.path, n, tc.allocs)
			}
		}
	}
}

// FuzzSegmentRouter_RoutesAsGorillamux compares the two routers on the
// same request.
func FuzzSegmentRouter_RoutesAsGorillamux(f *testing.F) {
	for _, p := range []string{"/api/v1/payments", "/api/v1/payments/pay_x", "/_sandbox/payments/pay_x/complete", "/api/v1/payments/a%2Fb/"} {
		f.Add(uint8(0), p)
	}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, "get"}
	f.Fuzz(func(t *testing.T, m uint8, path string) {
		sameRoute(t, methods[int(m)%len(methods)], path)
	})
}
