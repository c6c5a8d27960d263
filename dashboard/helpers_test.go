// Test helpers: an in-memory sandbox behind the dashboard's interfaces (the
// real ones live in packages this one may not import), and a browser that
// talks real HTTP and submits the forms the pages render.

package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/paymock/paymock/memory"
	"golang.org/x/net/html"
)

// The configured merchants' keys.
const (
	acmeKey   = "sk_test_acme_0123456789abcdef"
	globexKey = "sk_test_globex_0123456789abcdef"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeSandbox implements every interface of the dashboard over a real
// memory.Payments, with frozen per-merchant clocks.
type fakeSandbox struct {
	store *memory.Payments

	mu        sync.Mutex
	merchants map[string]*paymock.Merchant
	keys      map[string]*fakeKey // by the key itself
	clocks    map[string]time.Time
	events    []*fakeEvent
	endpoints []*fakeEndpoint
	requests  map[string][]dashboard.Request
	reports   map[string]dashboard.Report
	seq       int
	open      bool // any well-formed key is a merchant of its own
	down      bool // the database cannot be reached: see setDown
}

// setDown cuts the sandbox's database off, or brings it back. While it is
// down every call that reads or writes it fails with an error wrapping
// paymock.ErrUnavailable, as package postgres's do. So does Authenticate,
// for every key but a configured one: paymock.Merchants on a shared store
// finds configured keys in memory and looks every other key up in the
// database.
func (f *fakeSandbox) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// reachableLocked is the error of a call that needs the database.
func (f *fakeSandbox) reachableLocked() error {
	if f.down {
		return fmt.Errorf("fake database: %w: connection refused", paymock.ErrUnavailable)
	}
	return nil
}

func (f *fakeSandbox) reachable() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reachableLocked()
}

type fakeKey struct {
	id, key, merchantID, source string
	created                     time.Time
	revoked                     bool
}

type fakeEvent struct {
	merchantID string
	endpointID string // a test event's endpoint
	dashboard.Event
}

type fakeEndpoint struct {
	merchantID string
	secret     string
	deleted    bool
	dashboard.Endpoint
}

func newFakeSandbox() *fakeSandbox {
	f := &fakeSandbox{
		store:     memory.NewPayments(),
		merchants: make(map[string]*paymock.Merchant),
		keys:      make(map[string]*fakeKey),
		clocks:    make(map[string]time.Time),
		requests:  make(map[string][]dashboard.Request),
		reports:   make(map[string]dashboard.Report),
	}
	for name, key := range map[string]string{"acme": acmeKey, "globex": globexKey} {
		f.merchants[name] = &paymock.Merchant{ID: name, Name: name}
		f.keys[key] = &fakeKey{id: "ak_" + name, key: key, merchantID: name, source: "config", created: start}
	}
	return f
}

func (f *fakeSandbox) next(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s_%024d", prefix, f.seq)
}

func (f *fakeSandbox) Authenticate(_ context.Context, key string) (*paymock.Merchant, error) {
	if !paymock.WellFormedKey(key) {
		return nil, paymock.ErrMalformedKey
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.keys[key]
	if !ok || k.source != "config" {
		if err := f.reachableLocked(); err != nil {
			return nil, err
		}
	}
	if !ok && f.open {
		id := f.next("open") // each key a merchant of its own, as in open mode
		f.merchants[id] = &paymock.Merchant{ID: id, Name: id}
		k = &fakeKey{id: f.next("ak"), key: key, merchantID: id, source: "open", created: start}
		f.keys[key] = k
	}
	if !ok && !f.open || k.revoked {
		return nil, paymock.ErrUnknownKey
	}
	return f.merchants[k.merchantID], nil
}

func (f *fakeSandbox) Get(ctx context.Context, merchantID, id string) (paymock.Payment, error) {
	if err := f.reachable(); err != nil {
		return paymock.Payment{}, err
	}
	return f.store.Get(ctx, merchantID, id)
}

func (f *fakeSandbox) List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	if err := f.reachable(); err != nil {
		return nil, 0, err
	}
	return f.store.List(ctx, merchantID, offset, limit)
}

