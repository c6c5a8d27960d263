// The fake sandbox behind the dashboard's interfaces (the real one is in packages this one may not import).

package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
	"github.com/paymock/paymock/memory"
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
	// refusals are what the sandbox refuses, by method name: see refuse.
	refusals map[string]error
	// held counts each merchant's visits not ended yet (Visit), and
	// endedTwice the visits ended more than once: the harness checks
	// both are zero once its server has closed.
	held       map[string]int
	endedTwice int
}

// refuse makes the method of that name refuse every call with err, as the
// sandbox refuses what its limits do not allow.
func (f *fakeSandbox) refuse(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refusals[method] = err
}

// allowedLocked is the error of a call that changes something: the
// database's, or the refusal set for its method.
func (f *fakeSandbox) allowedLocked(method string) error {
	if err := f.reachableLocked(); err != nil {
		return err
	}
	return f.refusals[method]
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
		refusals:  make(map[string]error),
		held:      make(map[string]int),
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

// Visit is Authenticate with the merchant held until the Visit's End, as
// merchants.Registry's is; holding tells how many visits it has under way.
func (f *fakeSandbox) Visit(ctx context.Context, key string) (*paymock.Merchant, dashboard.Visit, error) {
	m, err := f.Authenticate(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[m.ID]++
	return m, &fakeVisit{f: f, merchantID: m.ID}, nil
}

// holding is how many visits of the merchant have not ended.
func (f *fakeSandbox) holding(merchantID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held[merchantID]
}

// unended lists the merchants with visits not ended, and how many visits
// were ended twice.
func (f *fakeSandbox) unended() (map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int)
	for id, n := range f.held {
		if n != 0 {
			out[id] = n
		}
	}
	return out, f.endedTwice
}

// fakeVisit is one visit of the fake sandbox.
type fakeVisit struct {
	f          *fakeSandbox
	merchantID string
	ended      bool // under f.mu
}

func (v *fakeVisit) End() {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	if v.ended {
		v.f.endedTwice++
		return
	}
	v.ended = true
	v.f.held[v.merchantID]--
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
	if err := f.allowedLocked("Advance"); err != nil {
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
	if err := f.allowedLocked("Redeliver"); err != nil {
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
	if err := f.allowedLocked("CreateKey"); err != nil {
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
	if err := f.allowedLocked("RevokeKey"); err != nil {
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
	if err := f.allowedLocked("AddEndpoint"); err != nil {
		return dashboard.Endpoint{}, err
	}
	ep := &fakeEndpoint{merchantID: m.ID, secret: "whsec_" + strings.Repeat("c2VjcmV0", 4) + fmt.Sprint(f.seq),
		Endpoint: dashboard.Endpoint{ID: f.next("we"), URL: u, Created: f.now(m.ID)}}
	f.endpoints = append(f.endpoints, ep)
	return ep.Endpoint, nil
}

// addReadOnly adds a configured endpoint, as from the config file.
func (f *fakeSandbox) addReadOnly(merchantID, u string) string {
	return f.addConfigured(merchantID, u, "whsec_cmVhZG9ubHk=", false)
}

// addOperators adds the operator's endpoint (--webhook-url), shared by
// every merchant: its secret comes masked.
func (f *fakeSandbox) addOperators(merchantID, u string) string {
	return f.addConfigured(merchantID, u, paymock.MaskKey("whsec_b3BlcmF0b3Jz"), true)
}

func (f *fakeSandbox) addConfigured(merchantID, u, secret string, shared bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep := &fakeEndpoint{merchantID: merchantID, secret: secret,
		Endpoint: dashboard.Endpoint{ID: f.next("we"), URL: u, ReadOnly: true, SharedSecret: shared}}
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
