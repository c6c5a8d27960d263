// Package dashboard is the sandbox's developer section: server-rendered pages
// under /dashboard where a merchant signs in with an API key and then sees
// and drives its payments, API keys, webhook endpoints, clock, request
// journal and conformance report.
//
// It knows nothing of HTTP frameworks, the lifecycle engine or the webhook
// dispatcher: it declares the small interfaces it needs (Authenticator,
// Payments, Lifecycle, Clock, Events, APIKeys, Endpoints, Journal) in terms
// of the root package's types, and the sandbox hands it the real ones. So
// the dashboard calls the same domain code as the control API, never the
// HTTP API.
//
// Every page is html/template with embedded templates and CSS and no
// JavaScript. Sessions live in memory, keyed by a digest of their cookie;
// every form carries the session's CSRF token; every state change is a POST
// answered with a 303 (post, redirect, get), and so is a form refused for
// what it asked (its page, with ?refused=1, says why).
//
// Any call may fail with an error wrapping paymock.ErrUnavailable when the
// sandbox's database cannot be reached. That is an outage, not a refusal:
// the page or form answers 503 and says to try again shortly, a session
// is kept (not taken for one whose key was revoked), and it works again
// once the database is back.
package dashboard

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/connlimit"
)

// Prefix is the path the dashboard is served under. The sandbox routes
// Prefix and everything below it (Prefix+"/") to the Dashboard.
const Prefix = "/dashboard"

// Authenticator tells whose an API key is (*merchants.Registry implements
// it). It is asked again on every request of a session, so a key revoked
// since sign-in ends the sessions it opened at once. An error wrapping
// paymock.ErrUnavailable says nothing of the key: the session is kept.
type Authenticator interface {
	// Visit returns the key's merchant, held until the Visit's End: a
	// merchant is not evicted or forgotten while a request of it is under
	// way (merchants.Registry.Visit), so that a form does not write into,
	// nor a page read, a merchant the sandbox has let go.
	Visit(ctx context.Context, key string) (*paymock.Merchant, Visit, error)
}

// Visit is a request's hold on its merchant, which End lets go.
type Visit = interface{ End() }

// Payments reads a merchant's payments (paymock.Store implements it). An id
// of another merchant is an error wrapping paymock.ErrNotFound.
type Payments interface {
	Get(ctx context.Context, merchantID, id string) (paymock.Payment, error)
	// List returns up to limit payments, newest first, skipping offset of
	// them, and the merchant's total count.
	List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error)
}

// Lifecycle moves a pending payment to an outcome a person asked for, as
// the hosted pages do (*lifecycle.Engine's Act implements it): the
// transition is stored and its event published. A final payment, or one
// found overdue and expired instead, is a *paymock.Error of type
// conflict_error; an unknown one (or another merchant's) a not_found_error
// or an error wrapping paymock.ErrNotFound.
type Lifecycle interface {
	Act(ctx context.Context, m *paymock.Merchant, paymentID string, to paymock.Status) (paymock.Payment, error)
}

// Clock is a merchant's sandbox clock.
type Clock interface {
	Now(ctx context.Context, m *paymock.Merchant) (time.Time, error)
	// Mode is "real" (time passes by itself) or "frozen" (only when
	// advanced).
	Mode() string
	// Advance moves m's clock forward by d, fires what fell due on the way
	// and returns the new time and how many scheduled actions fired.
	Advance(ctx context.Context, m *paymock.Merchant, d time.Duration) (time.Time, int, error)
}

// Events reads a merchant's webhook events with their delivery attempts,
// and sends one again.
type Events interface {
	// PaymentEvents lists the events of one payment, oldest first.
	PaymentEvents(ctx context.Context, m *paymock.Merchant, paymentID string) ([]Event, error)
	// Redeliver starts a new delivery round of an event. An unknown event,
	// or another merchant's, is an error wrapping paymock.ErrNotFound.
	Redeliver(ctx context.Context, m *paymock.Merchant, eventID string) error
}

// APIKeys manages a merchant's API keys. Ids of another merchant's keys are
// errors wrapping paymock.ErrNotFound (or a not_found_error).
type APIKeys interface {
	ListKeys(ctx context.Context, m *paymock.Merchant) ([]APIKey, error)
	// CreateKey makes a new key for m and returns it in full, the only
	// time it is ever shown.
	CreateKey(ctx context.Context, m *paymock.Merchant) (APIKey, string, error)
	// RevokeKey revokes a key: from the next request on it authenticates
	// nothing, and the list leaves it out.
	RevokeKey(ctx context.Context, m *paymock.Merchant, id string) error
}