func (f *fakeSandbox) now(merchantID string) time.Time {
	if t, ok := f.clocks[merchantID]; ok {
		return t
	}
	return start
}

// Act implements dashboard.Lifecycle like the engine: store the outcome,
// publish its event to the merchant's enabled endpoints.
func (f *fakeSandbox) Act(ctx context.Context, m *paymock.Merchant, id string, to paymock.Status) (paymock.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return paymock.Payment{}, err
	}
	return f.transitionLocked(ctx, m, id, to)
}

func (f *fakeSandbox) transitionLocked(ctx context.Context, m *paymock.Merchant, id string, to paymock.Status) (paymock.Payment, error) {
	now := f.now(m.ID)
	typ, err := paymock.EventTypeFor(to)
	if err != nil {
		return paymock.Payment{}, err
	}
	p, err := f.store.Update(ctx, m.ID, id, func(p *paymock.Payment) error { return p.Transition(to, now) })
	if errors.Is(err, paymock.ErrNotFound) {
		return paymock.Payment{}, paymock.PaymentNotFound(id)
	}
	if err != nil {
		return p, err
	}
	ev, err := paymock.NewEvent(f.next("evt"), typ, p, now, paymock.Encoding{})
	if err != nil {
		return p, err
	}
	fe := &fakeEvent{merchantID: m.ID, Event: dashboard.Event{
		ID: ev.ID, Type: ev.Type, CreatedAt: paymock.FormatTime(now), PaymentID: p.ID, Payload: ev.Body,
	}}
	for _, ep := range f.endpoints {
		if ep.merchantID == m.ID && !ep.deleted && !ep.Disabled {
			fe.Deliveries = append(fe.Deliveries, delivered(1, ep.URL, now))
		}
	}
	f.events = append(f.events, fe)
	return p, nil
}

func delivered(round int, url string, at time.Time) dashboard.Delivery {
	return dashboard.Delivery{Round: round, URL: url, State: "delivered", Attempts: []dashboard.Attempt{
		{Attempt: 1, At: paymock.FormatTime(at), StatusCode: 204, DurationMS: 3},
	}}
}

func (f *fakeSandbox) Now(_ context.Context, m *paymock.Merchant) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now(m.ID), nil
}

func (f *fakeSandbox) Mode() string { return "frozen" }

// Advance moves the clock and expires what fell due, like the scheduler.
func (f *fakeSandbox) Advance(ctx context.Context, m *paymock.Merchant, d time.Duration) (time.Time, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return time.Time{}, 0, err
	}
	now := f.now(m.ID).Add(d)
	f.clocks[m.ID] = now
	ps, _, err := f.store.List(ctx, m.ID, 0, 1<<30)
	if err != nil {
		return now, 0, err
	}
	fired := 0
	for _, p := range ps {
		if p.Status == paymock.StatusPending && !now.Before(p.ExpiresAt) {
			if _, err := f.transitionLocked(ctx, m, p.ID, paymock.StatusExpired); err != nil {
				return now, fired, err
			}
			fired++
		}
	}
	return now, fired, nil
}

func (f *fakeSandbox) PaymentEvents(_ context.Context, m *paymock.Merchant, paymentID string) ([]dashboard.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return nil, err
	}
	var out []dashboard.Event
	for _, e := range f.events {
		if e.merchantID == m.ID && e.PaymentID == paymentID {
			out = append(out, e.Event)
		}
	}
	return out, nil
}

func (f *fakeSandbox) Redeliver(_ context.Context, m *paymock.Merchant, eventID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return err
	}
	for _, e := range f.events {
		if e.merchantID == m.ID && e.ID == eventID {
			round := 1
			if n := len(e.Deliveries); n > 0 {
				round = e.Deliveries[n-1].Round + 1
			}
			for _, ep := range f.endpoints {
				if ep.merchantID == m.ID && !ep.deleted && (e.endpointID == "" || e.endpointID == ep.ID) {
					e.Deliveries = append(e.Deliveries, delivered(round, ep.URL, f.now(m.ID)))
				}
			}
			return nil
		}
	}
	return fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
}

