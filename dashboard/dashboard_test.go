// Tests of the dashboard as a whole: its config, security headers, every page, the requests page.

package dashboard_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
)

func TestSecurityHeaders_OnEveryAnswer(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	const csp = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	check := func(what string, p page) {
		t.Helper()
		if got := p.header.Get("Content-Security-Policy"); got != csp {
			t.Errorf("%s: CSP %q", what, got)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: nosniff %q, referrer %q", what, p.header.Get("X-Content-Type-Options"), p.header.Get("Referrer-Policy"))
		}
	}
	for _, path := range append(allPages(h, b), "/dashboard/nowhere", "/dashboard/assets/dashboard.css") {
		check("GET "+path, b.get(path))
	}
	anon := h.browser()
	check("sign-in form", anon.get("/dashboard/sign-in"))
	check("signed-out redirect", anon.get("/dashboard/payments"))
	check("refused post", b.post("/dashboard/api-keys", nil))
	check("wrong method", b.get("/dashboard/sign-out"))
}

func TestPages_RenderWithData(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_2", At: "2026-03-01T12:00:02Z", Method: "POST", Path: "/api/v1/payments", Operation: "createPayment", Status: 400,
			Violations: []paymock.Violation{{Param: "customer.email", Code: "parameter_missing", Message: "customer.email is required"}}},
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments", Query: "page=1", Operation: "listPayments", Status: 200},
	}
	h.fake.reports["acme"] = dashboard.Report{
		Calls: 2, ViolatingCalls: 1,
		Coverage: dashboard.ReportCoverage{Operations: 2.0 / 3, OperationsExercised: 2, OperationsTotal: 3, Statuses: 0.25, StatusesExercised: 2, StatusesTotal: 8},
		Operations: []dashboard.ReportOperation{{OperationID: "createPayment", Method: "POST", Path: "/api/v1/payments", Calls: 1, ViolatingCalls: 1,
			Statuses:   []dashboard.ReportStatus{{Status: 400, Declared: true, Count: 1}, {Status: 201, Declared: true}},
			Violations: []dashboard.ReportViolation{{Param: "customer.email", Code: "parameter_missing", Message: "customer.email is required", Count: 1}}}},
	}
	b := h.browser()
	b.signIn(acmeKey)
	paths := allPages(h, b)
	wants := map[string][]string{
		"/dashboard/payments":  {"ada@example.com", "$10.50", "pending"},
		"/dashboard/api-keys":  {"sk_test_…cdef", "configuration"},
		"/dashboard/webhooks":  {"https://hooks.example/in", "enabled"},
		"/dashboard/clock":     {"1 Mar 2026, 12:00:00 UTC", "frozen"},
		"/dashboard/requests":  {"POST /api/v1/payments", "customer.email is required", "GET /api/v1/payments?page=1"},
		"/dashboard/report":    {"2 of 3 (67%)", "2 of 8 (25%)", "createPayment", "parameter_missing, 1×"},
		"/dashboard/webhooks/": {"https://hooks.example/in", "No deliveries yet"},
	}
	for _, path := range paths {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Errorf("GET %s: %d: %q", path, p.status, p.text())
			continue
		}
		key := path
		if strings.HasPrefix(path, "/dashboard/webhooks/") {
			key = "/dashboard/webhooks/"
		}
		for _, want := range wants[key] {
			if !strings.Contains(p.text(), want) {
				t.Errorf("GET %s: no %q on the page", path, want)
			}
		}
		if find(p.doc, "aria-current", "page") == nil && !strings.HasPrefix(path, "/dashboard/payments/") {
			t.Errorf("GET %s: no navigation entry is marked current", path)
		}
	}
	req := b.get("/dashboard/requests")
	if rows := findAll(req.doc, "data-violations", "1"); len(rows) != 1 || attrOf(rows[0], "data-request-id") != "req_2" {
		t.Errorf("requests: the violating request is not highlighted")
	}
	only := b.get("/dashboard/requests?violations=1")
	if strings.Contains(only.text(), "listPayments") {
		t.Error("requests with violations only: lists a request without any")
	}
}

