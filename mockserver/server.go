// Package mockserver is the HTTP side of paymock: an echo server that checks
// every request and response against the contract, authenticates merchants,
// and serves the payments API, the sandbox control API and hosted pages.
package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/lifecycle"
)

// Authenticator maps a bearer key to its merchant, and a merchant id back
// to the merchant (for the hosted pages, which carry no key).
type Authenticator interface {
	// Visit returns the key's merchant, held until the Visit's End: a
	// merchant is not evicted or forgotten while a request of it is
	// under way (merchants.Registry.Visit).
	Visit(ctx context.Context, key string) (*paymock.Merchant, Visit, error)
	ByID(ctx context.Context, id string) (*paymock.Merchant, bool)
}

// Visit is a request's hold on its merchant, which End lets go.
type Visit = interface{ End() }

// Clock tells each merchant's current time.
type Clock interface {
	Now(ctx context.Context, merchantID string) (time.Time, error)
}

// DefaultBodyLimit is the largest request body accepted.
const DefaultBodyLimit = 1 << 20

// Config is what a Server is built from.
type Config struct {
	Logger    *slog.Logger
	Store     paymock.Store
	Merchants Authenticator
	// IDs makes the ids of what merchants create and of their requests
	// (pay_, cus_, req_).
	IDs *paymock.MerchantIDs
	// RequestIDs makes the ids of requests of no merchant (a key refused,
	// a path outside the API); nil: unguessable ones.
	RequestIDs *paymock.IDs
	Clock      Clock
	// PublicURL is the base of URLs handed to customers, without a
	// trailing slash, e.g. "http://localhost:8080".
	PublicURL string
	// BodyLimit is the largest request body in bytes; 0 means 1 MiB.
	BodyLimit int64
	// MaxPayments is how many payments one merchant may hold: a create
	// past it is refused (payment_limit). 0 means
	// paymock.DefaultMaxPayments; negative, no cap.
	MaxPayments int
	// MaxAnswerBytes bounds the bytes of the answers being written at
	// once (answers.go): 0 means connlimit.DefaultAnswerBytes; negative,
	// no bound.
	MaxAnswerBytes int64
	// ReadWithin is the HTTP server's bound on reading a request, body
	// included (its ReadTimeout), or 0 for none known. A delay fault holds
	// the request before its body is read: the body then gets ReadWithin
	// from the end of the delay, not what the delay left of it (a delay
	// past the bound made every create whose body was not read with its
	// headers a 400 body_unreadable).
	ReadWithin time.Duration
	// Lifecycle moves payments to their outcomes and emits their events.
	Lifecycle *lifecycle.Engine
	// JournalSize is how many requests each merchant's journal keeps;
	// 0 means DefaultJournalSize, and a negative size turns the journal
	// (and so the report) off.
	JournalSize int
	// Journal keeps the request journal: the backend's. Required unless
	// the journal is off.
	Journal paymock.JournalStore
	// Variants picks the wire form of each payment sent; nil is the
	// default form.
	Variants *paymock.Variants
	// Seeder, when set, preloads each merchant's store on its first
	// authenticated request (--fake-payments).
	Seeder Seeder
	// Faults, when set, shapes calls by the fault rules and serves the
	// control API of faults.
	Faults Faults
	// Developers serves the control API of API keys and webhook
	// endpoints; nil leaves those routes out.
	Developers Developers
	// Observer is told of every answered request and contract
	// violation (metrics); nil tells nobody.
	Observer Observer
	// Metrics, when set, is served at GET /metrics, unauthenticated.
	Metrics http.Handler
	// Ready tells whether the sandbox can serve: GET /readyz answers 503
	// while it returns an error (a database that cannot be reached). Nil
	// is always ready.
	Ready func(ctx context.Context) error
}

// Observer is told what the request chain sees (implemented by
// *metrics.Metrics).
type Observer interface {
	Request(operation string, status int, elapsed time.Duration)
	ContractViolation(side string)
	InjectedFault(target string)
}

type noObserver struct{}

func (noObserver) Request(string, int, time.Duration) {}
func (noObserver) ContractViolation(string)           {}
func (noObserver) InjectedFault(string)               {}