func (f *fakeSandbox) ListKeys(_ context.Context, m *paymock.Merchant) ([]dashboard.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return nil, err
	}
	var out []dashboard.APIKey
	for _, k := range f.keys {
		if k.merchantID == m.ID && !k.revoked {
			out = append(out, dashboard.APIKey{ID: k.id, Masked: "sk_test_…" + k.key[len(k.key)-4:], Source: k.source, Created: k.created})
		}
	}
	return out, nil
}

func (f *fakeSandbox) CreateKey(_ context.Context, m *paymock.Merchant) (dashboard.APIKey, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return dashboard.APIKey{}, "", err
	}
	id := f.next("ak")
	key := "sk_test_" + strings.ReplaceAll(f.next("new"), "_", "x")
	f.keys[key] = &fakeKey{id: id, key: key, merchantID: m.ID, source: "created", created: f.now(m.ID)}
	return dashboard.APIKey{ID: id, Masked: "sk_test_…" + key[len(key)-4:], Source: "created", Created: f.now(m.ID)}, key, nil
}

func (f *fakeSandbox) RevokeKey(_ context.Context, m *paymock.Merchant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return err
	}
	for _, k := range f.keys {
		if k.id == id && k.merchantID == m.ID && !k.revoked {
			k.revoked = true
			return nil
		}
	}
	return fmt.Errorf("key %s: %w", id, paymock.ErrNotFound)
}

func (f *fakeSandbox) endpointLocked(m *paymock.Merchant, id string) (*fakeEndpoint, error) {
	if err := f.reachableLocked(); err != nil {
		return nil, err
	}
	for _, ep := range f.endpoints {
		if ep.ID == id && ep.merchantID == m.ID && !ep.deleted {
			return ep, nil
		}
	}
	return nil, fmt.Errorf("endpoint %s: %w", id, paymock.ErrNotFound)
}

func (f *fakeSandbox) ListEndpoints(_ context.Context, m *paymock.Merchant) ([]dashboard.Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return nil, err
	}
	var out []dashboard.Endpoint
	for _, ep := range f.endpoints {
		if ep.merchantID == m.ID && !ep.deleted {
			out = append(out, ep.Endpoint)
		}
	}
	return out, nil
}

func (f *fakeSandbox) AddEndpoint(_ context.Context, m *paymock.Merchant, u string) (dashboard.Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return dashboard.Endpoint{}, err
	}
	ep := &fakeEndpoint{merchantID: m.ID, secret: "whsec_" + strings.Repeat("c2VjcmV0", 4) + fmt.Sprint(f.seq),
		Endpoint: dashboard.Endpoint{ID: f.next("we"), URL: u, Created: f.now(m.ID)}}
	f.endpoints = append(f.endpoints, ep)
	return ep.Endpoint, nil
}

// addReadOnly adds a configured endpoint, as from the config file.
func (f *fakeSandbox) addReadOnly(merchantID, u string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep := &fakeEndpoint{merchantID: merchantID, secret: "whsec_cmVhZG9ubHk=", Endpoint: dashboard.Endpoint{ID: f.next("we"), URL: u, ReadOnly: true}}
	f.endpoints = append(f.endpoints, ep)
	return ep.ID
}

func (f *fakeSandbox) EndpointSecret(_ context.Context, m *paymock.Merchant, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, err := f.endpointLocked(m, id)
	if err != nil {
		return "", err
	}
	return ep.secret, nil
}

func readOnlyError(ep *fakeEndpoint) error {
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "endpoint_read_only", Param: "id",
		Message: "endpoint " + ep.ID + " comes from the configuration and cannot be changed here"}
}