func TestNew_RefusesAnIncompleteConfig(t *testing.T) {
	f := newFakeSandbox()
	full := dashboard.Config{Auth: f, Payments: f, Lifecycle: f, Clock: f, Events: f, Keys: f, Endpoints: f, Journal: f, StylesheetURL: "/assets/page.css"}
	tests := []struct {
		name string
		edit func(*dashboard.Config)
		want string
	}{
		{"no journal", func(c *dashboard.Config) { c.Journal = nil }, "Config.Journal"},
		{"no stylesheet", func(c *dashboard.Config) { c.StylesheetURL = "" }, "StylesheetURL"},
		{"a relative public URL", func(c *dashboard.Config) { c.PublicURL = "sandbox.example" }, "PublicURL"},
		{"a negative idle time", func(c *dashboard.Config) { c.SessionIdle = -time.Second }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := full
			tt.edit(&cfg)
			if _, err := dashboard.New(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error naming %s", err, tt.want)
			}
		})
	}
	if _, err := dashboard.New(full); err != nil {
		t.Errorf("New with every field: %v", err)
	}
}

func TestRequests_InjectedAnswersSayWhatInjectedThem(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_3", At: "2026-03-01T12:00:03Z", Method: "POST", Path: "/api/v1/payments", Operation: "createPayment", Status: 0,
			InjectedBy: "faults file faults.yaml:3: reset"},
		{ID: "req_2", At: "2026-03-01T12:00:02Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 429,
			InjectedBy: "control API rule flt_abc: status=429; retry_after=3"},
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 503,
			InjectedBy: "Paymock-Fault header: status=503"},
		{ID: "req_0", At: "2026-03-01T12:00:00Z", Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 503},
	}
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/requests")
	want := map[string]string{
		"req_3": "Injected on purpose by the faults file faults.yaml:3: reset",
		"req_2": "Injected on purpose by the control API rule flt_abc: status=429; retry_after=3",
		"req_1": "Injected on purpose by the Paymock-Fault header: status=503",
		"req_0": "",
	}
	for id, note := range want {
		row := find(p.doc, "data-request-id", id)
		if row == nil {
			t.Fatalf("no row of %s", id)
		}
		got := textOf(find(row, "data-field", "injected-by"))
		if got != note {
			t.Errorf("%s says %q, want %q", id, got, note)
		}
		marked := attrOf(row, "class") == "injected" && strings.Contains(textOf(row), "injected")
		if marked != (note != "") {
			t.Errorf("%s: marked injected %v, want %v", id, marked, note != "")
		}
	}
	if !strings.Contains(textOf(find(p.doc, "data-request-id", "req_3")), "reset") {
		t.Error("a reset answer (status 0) does not say reset")
	}
}

func TestRequests_RoutesBreakOnlyAfterASlash(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments/{id}<b>x", Query: "page=2&per_page=1", Status: 404},
	}
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/requests")
	code := find(p.doc, "data-field", "route")
	if code == nil {
		t.Fatal("no route on the page")
	}
	// The pieces a line may end after, in order: each kept whole.
	var pieces []string
	walk(code, func(n *htmlNode) {
		if n.Data == "span" && attrOf(n, "class") == "nowrap" {
			pieces = append(pieces, textOf(n))
		}
		if n.Data == "b" {
			t.Error("the path's markup was not escaped")
		}
	})
	want := []string{"GET /", "api/", "v1/", "payments/", "{id}<b>x", "?page=2&", "per_page=1"}
	if !slices.Equal(pieces, want) {
		t.Errorf("pieces %q, want %q", pieces, want)
	}
	if textOf(code) != "GET /api/v1/payments/{id}<b>x?page=2&per_page=1" {
		t.Errorf("the route reads %q", textOf(code))
	}
}