// Seeder makes the payments a merchant starts with.
type Seeder interface {
	Seed(ctx context.Context, m *paymock.Merchant, now time.Time, publicURL string) ([]paymock.Payment, error)
}

// Server is the paymock HTTP handler.
type Server struct {
	handler     http.Handler
	echo        *echo.Echo // the handler, for Mount
	log         *slog.Logger
	store       paymock.Store
	merchants   Authenticator
	merchantIDs *paymock.MerchantIDs
	requestIDs  *paymock.IDs
	clock       Clock
	publicURL   string
	bodyLimit   int64
	maxPayments int // < 0: no cap
	readWithin  time.Duration
	answers     *connlimit.Answers
	// answersWarned is the second of the last warning of answers refused.
	answersWarned atomic.Int64
	// listPages holds a token for each list page being built (answers.go).
	listPages  *connlimit.Slots
	docs       *contract.Documents
	lifecycle  *lifecycle.Engine
	pages      *pageState
	journal    *requestJournal
	variants   *paymock.Variants
	seeder     Seeder
	seeded     sync.Map // merchant id -> *sync.Once
	faults     Faults
	developers Developers
	observer   Observer
	metrics    http.Handler
	ready      func(ctx context.Context) error
	// Header values of every answer (and of every JSON one), shared
	// read-only (net/http never changes a header's values), so that
	// setting them allocates nothing.
	nosniff, noStore, jsonType []string
	// exchanges are the request chain's exchanges, reused.
	exchanges sync.Pool
	// rules are operations' domain checks, also run on bodies the
	// contract refused, by operation id.
	rules map[string]func(m *paymock.Merchant, body []byte) []paymock.Violation
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// New builds the server: the contract is loaded and compiled here, once.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Merchants == nil || cfg.IDs == nil || cfg.Clock == nil || cfg.Lifecycle == nil {
		return nil, errors.New("mockserver: Store, Merchants, IDs, Clock and Lifecycle are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://localhost:8080"
	}
	if cfg.MaxPayments == 0 {
		cfg.MaxPayments = paymock.DefaultMaxPayments
	}
	docs, err := contract.Embedded()
	if err != nil {
		return nil, err
	}
	s := &Server{
		log:         cfg.Logger,
		store:       cfg.Store,
		merchants:   cfg.Merchants,
		merchantIDs: cfg.IDs,
		requestIDs:  cfg.RequestIDs,
		clock:       cfg.Clock,
		publicURL:   strings.TrimRight(cfg.PublicURL, "/"),
		bodyLimit:   cfg.BodyLimit,
		maxPayments: cfg.MaxPayments,
		readWithin:  cfg.ReadWithin,
		answers:     connlimit.NewAnswers(cfg.MaxAnswerBytes),
		listPages:   connlimit.NewSlots(listPagesAtOnce, listPagesPerMerchant),
		docs:        docs,
		lifecycle:   cfg.Lifecycle,
		variants:    cfg.Variants,
		seeder:      cfg.Seeder,
		faults:      cfg.Faults,
		developers:  cfg.Developers,
		observer:    cfg.Observer,
		metrics:     cfg.Metrics,
		ready:       cfg.Ready,
		nosniff:     []string{"nosniff"},
		noStore:     []string{"no-store"},
		jsonType:    []string{echo.MIMEApplicationJSON},
	}
	if s.journal, err = newJournal(cfg.JournalSize, cfg.Journal); err != nil { // nil when turned off
		return nil, err
	}
	if s.observer == nil {
		s.observer = noObserver{}
	}
	if s.requestIDs == nil {
		s.requestIDs = paymock.NewIDs(nil)
	}
	if s.pages, err = newPageState(); err != nil {
		return nil, err
	}
	s.rules = map[string]func(*paymock.Merchant, []byte) []paymock.Violation{"createPayment": s.createRules}
	e := echo.NewWithConfig(echo.Config{Logger: cfg.Logger, JSONSerializer: jsonSerializer{}})
	e.HTTPErrorHandler = func(c *echo.Context, err error) { s.writeError(c, err) }
	e.Pre(s.chain()...)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	if s.metrics != nil {
		e.GET("/metrics", echo.WrapHandler(s.metrics))
	}
	s.registerPaymentRoutes(e)
	s.registerControlRoutes(e)
	s.registerPageRoutes(e)
	s.handler, s.echo = e, e
	return s, nil
}