func (f *fakeSandbox) SetEndpointDisabled(_ context.Context, m *paymock.Merchant, id string, disabled bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, err := f.endpointLocked(m, id)
	if err != nil {
		return err
	}
	if ep.ReadOnly {
		return readOnlyError(ep)
	}
	ep.Disabled = disabled
	return nil
}

func (f *fakeSandbox) DeleteEndpoint(_ context.Context, m *paymock.Merchant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, err := f.endpointLocked(m, id)
	if err != nil {
		return err
	}
	if ep.ReadOnly {
		return readOnlyError(ep)
	}
	ep.deleted = true
	return nil
}

func (f *fakeSandbox) SendTest(_ context.Context, m *paymock.Merchant, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, err := f.endpointLocked(m, id)
	if err != nil {
		return "", err
	}
	now := f.now(m.ID)
	e := &fakeEvent{merchantID: m.ID, endpointID: ep.ID, Event: dashboard.Event{
		ID: f.next("evt"), Type: "webhook.test", CreatedAt: paymock.FormatTime(now),
		Payload: json.RawMessage(`{"type":"webhook.test"}`), Deliveries: []dashboard.Delivery{delivered(1, ep.URL, now)},
	}}
	f.events = append(f.events, e)
	return e.ID, nil
}

func (f *fakeSandbox) EndpointDeliveries(_ context.Context, m *paymock.Merchant, id string, limit int) ([]dashboard.EndpointDelivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep, err := f.endpointLocked(m, id)
	if err != nil {
		return nil, err
	}
	var out []dashboard.EndpointDelivery
	for i := len(f.events) - 1; i >= 0; i-- {
		e := f.events[i]
		if e.merchantID != m.ID {
			continue
		}
		for j := len(e.Deliveries) - 1; j >= 0; j-- {
			if e.Deliveries[j].URL == ep.URL && len(out) < limit {
				out = append(out, dashboard.EndpointDelivery{EventID: e.ID, EventType: e.Type, PaymentID: e.PaymentID, Delivery: e.Deliveries[j]})
			}
		}
	}
	return out, nil
}

func (f *fakeSandbox) Requests(_ context.Context, m *paymock.Merchant, onlyViolations bool, offset, limit int) ([]dashboard.Request, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return nil, 0, err
	}
	var match []dashboard.Request
	for _, r := range f.requests[m.ID] {
		if !onlyViolations || len(r.Violations) > 0 {
			match = append(match, r)
		}
	}
	total := len(match)
	if offset >= total {
		return nil, total, nil
	}
	return match[offset:min(total, offset+limit)], total, nil
}

func (f *fakeSandbox) Report(_ context.Context, m *paymock.Merchant) (dashboard.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reachableLocked(); err != nil {
		return dashboard.Report{}, err
	}
	return f.reports[m.ID], nil
}

// addPayment stores a pending payment of a merchant, created at the
// merchant's clock plus offset seconds, expiring an hour later.
func (f *fakeSandbox) addPayment(t testing.TB, merchantID, email string, amount paymock.Amount, offset int) paymock.Payment {
	t.Helper()
	f.mu.Lock()
	id := f.next("pay")
	created := f.now(merchantID).Add(time.Duration(offset) * time.Second)
	f.mu.Unlock()
	p := paymock.Payment{
		ID: id, MerchantID: merchantID, Amount: amount, Currency: paymock.USD, Status: paymock.StatusPending,
		Customer:    paymock.Customer{ID: "cus_" + id[4:], Email: email, Name: "Ada Lovelace"},
		Description: "Order " + id[len(id)-4:], Metadata: json.RawMessage(`{"order":"1234"}`),
		SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/cancel",
		CheckoutURL: "http://sandbox.example/checkout/" + id,
		CreatedAt:   created, UpdatedAt: created, ExpiresAt: created.Add(time.Hour),
	}
	if err := f.store.Insert(context.Background(), p, -1); err != nil {
		t.Fatalf("insert payment: %v", err)
	}
	return p
}

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
