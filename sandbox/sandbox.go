// Package sandbox assembles the whole paymock sandbox in one place: the
// store, the merchants, their clocks, the scheduler, the webhook
// dispatcher, the lifecycle engine and the HTTP server over them. The
// binary, the tests, the benchmarks, the load generator and paymocktest
// all build a sandbox through New; nothing else wires these together.
//
// sandbox/openapi.yaml beside this file is the control API's contract.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/fakepayments"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/webhooks"
)

// DefaultJournalSize is how many requests each merchant's journal keeps
// unless told otherwise.
const DefaultJournalSize = mockserver.DefaultJournalSize

// Config is what a Sandbox is built from. The zero value is a working
// open-mode sandbox on a real clock with the journal off.
type Config struct {
	// Logger receives the sandbox's logs; nil discards them.
	Logger *slog.Logger
	// Merchants are the configured merchants; none means open mode.
	Merchants []paymock.Merchant
	// Clock says how the merchants' clocks run (real or frozen, and where
	// they start).
	Clock lifecycle.ClockConfig
	// Seed makes ids, variants and fake data reproducible. Nil draws ids
	// from crypto/rand and a random seed for the rest (Seed tells which).
	Seed *uint64
	// Variants is the --variants spec of the wire forms sent ("" is the
	// default form).
	Variants string
	// Scenarios are scripted outcomes from files; nil leaves built-ins
	// and test cards only.
	Scenarios *lifecycle.Scenarios
	// Webhooks configures deliveries.
	Webhooks WebhookConfig
	// PublicURL is the base of URLs handed to customers, without a
	// trailing slash; "" means http://localhost:8080.
	PublicURL string
	// BodyLimit is the largest request body in bytes; 0 means 1 MiB.
	BodyLimit int64
	// JournalSize is how many requests each merchant's journal keeps; 0
	// turns the journal, and so the report, off (as --journal-size 0).
	JournalSize int
	// FakePayments preloads each merchant with this many payments made
	// from the seed on its first request.
	FakePayments int
	// Store keeps the payments; nil means a new in-memory store.
	Store paymock.Store
}

// WebhookConfig configures webhook deliveries.
type WebhookConfig struct {
	// URLs receive the events of every merchant without endpoints of
	// its own, signed with Secret.
	URLs []string
	// Secret signs deliveries to URLs; "" generates one and logs it.
	Secret string
	// Retry is the delays between attempts; nil means the default.
	Retry []time.Duration
	// Timeout is how long one attempt may take; 0 means 10s.
	Timeout time.Duration
}

// Sandbox is one whole sandbox, built and not yet started.
type Sandbox struct {
	log       *slog.Logger
	seed      uint64
	secret    string
	store     paymock.Store
	merchants *paymock.Merchants
	clocks    *lifecycle.Clocks
	sched     *lifecycle.Scheduler
	hooks     *webhooks.Dispatcher
	engine    *lifecycle.Engine
	server    *mockserver.Server
}

