// Package mockserver is the HTTP side of paymock: an echo server that checks
// every request and response against the contract, authenticates merchants,
// and serves the payments API, the sandbox control API and hosted pages.
package mockserver

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/scenarios"
)

// Authenticator maps a bearer key to its merchant, and a merchant id back
// to the merchant (for the hosted pages, which carry no key).
type Authenticator interface {
	Authenticate(key string) (*paymock.Merchant, error)
	ByID(id string) (*paymock.Merchant, bool)
}

// IDGenerator makes prefixed ids ("pay" -> "pay_...").
type IDGenerator interface {
	New(prefix string) string
}

// Clock tells each merchant's current time.
type Clock interface {
	Now(merchantID string) time.Time
}

// DefaultBodyLimit is the largest request body accepted.
const DefaultBodyLimit = 1 << 20

// Config is what a Server is built from.
type Config struct {
	Logger    *slog.Logger
	Store     paymock.Store
	Merchants Authenticator
	IDs       IDGenerator
	Clock     Clock
	// PublicURL is the base of URLs handed to customers, without a
	// trailing slash, e.g. "http://localhost:8080".
	PublicURL string
	// BodyLimit is the largest request body in bytes; 0 means 1 MiB.
	BodyLimit int64
	// Lifecycle moves payments to their outcomes and emits their events.
	Lifecycle *scenarios.Engine
}

// Server is the paymock HTTP handler.
type Server struct {
	handler   http.Handler
	log       *slog.Logger
	store     paymock.Store
	merchants Authenticator
	ids       IDGenerator
	clock     Clock
	publicURL string
	bodyLimit int64
	api       *contract
	sandbox   *contract
	lifecycle *scenarios.Engine
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
	api, err := loadContract(paymock.Documents, "openapi.yaml")
	if err != nil {
		return nil, err
	}
	sandbox, err := loadContract(paymock.Documents, "sandbox/openapi.yaml")
	if err != nil {
		return nil, err
	}
	s := &Server{
		log:       cfg.Logger,
		store:     cfg.Store,
		merchants: cfg.Merchants,
		ids:       cfg.IDs,
		clock:     cfg.Clock,
		publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		bodyLimit: cfg.BodyLimit,
		api:       api,
		sandbox:   sandbox,
		lifecycle: cfg.Lifecycle,
	}
	e := echo.NewWithConfig(echo.Config{Logger: cfg.Logger})
	e.HTTPErrorHandler = func(c *echo.Context, err error) { s.writeError(c, err) }
	e.Pre(s.checkContract, s.recoverPanics)

	e.GET("/healthz", s.healthz)
	e.GET("/openapi.yaml", s.openapi)
	e.POST("/api/v1/payments", s.createPayment)
	e.GET("/api/v1/payments", s.listPayments)
	e.GET("/api/v1/payments/:id", s.retrievePayment)
	e.GET("/_sandbox/openapi.yaml", s.sandboxOpenAPI)
	e.POST("/_sandbox/payments/:id/complete", s.transition(paymock.StatusCompleted))
	e.POST("/_sandbox/payments/:id/fail", s.transition(paymock.StatusFailed))
	e.POST("/_sandbox/payments/:id/expire", s.transition(paymock.StatusExpired))
	e.GET("/_sandbox/clock", s.getClock)
	e.POST("/_sandbox/clock/advance", s.advanceClock)
	e.GET("/_sandbox/events", s.listEvents)
	e.POST("/_sandbox/events/:id/redeliver", s.redeliver)
	e.POST("/_sandbox/reset", s.reset)
	e.GET(checkoutPath+":id", s.page)
	e.GET(threeDSPath+":id", s.page)
	s.handler = e
	return s, nil
}

func (s *Server) healthz(c *echo.Context) error {
	return c.JSONBlob(http.StatusOK, []byte(`{"status":"ok"}`))
}

func (s *Server) openapi(c *echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", paymock.OpenAPI)
}