// registerPaymentRoutes registers the service API of openapi.yaml.
func (s *Server) registerPaymentRoutes(e *echo.Echo) {
	e.GET("/openapi.yaml", s.openapi)
	e.POST("/api/v1/payments", s.createPayment)
	e.GET("/api/v1/payments", s.listPayments)
	e.GET("/api/v1/payments/:id", s.retrievePayment)
}

// registerControlRoutes registers the sandbox control API of
// sandbox/openapi.yaml.
func (s *Server) registerControlRoutes(e *echo.Echo) {
	e.GET("/_sandbox/openapi.yaml", s.sandboxOpenAPI)
	e.POST("/_sandbox/payments/:id/complete", s.transition(paymock.StatusCompleted))
	e.POST("/_sandbox/payments/:id/fail", s.transition(paymock.StatusFailed))
	e.POST("/_sandbox/payments/:id/expire", s.transition(paymock.StatusExpired))
	e.GET("/_sandbox/clock", s.getClock)
	e.POST("/_sandbox/clock/advance", s.advanceClock)
	e.GET("/_sandbox/events", s.listEvents)
	e.POST("/_sandbox/events/:id/redeliver", s.redeliver)
	e.POST("/_sandbox/reset", s.reset)
	e.GET("/_sandbox/requests", s.listRequests)
	e.GET("/_sandbox/report", s.getReport)
	if s.faults != nil {
		e.POST("/_sandbox/faults", s.addFault)
		e.GET("/_sandbox/faults", s.listFaults)
		e.DELETE("/_sandbox/faults", s.clearFaults)
		e.DELETE("/_sandbox/faults/:id", s.deleteFault)
	}
	if s.developers != nil {
		e.GET("/_sandbox/api-keys", s.listAPIKeys)
		e.POST("/_sandbox/api-keys", s.createAPIKey)
		e.DELETE("/_sandbox/api-keys/:id", s.revokeAPIKey)
		e.GET("/_sandbox/webhook-endpoints", s.listWebhookEndpoints)
		e.POST("/_sandbox/webhook-endpoints", s.addWebhookEndpoint)
		e.DELETE("/_sandbox/webhook-endpoints/:id", s.deleteWebhookEndpoint)
		e.POST("/_sandbox/webhook-endpoints/:id/test", s.sendTestEvent)
	}
}

// registerPageRoutes registers the hosted pages. Every other path under
// them is the HTML 404 page, never JSON: a customer's browser lands there.
func (s *Server) registerPageRoutes(e *echo.Echo) {
	for _, k := range []pageKind{checkoutPage, threeDSPage} {
		e.GET(k.path()+":id", s.pageShow(k))
		e.POST(k.path()+":id", s.pageAct(k))
		for _, p := range []string{k.path(), k.path() + "*", strings.TrimSuffix(k.path(), "/")} {
			e.GET(p, s.pageNotFound)
			e.POST(p, s.pageNotFound)
		}
	}
	e.GET(pageCSSPath, s.pageAsset)
}

// Mount serves h at prefix and every path below it, outside the API's
// chain steps (the dashboard: its own sessions, its own HTML errors).
func (s *Server) Mount(prefix string, h http.Handler) {
	s.echo.Any(prefix, echo.WrapHandler(h))
	s.echo.Any(prefix+"/*", echo.WrapHandler(h))
}

// StylesheetURL is the hosted pages' stylesheet, versioned by its digest,
// for other pages to share.
func (s *Server) StylesheetURL() string { return s.pages.cssURL }

// Requests lists a merchant's journal, newest first: every replica's on a
// shared store.
func (s *Server) Requests(ctx context.Context, merchantID string, onlyViolations bool, offset, limit int) ([]JournalEntry, int, error) {
	if s.journal == nil {
		return nil, 0, errJournalDisabled("request journal")
	}
	return s.requests(ctx, merchantID, requestFilter{violations: onlyViolations}, offset, limit)
}