// Endpoints manages a merchant's webhook endpoints. Ids of another
// merchant's endpoints are errors wrapping paymock.ErrNotFound (or a
// not_found_error); refusals the merchant can act on (a URL that is not
// absolute http(s), a change to a configured endpoint) are *paymock.Error.
type Endpoints interface {
	ListEndpoints(ctx context.Context, m *paymock.Merchant) ([]Endpoint, error)
	// AddEndpoint registers url and generates its "whsec_" secret.
	AddEndpoint(ctx context.Context, m *paymock.Merchant, url string) (Endpoint, error)
	EndpointSecret(ctx context.Context, m *paymock.Merchant, id string) (string, error)
	SetEndpointDisabled(ctx context.Context, m *paymock.Merchant, id string, disabled bool) error
	DeleteEndpoint(ctx context.Context, m *paymock.Merchant, id string) error
	// SendTest sends a signed test event to the endpoint and returns its id.
	SendTest(ctx context.Context, m *paymock.Merchant, id string) (string, error)
	// EndpointDeliveries lists the endpoint's deliveries, newest first, at
	// most limit of them.
	EndpointDeliveries(ctx context.Context, m *paymock.Merchant, id string, limit int) ([]EndpointDelivery, error)
}

// Journal reads a merchant's request journal and conformance report.
type Journal interface {
	// Requests lists journal entries newest first, from offset, at most
	// limit, only those with violations when onlyViolations, and how many
	// match in all.
	Requests(ctx context.Context, m *paymock.Merchant, onlyViolations bool, offset, limit int) ([]Request, int, error)
	Report(ctx context.Context, m *paymock.Merchant) (Report, error)
}

// Event is one webhook event and its deliveries. Its fields mirror the
// control API's event record; times are paymock.TimeLayout strings on the
// merchant's clock.
type Event struct {
	ID         string
	Type       paymock.EventType
	CreatedAt  string
	PaymentID  string
	Payload    json.RawMessage // the body every attempt sent
	Deliveries []Delivery
}

// Delivery is the sending of one event to one endpoint.
type Delivery struct {
	Round         int
	URL           string // never with a password in it
	State         string // pending, delivered, failed or interrupted
	Error         string // why a failed or interrupted delivery ended
	Attempts      []Attempt
	NextAttemptAt string // while a retry is scheduled
}

// Attempt is one POST of a delivery.
type Attempt struct {
	Attempt    int
	At         string
	StatusCode int    // 0 when no answer came
	Error      string // empty on a 2xx
	DurationMS int64
	// Fault says what a webhook fault did to this attempt, naming its
	// rule; empty for a plain attempt.
	Fault string
}

// EndpointDelivery is a delivery as an endpoint's list shows it: with the
// event it carried.
type EndpointDelivery struct {
	EventID   string
	EventType paymock.EventType
	PaymentID string // empty for a test event
	Delivery
}

// APIKey is a live key as listed: never the key itself. (The fields are
// those of paymock.APIKey.)
type APIKey struct {
	ID     string // names the key in forms and the control API
	Masked string // the key's prefix and last four characters, e.g. "sk_test_…a1b2"
	// Source is "config" (the config file or --api-key), "created" or
	// "open" (the token of an open-mode merchant).
	Source  string
	Created time.Time
}

// Endpoint is a webhook endpoint as listed: never its secret. (The fields
// are those of paymock.Endpoint.)
type Endpoint struct {
	ID       string
	URL      string
	Disabled bool
	// ReadOnly endpoints come from the configuration or flags and cannot
	// be disabled or deleted here.
	ReadOnly bool
	// SharedSecret: signed with the operator's secret (--webhook-url),
	// the same for every merchant, which no merchant is shown: the card
	// offers no reveal.
	SharedSecret bool
	Created      time.Time
}

// Request is one request of the journal. Its fields mirror the control
// API's journal entry, so the sandbox can convert one into the other.
type Request struct {
	ID         string
	At         string
	Method     string
	Path       string
	Query      string
	Operation  string
	Status     int
	DurationMS float64
	Variant    string
	Violations []paymock.Violation
	// InjectedBy, when set, says the answer was a fault asked for on
	// purpose: how (header, control API rule, faults file) and what.
	InjectedBy string
}

// Report is the conformance report; its fields mirror GET /_sandbox/report.
type Report struct {
	Calls          int
	ViolatingCalls int
	UnmatchedCalls int
	Coverage       ReportCoverage
	Operations     []ReportOperation
}

// ReportCoverage is how much of the contract the client exercised.
type ReportCoverage struct {
	Operations          float64
	OperationsExercised int
	OperationsTotal     int
	Statuses            float64
	StatusesExercised   int
	StatusesTotal       int
}

// ReportOperation is what the client did with one operation.
type ReportOperation struct {
	OperationID    string
	Method         string
	Path           string
	Calls          int
	ViolatingCalls int
	Statuses       []ReportStatus
	Violations     []ReportViolation
	// UnlistedViolations counts the violations made past those listed,
	// which are at most 50: the page shows the count alone.
	UnlistedViolations int
}

// ReportStatus is how often an operation answered one status.
type ReportStatus struct {
	Status   int
	Declared bool
	Count    int
}

// ReportViolation is one distinct violation and how often it was made.
type ReportViolation struct {
	Param   string
	Code    string
	Message string
	Count   int
}

