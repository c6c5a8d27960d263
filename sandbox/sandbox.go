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
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/egress"
	"github.com/paymock/paymock/fakepayments"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/merchants"
	"github.com/paymock/paymock/metrics"
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
	// Backend keeps the sandbox's state; the zero value means a new
	// in-memory one (memory.New).
	Backend paymock.Backend
	// MaxMerchants caps how many open-mode merchants are held at once
	// (configured merchants do not count): a new token past it is a 429.
	// 0 means merchants.DefaultMaxMerchants; negative, no cap.
	MaxMerchants int
	// MaxPayments caps how many payments one merchant holds: a create
	// past it is a 400 payment_limit until the merchant resets. 0 means
	// paymock.DefaultMaxPayments; negative, no cap.
	MaxPayments int
	// MaxAnswerBytes bounds the bytes of the large answers being written
	// at once: one that would pass it is refused with a 503. 0 means
	// connlimit.DefaultAnswerBytes; negative, no bound.
	MaxAnswerBytes int64
	// ReadWithin is the HTTP server's bound on reading a request, body
	// included (its ReadTimeout), if any: a delay fault restarts it for
	// the body still to come (mockserver.Config.ReadWithin).
	ReadWithin time.Duration
	// MerchantIdleTTL forgets an open-mode merchant, and all it holds,
	// after this long without a request when no work of it is pending.
	// 0 means DefaultMerchantIdleTTL; negative, never.
	MerchantIdleTTL time.Duration
	// FaultsFile is a YAML list of fault rules applied to every merchant
	// (--faults); "" means none.
	FaultsFile string
	// Metrics serves GET /metrics in the Prometheus text format.
	Metrics bool
}

// DefaultMerchantIdleTTL is how long an idle open-mode merchant is kept.
const DefaultMerchantIdleTTL = 24 * time.Hour

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
	// Egress is where deliveries may go, checked when a merchant adds an
	// endpoint and at every connection; nil means egress.New's default
	// (--webhook-deny).
	Egress *egress.Policy
	// MaxPendingForRedeliver refuses a redelivery (400 delivery_limit)
	// while the merchant has this many deliveries pending; 0 means
	// webhooks.DefaultMaxPendingForRedeliver. No flag sets it: tests
	// reach the refusal with a small one.
	MaxPendingForRedeliver int
}

// Sandbox is one whole sandbox, built and not yet started.
type Sandbox struct {
	log       *slog.Logger
	seed      uint64
	secret    string
	store     paymock.Store
	merchants *merchants.Registry
	clocks    *lifecycle.Clocks
	sched     *lifecycle.Scheduler
	hooks     *webhooks.Dispatcher
	engine    *lifecycle.Engine
	server    *mockserver.Server
	faults    *faults.Set
	idleTTL   time.Duration                                      // negative: merchants are never forgotten
	stop      chan struct{}                                      // closed by Close: the forgetting loop ends
	done      chan struct{}                                      // closed when the forgetting loop has ended
	sweeps    sweeper                                            // the sweep of due payments on real clocks
	release   func(ctx context.Context, merchantID string) error // the backend's Release
	started   bool
}