// New builds a sandbox from cfg. It starts nothing: Start does.
func New(cfg Config) (*Sandbox, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	merchants, err := paymock.NewMerchants(cfg.Merchants)
	if err != nil {
		return nil, fmt.Errorf("merchants: %w", err)
	}
	clocks, err := lifecycle.NewClocks(cfg.Clock)
	if err != nil {
		return nil, err
	}
	// One seed drives ids, variants and fake data. Without one, ids come
	// from crypto/rand (unguessable), and the seed of variants and fake
	// data is drawn at random so that it can be logged and used again.
	seed := randomSeed()
	if cfg.Seed != nil {
		seed = *cfg.Seed
	}
	variants, err := paymock.ParseVariants(cfg.Variants, seed)
	if err != nil {
		return nil, fmt.Errorf("variants: %w", err)
	}
	secret := cfg.Webhooks.Secret
	if secret == "" && len(cfg.Webhooks.URLs) > 0 {
		if secret, err = webhooks.GenerateSecret(); err != nil {
			return nil, fmt.Errorf("webhook secret: %w", err)
		}
		// Logged once, on purpose: without it no receiver can verify.
		logger.Info("generated a webhook secret for --webhook-url endpoints; pass --webhook-secret to choose your own",
			"webhook_secret", secret)
	}
	endpoints := make([]paymock.WebhookEndpoint, 0, len(cfg.Webhooks.URLs))
	for _, u := range cfg.Webhooks.URLs {
		endpoints = append(endpoints, paymock.WebhookEndpoint{URL: u, Secret: secret})
	}
	store := cfg.Store
	if store == nil {
		store = paymock.NewMemoryStore()
	}
	ids := paymock.NewIDs(cfg.Seed)
	sched := lifecycle.NewScheduler(clocks)
	hooks, err := webhooks.New(webhooks.Config{
		Logger:           logger,
		Scheduler:        sched,
		Clock:            clocks,
		DefaultEndpoints: endpoints,
		Retry:            cfg.Webhooks.Retry,
		Timeout:          cfg.Webhooks.Timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	engine, err := lifecycle.NewEngine(lifecycle.Config{
		Logger: logger, Store: store, Clocks: clocks, Scheduler: sched, IDs: ids, Webhooks: hooks,
		Scenarios: cfg.Scenarios, Variants: variants,
	})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: %w", err)
	}
	journalSize := cfg.JournalSize
	if journalSize <= 0 {
		journalSize = -1 // mockserver's "off"
	}
	server, err := mockserver.New(mockserver.Config{
		Logger:      logger,
		Store:       store,
		Merchants:   merchants,
		IDs:         ids,
		Clock:       clocks,
		PublicURL:   cfg.PublicURL,
		BodyLimit:   cfg.BodyLimit,
		Lifecycle:   engine,
		JournalSize: journalSize,
		Variants:    variants,
		Seeder:      newSeeder(cfg.FakePayments, seed),
	})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return &Sandbox{log: logger, seed: seed, secret: secret, store: store, merchants: merchants,
		clocks: clocks, sched: sched, hooks: hooks, engine: engine, server: server}, nil
}

// Handler is the sandbox's HTTP handler: the API, the control API, the
// hosted pages and the health check.
func (s *Sandbox) Handler() http.Handler { return s.server }

// Start starts the webhook workers and the scheduler.
func (s *Sandbox) Start() {
	s.hooks.Start()
	s.sched.Start()
}

// Close stops the sandbox after its HTTP server has stopped taking
// requests (requests may emit events): the deliveries first (in-flight
// ones finish or are recorded as interrupted, as are queued and scheduled
// ones), then the timers.
func (s *Sandbox) Close(ctx context.Context) error {
	err := s.hooks.Close(ctx)
	s.sched.Stop()
	if err != nil {
		return fmt.Errorf("webhook deliveries interrupted: %w", err)
	}
	return nil
}

// Seed is the run's seed: the configured one, or the one drawn for it.
func (s *Sandbox) Seed() uint64 { return s.seed }

// WebhookSecret is the secret that signs deliveries to Config.Webhooks.URLs.
func (s *Sandbox) WebhookSecret() string { return s.secret }

// Merchants is the sandbox's merchants and keys.
func (s *Sandbox) Merchants() *paymock.Merchants { return s.merchants }

// Store is where the sandbox keeps payments.
func (s *Sandbox) Store() paymock.Store { return s.store }

// Clocks is the merchants' clocks.
func (s *Sandbox) Clocks() *lifecycle.Clocks { return s.clocks }

// Webhooks is the webhook dispatcher.
func (s *Sandbox) Webhooks() *webhooks.Dispatcher { return s.hooks }

// Lifecycle is the engine that moves payments to their outcomes.
func (s *Sandbox) Lifecycle() *lifecycle.Engine { return s.engine }

// randomSeed draws a seed for a run without one.
func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("paymock: no randomness: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// seeder makes each merchant's fake payments from the run's seed.
type seeder struct {
	count int
	seed  uint64
}

// newSeeder returns the seeder of FakePayments, or nil for none.
func newSeeder(count int, seed uint64) mockserver.Seeder {
	if count == 0 {
		return nil
	}
	return seeder{count: count, seed: seed}
}

func (s seeder) Seed(_ context.Context, m *paymock.Merchant, now time.Time, publicURL string) ([]paymock.Payment, error) {
	return fakepayments.Generate(fakepayments.Config{Seed: s.seed, Merchant: m, Count: s.count, Now: now, PublicURL: publicURL})
}