// Config is what a Dashboard is built from. Every interface is required;
// the other fields have defaults.
type Config struct {
	Auth      Authenticator
	Payments  Payments
	Lifecycle Lifecycle
	Clock     Clock
	Events    Events
	Keys      APIKeys
	Endpoints Endpoints
	Journal   Journal
	// CheckoutURL is the hosted page a payment's customer is sent to.
	// Default: the payment's own CheckoutURL.
	CheckoutURL func(paymock.Payment) string
	// PublicURL is the sandbox's public base URL. With https the session
	// cookie is Secure; its origin is trusted for form posts behind a proxy.
	PublicURL string
	// StylesheetURL is the hosted pages' stylesheet, linked by every page
	// (same origin: the CSP allows 'self' only). Required.
	StylesheetURL string
	Logger        *slog.Logger     // default: discard
	Now           func() time.Time // real time, for session expiry; default time.Now
	// SessionIdle ends a session unused for this long; default 8h.
	SessionIdle time.Duration
	// SessionMax ends a session this long after sign-in however busy;
	// default 24h.
	SessionMax time.Duration
	// MaxSessions bounds the sessions held; past it the expired ones end,
	// then the one in use for the shortest time since its sign-in (see
	// sessions.create). Default 10,000.
	MaxSessions int
	// SearchWait is how long a filtered search of the payments waits for
	// one of the searches' slots (SearchesAtOnce, SearchesPerMerchant)
	// before it is answered 503 "searches busy"; default 5s.
	SearchWait time.Duration
}

// Defaults of Config.
const (
	DefaultSessionIdle = 8 * time.Hour
	DefaultSessionMax  = 24 * time.Hour
	DefaultMaxSessions = 10000
	DefaultSearchWait  = 5 * time.Second
)

// Dashboard serves the developer section. It is an http.Handler for
// Prefix and every path below it; safe for concurrent use.
type Dashboard struct {
	cfg         Config
	log         *slog.Logger
	now         func() time.Time
	secure      bool
	key         []byte // HMAC key of the sign-in form's token; per process
	pages       *pages
	sessions    *sessions
	searches    *connlimit.Slots // the filtered searches of the payments running at once
	mux         *http.ServeMux
	crossOrigin *http.CrossOriginProtection
}

// New checks cfg and builds the dashboard.
func New(cfg Config) (*Dashboard, error) {
	var missing []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Auth", cfg.Auth != nil}, {"Payments", cfg.Payments != nil}, {"Lifecycle", cfg.Lifecycle != nil},
		{"Clock", cfg.Clock != nil}, {"Events", cfg.Events != nil}, {"Keys", cfg.Keys != nil},
		{"Endpoints", cfg.Endpoints != nil}, {"Journal", cfg.Journal != nil},
	} {
		if !f.set {
			missing = append(missing, "Config."+f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dashboard: %s must be set", strings.Join(missing, ", "))
	}
	if cfg.StylesheetURL == "" {
		return nil, errors.New("dashboard: Config.StylesheetURL must be set")
	}
	if cfg.SessionIdle < 0 || cfg.SessionMax < 0 || cfg.MaxSessions < 0 {
		return nil, errors.New("dashboard: session limits must not be negative")
	}
	if cfg.SearchWait < 0 {
		return nil, errors.New("dashboard: Config.SearchWait must not be negative")
	}
	if cfg.SearchWait == 0 {
		cfg.SearchWait = DefaultSearchWait
	}
	if cfg.SessionIdle == 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.SessionMax == 0 {
		cfg.SessionMax = DefaultSessionMax
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.CheckoutURL == nil {
		cfg.CheckoutURL = func(p paymock.Payment) string { return p.CheckoutURL }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dashboard{
		cfg:         cfg,
		log:         cfg.Logger,
		now:         cfg.Now,
		key:         make([]byte, 32),
		sessions:    newSessions(cfg.SessionIdle, cfg.SessionMax, cfg.MaxSessions),
		searches:    connlimit.NewSlots(SearchesAtOnce, SearchesPerMerchant),
		crossOrigin: http.NewCrossOriginProtection(),
	}
	_, _ = rand.Read(d.key) // never fails: crypto/rand crashes the program instead
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("dashboard: Config.PublicURL %q is not an absolute http(s) URL", cfg.PublicURL)
		}
		d.secure = u.Scheme == "https"
		// Behind a proxy the Host header is not the public one: a form
		// posted from the public origin is still ours.
		if err := d.crossOrigin.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, fmt.Errorf("dashboard: trust the public origin: %w", err)
		}
	}
	p, err := newPages(cfg.StylesheetURL)
	if err != nil {
		return nil, err
	}
	d.pages = p
	d.mux = http.NewServeMux()
	d.registerRoutes()
	return d, nil
}

// ServeHTTP implements http.Handler. Every answer, the router's own 404
// and 405 included, carries the security headers.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	d.mux.ServeHTTP(w, r)
}

// contentSecurityPolicy allows this origin's stylesheets and nothing else:
// no script, no frame, no base, forms only to this origin. Images may be
// data: URLs for the layout's empty icon, which keeps a browser from asking
// for /favicon.ico (a 404, logged in its console as an error).
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders marks an answer as not to be framed, sniffed, cached
// or leaked through a Referer.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}