// New builds a sandbox from cfg. It starts nothing: Start does.
func New(cfg Config) (*Sandbox, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	backend := cfg.Backend
	if backend.Payments == nil {
		backend = memory.New()
	}
	clockCfg := cfg.Clock
	clockCfg.Store = backend.Clocks
	clocks, err := lifecycle.NewClocks(clockCfg)
	if err != nil {
		return nil, err
	}
	// One seed drives ids, variants, fake data and fault draws. Without
	// one, ids come from crypto/rand (unguessable), and the seed of the
	// rest is drawn at random so that it can be logged and used again.
	// Seeded, each merchant's ids come from a stream of its own, numbered
	// in the backend (paymock.MerchantIDs), so that no merchant can compute
	// another's and no two replicas or restarts draw one id twice.
	ids := paymock.NewMerchantIDs(cfg.Seed, backend.Sequences, backend.Merchants)
	seed := randomSeed()
	if cfg.Seed != nil {
		seed = *cfg.Seed
	}
	variants, err := paymock.ParseVariants(cfg.Variants, seed)
	if err != nil {
		return nil, fmt.Errorf("variants: %w", err)
	}
	secret, endpoints, err := defaultEndpoints(cfg.Webhooks, logger)
	if err != nil {
		return nil, err
	}
	store := backend.Payments
	policy := cfg.Webhooks.Egress
	if policy == nil {
		policy = egress.New(egress.Config{})
	}
	var sb *Sandbox // set at the end of New; no request can come before
	merchants, err := merchants.New(context.Background(), merchants.Config{
		Merchants: cfg.Merchants, DefaultWebhooks: endpoints, MaxMerchants: cfg.MaxMerchants,
		IDs: ids, Store: backend.Merchants, Logger: logger, Egress: policy,
		Empty:   func(ctx context.Context, id string) bool { return sb.holdsNothing(ctx, id) },
		Evicted: func(id string) { sb.dropEvicted(context.Background(), id) },
	})
	if err != nil {
		return nil, fmt.Errorf("merchants: %w", err)
	}
	docs, err := contract.Embedded()
	if err != nil {
		return nil, err
	}
	ops := make([]string, 0, 3)
	for _, op := range docs.Service.Operations() {
		ops = append(ops, op.ID)
	}
	ruleIDs := func(ctx context.Context, merchantID string) (string, error) {
		m, ok := merchants.ByID(ctx, merchantID)
		if !ok {
			return "", fmt.Errorf("rule id: no merchant %s", merchantID)
		}
		return ids.New(ctx, m, "flt")
	}
	rules, err := newFaults(cfg, backend.Faults, seed, ops, ruleIDs)
	if err != nil {
		return nil, err
	}
	sched := lifecycle.NewScheduler(clocks)
	var met *metrics.Metrics // nil: metrics off; its methods do nothing then
	if cfg.Metrics {
		met = metrics.New(metrics.Config{
			Logger:          logger,
			Operations:      ops,
			Merchants:       merchants.OpenCount,
			ScheduledTimers: sched.PendingAll,
		})
	}
	hcfg := webhooks.Config{
		Logger:    logger,
		Scheduler: sched,
		Clock:     webhookClock{clocks: clocks, log: logger},
		Endpoints: merchants,
		Faults:    webhookFaults{rules: rules, observer: met},
		Observer:  met,
		Retry:     cfg.Webhooks.Retry,
		Timeout:   cfg.Webhooks.Timeout,
		IDs:       ids,
		Client:    policy.Client(4),
	}
	hcfg.MaxPendingForRedeliver = cfg.Webhooks.MaxPendingForRedeliver
	// Events and deliveries live in the backend's outbox: any sender (or
	// replica) attempts what is due, and a restart loses nothing.
	hcfg.Outbox = backend.Outbox
	hcfg.Sweep = clocks.Mode() == lifecycle.ClockReal
	_, hcfg.ClockBase = clocks.RealNow()
	hooks, err := webhooks.New(hcfg)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	engine, err := lifecycle.NewEngine(lifecycle.Config{
		Logger: logger, Store: store, Clocks: clocks, Scheduler: sched, IDs: ids, Webhooks: hooks, Events: backend.Events,
		Due: backend.Due, Advances: backend.Advances,
		Scenarios: cfg.Scenarios, Variants: variants, Merchants: merchants,
	})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: %w", err)
	}
	journalSize := cfg.JournalSize
	if journalSize <= 0 {
		journalSize = -1 // mockserver's "off"
	}
	mcfg := mockserver.Config{
		Logger:         logger,
		Store:          store,
		Merchants:      merchants,
		IDs:            ids,
		RequestIDs:     requestIDs(cfg.Seed),
		Clock:          clocks,
		PublicURL:      cfg.PublicURL,
		BodyLimit:      cfg.BodyLimit,
		MaxPayments:    cfg.MaxPayments,
		MaxAnswerBytes: cfg.MaxAnswerBytes,
		ReadWithin:     cfg.ReadWithin,
		Lifecycle:      engine,
		JournalSize:    journalSize,
		Journal:        backend.Journal,
		Variants:       variants,
		Seeder:         newSeeder(cfg.FakePayments, seed),
		Faults:         rules,
		Developers:     merchants,
		Observer:       met,
	}
	mcfg.Ready = backend.Ready
	if met != nil {
		mcfg.Metrics = met.Handler()
	}
	server, err := mockserver.New(mcfg)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = "http://localhost:8080"
	}
	if err := mountDashboard(dashboardParts{merchants: merchants, engine: engine, hooks: hooks, server: server}, store, publicURL, logger); err != nil {
		return nil, err
	}
	idle := cfg.MerchantIdleTTL
	if idle == 0 {
		idle = DefaultMerchantIdleTTL
	}
	sb = &Sandbox{log: logger, seed: seed, secret: secret, store: store, merchants: merchants,
		clocks: clocks, sched: sched, hooks: hooks, engine: engine, server: server, faults: rules, release: backend.Release,
		idleTTL: idle, stop: make(chan struct{}), done: make(chan struct{})}
	return sb, nil
}

