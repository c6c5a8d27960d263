// Test helpers: the dashboard served over loopback, and a browser that submits the forms pages render.

package dashboard_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
	"golang.org/x/net/html"
)

// harness is a dashboard served over loopback with its fake sandbox, its
// log and its real-time clock under the test's control.
type harness struct {
	t       testing.TB
	fake    *fakeSandbox
	srv     *httptest.Server
	dash    *dashboard.Dashboard
	logs    *syncBuffer
	mu      sync.Mutex
	realNow time.Time
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHarness serves a dashboard; edit changes its config first.
func newHarness(t testing.TB, edit func(*dashboard.Config)) *harness {
	t.Helper()
	h := &harness{t: t, fake: newFakeSandbox(), logs: &syncBuffer{}, realNow: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	cfg := dashboard.Config{
		Auth: h.fake, Payments: h.fake, Lifecycle: h.fake, Clock: h.fake, Events: h.fake,
		Keys: h.fake, Endpoints: h.fake, Journal: h.fake,
		PublicURL:     "http://sandbox.example",
		StylesheetURL: "/assets/page.css?v=1",
		Logger:        slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:           h.now,
	}
	if edit != nil {
		edit(&cfg)
	}
	d, err := dashboard.New(cfg)
	if err != nil {
		t.Fatalf("dashboard.New: %v", err)
	}
	h.dash = d
	mux := http.NewServeMux()
	mux.Handle(dashboard.Prefix, d)
	mux.Handle(dashboard.Prefix+"/", d)
	h.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		// Once the server has closed, every request has let its
		// merchant go, once (fakeSandbox.Visit).
		if held, twice := h.fake.unended(); len(held) > 0 || twice > 0 {
			t.Errorf("after the last request, merchants still held by visits never ended: %v; visits ended twice: %d", held, twice)
		}
	})
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.realNow
}

func (h *harness) sleep(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.realNow = h.realNow.Add(d)
}

// browser is one browser: its own cookies, redirects not followed so that
// tests see each 303.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
}

func (h *harness) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &browser{t: h.t, base: h.srv.URL, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}}
}

// page is one answer.
type page struct {
	status int
	header http.Header
	body   string
	doc    *html.Node
	path   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	p := page{status: resp.StatusCode, header: resp.Header, body: string(body), path: req.URL.RequestURI()}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if p.doc, err = html.Parse(bytes.NewReader(body)); err != nil {
			b.t.Fatalf("parse %s: %v", req.URL, err)
		}
	}
	return p
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// follow GETs where a 303 points, and fails the test on any other status.
func (b *browser) follow(p page) page {
	b.t.Helper()
	if p.status != http.StatusSeeOther {
		b.t.Fatalf("%s: status %d, want 303; page says %q", p.path, p.status, p.text())
	}
	return b.get(p.header.Get("Location"))
}

// refused follows the 303 of a refused post back to its page, and fails
// the test unless the post was sent there with ?refused=1.
func (b *browser) refused(p page) page {
	b.t.Helper()
	if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.HasSuffix(loc, "?refused=1") {
		b.t.Fatalf("%s: %d to %q, want a 303 to a page with ?refused=1; page says %q", p.path, p.status, loc, p.text())
	}
	return b.get(p.header.Get("Location"))
}

// click submits the form of the first button with data-action=action
// inside the first element with attr=val (the whole page when attr is ""),
// as a browser would: its inputs, edited by set, plus the button's value.
func (b *browser) click(p page, attr, val, action string, set url.Values) page {
	b.t.Helper()
	scope := p.doc
	if attr != "" {
		if scope = find(p.doc, attr, val); scope == nil {
			b.t.Fatalf("%s: no element with %s=%q", p.path, attr, val)
		}
	}
	btn := find(scope, "data-action", action)
	if btn == nil {
		b.t.Fatalf("%s: no button data-action=%q in %s=%q", p.path, action, attr, val)
	}
	form := btn.Parent
	for form != nil && !(form.Type == html.ElementNode && form.Data == "form") {
		form = form.Parent
	}
	if form == nil {
		b.t.Fatalf("%s: button %q is in no form", p.path, action)
	}
	vals := url.Values{}
	walk(form, func(n *html.Node) {
		name := attrOf(n, "name")
		if n.Type != html.ElementNode || name == "" {
			return
		}
		switch n.Data {
		case "input":
			if typ := attrOf(n, "type"); (typ == "checkbox" || typ == "radio") && !hasAttr(n, "checked") {
				return
			}
			vals.Add(name, attrOf(n, "value"))
		case "select":
			walk(n, func(o *html.Node) {
				if o.Type == html.ElementNode && o.Data == "option" && hasAttr(o, "selected") {
					vals.Set(name, attrOf(o, "value"))
				}
			})
		}
	})
	for k, v := range set {
		vals[k] = v
	}
	if name := attrOf(btn, "name"); name != "" {
		vals.Set(name, attrOf(btn, "value"))
	}
	action, method := attrOf(form, "action"), strings.ToUpper(attrOf(form, "method"))
	if method == http.MethodPost {
		return b.post(action, vals)
	}
	return b.get(action + "?" + vals.Encode())
}

// signIn signs in with key through the form and returns the page it lands on.
func (b *browser) signIn(key string) page {
	b.t.Helper()
	p := b.get("/dashboard/sign-in")
	return b.follow(b.click(p, "", "", "sign-in", url.Values{"api_key": {key}}))
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// findAll returns the elements under n with attribute key=val.
func findAll(n *html.Node, key, val string) []*html.Node {
	var out []*html.Node
	if n == nil {
		return nil
	}
	walk(n, func(c *html.Node) {
		if c.Type == html.ElementNode && hasAttr(c, key) && attrOf(c, key) == val {
			out = append(out, c)
		}
	})
	return out
}

func find(n *html.Node, key, val string) *html.Node {
	if all := findAll(n, key, val); len(all) > 0 {
		return all[0]
	}
	return nil
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// text is the page's visible text, spaces collapsed.
func (p page) text() string {
	if p.doc == nil {
		return p.body
	}
	return textOf(p.doc)
}

// field is the text of the first element with data-field=name.
func (p page) field(name string) string { return textOf(find(p.doc, "data-field", name)) }

// csrf is the session's CSRF token as the page's forms carry it.
func (p page) csrf() string {
	if n := find(p.doc, "name", "csrf"); n != nil {
		return attrOf(n, "value")
	}
	return ""
}

type htmlNode = html.Node

// allPages are the pages of a signed-in merchant with data, by path.
func allPages(h *harness, b *browser) []string {
	pay := h.fake.addPayment(h.t, "acme", "ada@example.com", 1050, 0)
	ep, _ := h.fake.AddEndpoint(context.Background(), &paymock.Merchant{ID: "acme"}, "https://hooks.example/in")
	return []string{
		"/dashboard/payments", "/dashboard/payments/" + pay.ID, "/dashboard/api-keys", "/dashboard/webhooks",
		"/dashboard/webhooks/" + ep.ID, "/dashboard/clock", "/dashboard/requests", "/dashboard/report",
	}
}