// Report is the merchant's conformance report: of every replica's
// requests on a shared store.
func (s *Server) Report(ctx context.Context, merchantID string) (Report, error) {
	if s.journal == nil {
		return Report{}, errJournalDisabled("report")
	}
	return s.report(ctx, merchantID)
}

// Forget drops what the server holds of a merchant that is gone (an idle
// open-mode merchant): its seeding mark, and its journal as far as this
// process holds it (paymock.JournalStore.ForgetRequests).
func (s *Server) Forget(ctx context.Context, merchantID string) error {
	s.seeded.Delete(merchantID)
	if s.journal == nil {
		return nil
	}
	if err := s.journal.forget(ctx, merchantID); err != nil {
		return fmt.Errorf("forget the request journal of %s: %w", merchantID, err)
	}
	return nil
}

// healthz handles GET /healthz: liveness. The process is up and serving;
// it says nothing of the database, so that an orchestrator does not
// restart replicas because the database they share is down.
func (s *Server) healthz(c *echo.Context) error {
	return c.JSONBlob(http.StatusOK, []byte(`{"status":"ok"}`))
}

// readyz handles GET /readyz: readiness. 503 while the backend cannot
// serve, so that a load balancer sends no traffic to a replica that
// would answer every call with store_unavailable.
func (s *Server) readyz(c *echo.Context) error {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			s.log.WarnContext(ctx, "not ready", "error", err)
			return c.JSONBlob(http.StatusServiceUnavailable, []byte(`{"status":"unavailable","code":"store_unavailable","message":"the sandbox's database cannot be reached"}`))
		}
	}
	return c.JSONBlob(http.StatusOK, []byte(`{"status":"ok"}`))
}

// readyTimeout bounds a readiness check, well inside the usual probe
// timeouts of orchestrators (1 s for Kubernetes, 3 s for the image's
// HEALTHCHECK).
const readyTimeout = 800 * time.Millisecond

// openapi handles GET /openapi.yaml: the service contract.
func (s *Server) openapi(c *echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", paymock.OpenAPI)
}

// ensureSeeded preloads a merchant's payments once, on its first
// authenticated request: configured merchants and open-mode keys alike.
func (s *Server) ensureSeeded(ctx context.Context, m *paymock.Merchant) {
	if s.seeder == nil {
		return
	}
	v, ok := s.seeded.Load(m.ID) // the common case allocates nothing
	if !ok {
		v, _ = s.seeded.LoadOrStore(m.ID, &sync.Once{})
	}
	v.(*sync.Once).Do(func() {
		now, err := s.clock.Now(ctx, m.ID)
		if err != nil {
			s.log.ErrorContext(ctx, "fake payments not made", "merchant", m.ID, "error", err)
			return
		}
		ps, err := s.seeder.Seed(ctx, m, now, s.publicURL)
		if err != nil {
			s.log.ErrorContext(ctx, "fake payments not made", "merchant", m.ID, "error", err)
			return
		}
		for _, p := range ps {
			// The store learns the fake customers, so a later create with
			// one of their emails gets the same customer id.
			if _, err := s.store.CustomerID(ctx, m.ID, p.Customer.Email, func() string { return p.Customer.ID }, s.maxPayments); err != nil {
				s.log.ErrorContext(ctx, "fake customer not stored", "merchant", m.ID, "error", err)
			}
			if err := s.store.Insert(ctx, p, s.maxPayments); err != nil {
				s.log.ErrorContext(ctx, "fake payment not stored", "merchant", m.ID, "payment", p.ID, "error", err)
				continue
			}
			if p.Status == paymock.StatusPending {
				s.lifecycle.Created(ctx, m, p, lifecycle.Trigger{})
			}
		}
		s.log.InfoContext(ctx, "fake payments loaded", "merchant", m.ID, "count", len(ps))
	})
}

// jsonSerializer is echo's JSON encoder without HTML escaping, so that what
// merchants sent (metadata, URLs) and webhook payloads shown by the control
// API come back byte for byte: "&" stays "&", not "\u0026".
type jsonSerializer struct{ echo.DefaultJSONSerializer }

func (jsonSerializer) Serialize(c *echo.Context, v any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(v)
}