// Handler is the sandbox's HTTP handler: the API, the control API, the
// hosted pages and the health check.
func (s *Sandbox) Handler() http.Handler { return s.server }

// Start starts the webhook workers, the scheduler, the loop that forgets
// idle open-mode merchants and, on real clocks, the sweep of due payments.
func (s *Sandbox) Start() {
	s.hooks.Start()
	s.sched.Start()
	if !s.started {
		s.started = true
		go s.forgetIdle()
		s.startSweeps()
	}
}

// forgetIdle forgets, now and then, the open-mode merchants idle for
// longer than the TTL with no work pending, and all they hold: open mode
// makes a merchant of every token, and a long-lived shared sandbox must
// not keep them all.
func (s *Sandbox) forgetIdle() {
	defer close(s.done)
	if s.idleTTL < 0 || !s.merchants.Open() {
		return
	}
	every := min(max(s.idleTTL/10, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.ForgetIdle(now)
		}
	}
}

// ForgetIdle forgets the open-mode merchants idle at now for longer than
// the TTL with nothing scheduled or being delivered, and returns their ids.
func (s *Sandbox) ForgetIdle(now time.Time) []string {
	// Busy: a delivery under way or due for a retry, or a payment still
	// pending (its expiry and scenario steps are work to come). A final
	// payment's expiry timer is stale and does not count.
	busy := func(id string) bool { return s.hooks.Busy(id) || s.hasPending(id) }
	ctx := context.Background()
	gone := s.merchants.Forget(ctx, now, s.idleTTL, busy)
	for _, id := range gone {
		s.drop(ctx, id, "forgotten")
		s.log.Info("forgot an idle open-mode merchant", "merchant", id, "idle_for_more_than", s.idleTTL.String())
	}
	return gone
}