func TestRequests_LongRoutePiecesMayBreakAndShortOnesStayWhole(t *testing.T) {
	h := newHarness(t, nil)
	longID := "pay_" + strings.Repeat("x", 1800)
	cursor := strings.Repeat("c", 60)
	accents := strings.Repeat("%C3%A9", 40) // é, as a query carries it
	h.fake.requests["acme"] = []dashboard.Request{
		{ID: "req_3", At: "2026-03-01T12:00:03Z", Method: "GET", Path: "/api/v1/payments", Query: "q=" + accents, Status: 200},
		{ID: "req_2", At: "2026-03-01T12:00:02Z", Method: "GET", Path: "/api/v1/payments/" + longID, Status: 404},
		{ID: "req_1", At: "2026-03-01T12:00:01Z", Method: "GET", Path: "/api/v1/payments", Query: "limit=10&cursor=" + cursor, Status: 200},
	}
	b := h.browser()
	b.signIn(acmeKey)
	p := b.get("/dashboard/requests")
	type piece struct{ text, class string }
	pieces := func(id string) []piece {
		var out []piece
		walk(find(find(p.doc, "data-request-id", id), "data-field", "route"), func(n *htmlNode) {
			if n.Data == "span" {
				out = append(out, piece{textOf(n), attrOf(n, "class")})
			}
		})
		return out
	}
	want := map[string][]piece{
		"req_3": {{"GET /", "nowrap"}, {"api/", "nowrap"}, {"v1/", "nowrap"}, {"payments", "nowrap"}, {"?q=" + accents, "long"}},
		"req_2": {{"GET /", "nowrap"}, {"api/", "nowrap"}, {"v1/", "nowrap"}, {"payments/", "nowrap"}, {longID, "long"}},
		"req_1": {{"GET /", "nowrap"}, {"api/", "nowrap"}, {"v1/", "nowrap"}, {"payments", "nowrap"}, {"?limit=10&", "nowrap"}, {"cursor=" + cursor, "long"}},
	}
	// short shows a piece cut to 40 characters, the 1,800 of the id
	// being no help in a failure.
	short := func(ps []piece) []string {
		var out []string
		for _, p := range ps {
			if len(p.text) > 40 {
				p.text = p.text[:40] + "…"
			}
			out = append(out, p.class+" "+p.text)
		}
		return out
	}
	for id, w := range want {
		if got := pieces(id); !slices.Equal(got, w) {
			t.Errorf("%s: pieces %q, want %q", id, short(got), short(w))
		}
	}
	css := b.get("/dashboard/assets/dashboard.css").body
	if !strings.Contains(css, ".dtable code.route .long { white-space: normal; overflow-wrap: anywhere; }") {
		t.Error("the stylesheet lets no long piece of a route break")
	}
}

func TestRoutes_AWrongMethodIsA405PageWithAllow(t *testing.T) {
	h := newHarness(t, nil)
	signedIn := h.browser()
	signedIn.signIn(acmeKey)
	tests := []struct {
		method, path string
		allow        string // "" for a 404
	}{
		{http.MethodPut, "/dashboard/payments", "GET, HEAD"},
		{http.MethodPut, "/dashboard", "GET, HEAD"},
		{http.MethodDelete, "/dashboard/", "GET, HEAD"},
		{http.MethodDelete, "/dashboard/payments", "GET, HEAD"},
		{http.MethodPost, "/dashboard/payments", "GET, HEAD"},
		{http.MethodPatch, "/dashboard/payments/pay_x", "GET, HEAD, POST"},
		{http.MethodGet, "/dashboard/sign-out", "POST"},
		{http.MethodGet, "/dashboard/webhooks/we_1/reveal", "POST"},
		{http.MethodPut, "/dashboard/clock/advance", "POST"},
		{http.MethodPost, "/dashboard/assets/dashboard.css", "GET, HEAD"},
		{http.MethodGet, "/dashboard/nowhere", ""},
		{http.MethodPut, "/dashboard/nowhere", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			for name, b := range map[string]*browser{"signed in": signedIn, "signed out": h.browser()} {
				req, err := http.NewRequest(tt.method, b.base+tt.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				p := b.do(req)
				if tt.allow == "" {
					if name == "signed in" && p.status != http.StatusNotFound {
						t.Errorf("%s: %d, want 404", name, p.status)
					}
					continue
				}
				if p.status != http.StatusMethodNotAllowed || p.header.Get("Allow") != tt.allow {
					t.Errorf("%s: %d Allow %q, want 405 Allow %q", name, p.status, p.header.Get("Allow"), tt.allow)
				}
				if p.doc == nil || !strings.Contains(p.field("message"), tt.allow) {
					t.Errorf("%s: not a page that says what the address takes: %q", name, p.text())
				}
				if (find(p.doc, "data-action", "sign-out") != nil) != (name == "signed in") {
					t.Errorf("%s: the page's navigation does not match", name)
				}
			}
		})
	}
}
