// Tests that the compiled checks of parameters and security never pass
// what kin-openapi refuses.

package contract

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// paramRoute is one operation of a document as a route, its path
// parameters to be filled in.
type paramRoute struct {
	doc   *Document
	route *routers.Route
	names []string // path parameters
}

func paramRoutes(t testing.TB) []paramRoute {
	t.Helper()
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var out []paramRoute
	for _, d := range []*Document{docs.Service, docs.Sandbox} {
		d.ready()
		for _, p := range d.doc.Paths.InMatchingOrder() {
			item := d.doc.Paths.Value(p)
			methods := make([]string, 0)
			for m := range item.Operations() {
				methods = append(methods, m)
			}
			slices.Sort(methods)
			for _, m := range methods {
				pr := paramRoute{doc: d, route: &routers.Route{Spec: d.doc, Path: p, PathItem: item, Method: m, Operation: item.GetOperation(m)}}
				for _, seg := range strings.Split(p, "/") {
					if strings.HasPrefix(seg, "{") {
						pr.names = append(pr.names, strings.Trim(seg, "{}"))
					}
				}
				out = append(out, pr)
			}
		}
	}
	return out
}

// verdicts are the compiled answer and kin's on one request, the body
// left out of both.
func (pr paramRoute) verdicts(t testing.TB, value, query string, authenticated bool) (compiled bool, kin error) {
	t.Helper()
	r := httptest.NewRequest(pr.route.Method, "/", nil)
	r.URL.RawQuery = query
	params := map[string]string{}
	for _, n := range pr.names {
		params[n] = value
	}
	rt := &Route{Route: pr.route, Params: params}
	compiled = pr.doc.paramsValid(r, rt, authenticated)
	ctx := context.WithValue(context.Background(), authKey{}, authenticated)
	kin = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: pr.route, Options: pr.doc.reqOptsNoBody})
	return compiled, kin
}

func TestParams_NeverPassWhatKinRefuses(t *testing.T) {
	values := []string{"pay_eX4wfP3t53uWYeLytOXuTdQK", "", "x", strings.Repeat("a", 255), strings.Repeat("a", 256), "é", "a/b", "evt_" + strings.Repeat("x", 24)}
	queries := []string{"", "page=2", "page=", "per_page=0", "x=1"}
	routes := paramRoutes(t)
	fast := 0
	for _, pr := range routes {
		for _, v := range values {
			for _, q := range queries {
				for _, auth := range []bool{true, false} {
					compiled, kin := pr.verdicts(t, v, q, auth)
					if compiled && kin != nil {
						t.Errorf("%s %s id=%q query=%q auth=%v: compiled valid, kin refuses: %v", pr.route.Method, pr.route.Path, v, q, auth, kin)
					}
					if compiled {
						fast++
					}
				}
			}
		}
	}
	// The model must cover the hot operations, or this test proves nothing.
	for _, op := range []string{"retrievePayment", "createPayment", "listPayments"} {
		i := slices.IndexFunc(routes, func(pr paramRoute) bool { return pr.route.Operation.OperationID == op })
		if i < 0 {
			t.Fatalf("no operation %s", op)
		}
		if c, kin := routes[i].verdicts(t, "pay_eX4wfP3t53uWYeLytOXuTdQK", "", true); !c || kin != nil {
			t.Errorf("%s, a plain authenticated call: compiled %v, kin %v; want both to pass", op, c, kin)
		}
		if c, _ := routes[i].verdicts(t, "pay_eX4wfP3t53uWYeLytOXuTdQK", "", false); c {
			t.Errorf("%s without a key: compiled valid", op)
		}
	}
	if fast == 0 {
		t.Fatal("the compiled checks passed nothing")
	}
}

// FuzzParams_NeverPassWhatKinRefuses compares the compiled checks of
// parameters and security with kin on the same request.
func FuzzParams_NeverPassWhatKinRefuses(f *testing.F) {
	routes := paramRoutes(f)
	f.Add(uint16(0), "pay_eX4wfP3t53uWYeLytOXuTdQK", "", true)
	f.Add(uint16(3), "", "page=1", false)
	f.Add(uint16(7), strings.Repeat("z", 300), "", true)
	f.Fuzz(func(t *testing.T, which uint16, value, query string, authenticated bool) {
		pr := routes[int(which)%len(routes)]
		if compiled, kin := pr.verdicts(t, value, query, authenticated); compiled && kin != nil {
			t.Fatalf("%s %s id=%q query=%q auth=%v: compiled valid, kin refuses: %v", pr.route.Method, pr.route.Path, value, query, authenticated, kin)
		}
	})
}

func TestValidateRequest_FastPathKeepsRefusals(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		auth       bool
		want       string // "" for valid, else a substring of the error
	}{
		{"valid id", "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", true, ""},
		{"no key", "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", false, ErrUnauthenticated.Error()},
		{"id too long", "/api/v1/payments/" + strings.Repeat("a", 256), true, "id"},
		{"page zero", "/api/v1/payments?page=0", true, "page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			rt, err := docs.Service.Match(r)
			if err != nil {
				t.Fatal(err)
			}
			err = docs.Service.ValidateRequest(r.Context(), r, rt, nil, tc.auth)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