// Close stops the sandbox after its HTTP server has stopped taking
// requests (requests may emit events): the deliveries first (sends under
// way finish, or are cut short unrecorded once ctx is done; everything
// unsent stays pending in the backend), then the timers.
func (s *Sandbox) Close(ctx context.Context) error {
	if s.started {
		select {
		case <-s.stop:
		default:
			close(s.stop)
			<-s.done
		}
	}
	s.stopSweeps()
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
func (s *Sandbox) Merchants() *merchants.Registry { return s.merchants }

// Store is where the sandbox keeps payments.
func (s *Sandbox) Store() paymock.Store { return s.store }

// Clocks is the merchants' clocks.
func (s *Sandbox) Clocks() *lifecycle.Clocks { return s.clocks }

// Webhooks is the webhook dispatcher.
func (s *Sandbox) Webhooks() *webhooks.Dispatcher { return s.hooks }

// Lifecycle is the engine that moves payments to their outcomes.
func (s *Sandbox) Lifecycle() *lifecycle.Engine { return s.engine }

// defaultEndpoints are the --webhook-url endpoints every merchant without
// its own receives, signed with the configured secret or one generated
// (and logged) for them.
func defaultEndpoints(cfg WebhookConfig, logger *slog.Logger) (string, []paymock.WebhookEndpoint, error) {
	secret := cfg.Secret
	if secret == "" && len(cfg.URLs) > 0 {
		var err error
		if secret, err = webhooks.GenerateSecret(); err != nil {
			return "", nil, fmt.Errorf("webhook secret: %w", err)
		}
		// Logged once, on purpose: without it no receiver can verify.
		logger.Info("generated a webhook secret for --webhook-url endpoints; pass --webhook-secret to choose your own",
			"webhook_secret", secret)
	}
	endpoints := make([]paymock.WebhookEndpoint, 0, len(cfg.URLs))
	for _, u := range cfg.URLs {
		endpoints = append(endpoints, paymock.WebhookEndpoint{URL: u, Secret: secret})
	}
	return secret, endpoints, nil
}

// newFaults is the fault rule book: rules from FaultsFile for every
// merchant, and each merchant's own.
func newFaults(cfg Config, store paymock.FaultRules, seed uint64, ops []string,
	ids func(ctx context.Context, merchantID string) (string, error)) (*faults.Set, error) {
	var fileRules []faults.Rule
	if cfg.FaultsFile != "" {
		var err error
		if fileRules, err = faults.LoadFile(cfg.FaultsFile, ops...); err != nil {
			return nil, err
		}
	}
	fcfg := faults.Config{Store: store, Seed: seed, FileRules: fileRules, Operations: ops, IDs: ids}
	rules, err := faults.New(fcfg)
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return rules, nil
}

// webhookFaults hands the webhook dispatcher the fault rules aimed at it.
type webhookFaults struct {
	rules    *faults.Set
	observer *metrics.Metrics
}

// WebhookFault asks with the context of the call that prepares the
// deliveries (an API call's), as that call's own store steps do, rather
// than a timeout of its own per ask: a rule that cannot be matched shapes
// no delivery.
func (w webhookFaults) WebhookFault(ctx context.Context, merchantID string, t paymock.EventType) (paymock.WebhookFault, bool) {
	r, ok, err := w.rules.MatchWebhook(ctx, merchantID, string(t))
	if err != nil || !ok {
		return paymock.WebhookFault{}, false
	}
	w.observer.InjectedFault("webhooks")
	return paymock.WebhookFault{
		RuleID:        r.ID,
		Duplicate:     r.Duplicate,
		BadSignature:  r.BadSignature,
		TimestampSkew: time.Duration(r.TimestampSkewS) * time.Second,
		Delay:         time.Duration(r.DelayMS) * time.Millisecond,
		Reorder:       r.Reorder,
		Window:        time.Duration(r.WindowMS) * time.Millisecond,
		UnknownType:   r.UnknownType,
		ExtraFields:   r.ExtraFields,
	}, true
}

// hasPending reports whether the merchant has a payment still pending; on
// a store error it says yes, so nothing is forgotten by mistake.
func (s *Sandbox) hasPending(merchantID string) bool {
	ctx := context.Background()
	const page = 100
	for offset := 0; ; offset += page {
		ps, total, err := s.store.List(ctx, merchantID, offset, page)
		if err != nil {
			return true
		}
		for _, p := range ps {
			if p.Status == paymock.StatusPending {
				return true
			}
		}
		if offset+page >= total {
			return false
		}
	}
}

// requestIDs makes the ids of requests of no merchant: from the seed in a
// seeded run, so that it repeats exactly; they name no merchant's state, so
// replicas seeded alike drawing the same ones share nothing by it.
func requestIDs(seed *uint64) *paymock.IDs {
	if seed == nil {
		return nil
	}
	s := *seed ^ 0x9E3779B97F4A7C15
	return paymock.NewIDs(&s)
}

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

// webhookClock reads the merchants' clocks for the webhook dispatcher,
// which dates attempts with them: the clock store's failure is logged and
// the real time stands in for that date.
type webhookClock struct {
	clocks *lifecycle.Clocks
	log    *slog.Logger
}

func (w webhookClock) Now(ctx context.Context, merchantID string) time.Time {
	t, err := w.clocks.Now(ctx, merchantID)
	if err != nil {
		w.log.Warn("merchant's clock not read; dating a webhook attempt by the real time", "merchant", merchantID, "error", err)
		return time.Now().UTC()
	}
	return t
}
