package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/scenarios"
	"github.com/paymock/paymock/webhooks"
)

// The HTTP server's limits.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute // whole request, body included
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 10 * time.Second // for in-flight requests to finish
)

// newLogger is the slog logger of opts, writing to w.
func newLogger(opts *options, w io.Writer) *slog.Logger {
	ho := &slog.HandlerOptions{Level: opts.logLevel}
	if opts.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// serve runs the server until ctx is cancelled, then shuts it down
// gracefully: the listener closes at once and in-flight requests get
// shutdownTimeout to finish.
func serve(ctx context.Context, opts *options, apiKeysFrom string, stderr io.Writer, h hooks) error {
	logger := newLogger(opts, stderr)

	list, err := loadMerchants(opts.apiKeys, apiKeysFrom, opts.configPath)
	if err != nil {
		return err
	}
	merchants, err := paymock.NewMerchants(list)
	if err != nil {
		return &usageError{fmt.Errorf("merchants: %w", err)}
	}
	clocks, err := scenarios.NewClocks(scenarios.ClockConfig{Mode: opts.clockMode, Start: opts.clockStart})
	if err != nil {
		return &usageError{err}
	}

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	defer ln.Close() // a no-op once the server has closed it
	bound := ln.Addr().String()
	publicURL := opts.publicURL
	if publicURL == "" {
		_, port, _ := net.SplitHostPort(bound)
		publicURL = "http://localhost:" + port
	}

	var set *scenarios.Set
	if opts.scenariosPath != "" {
		if set, err = scenarios.Load(opts.scenariosPath); err != nil {
			return &usageError{err}
		}
	}
	secret := opts.webhookSecret
	if secret == "" && len(opts.webhookURLs) > 0 {
		if secret, err = webhooks.GenerateSecret(); err != nil {
			return fmt.Errorf("webhook secret: %w", err)
		}
		// Logged once, on purpose: without it no receiver can verify.
		logger.Info("generated a webhook secret for --webhook-url endpoints; pass --webhook-secret to choose your own",
			"webhook_secret", secret)
	}
	var endpoints []paymock.WebhookEndpoint
	for _, u := range opts.webhookURLs {
		endpoints = append(endpoints, paymock.WebhookEndpoint{URL: u, Secret: secret})
	}

	store := paymock.NewMemoryStore()
	ids := paymock.NewIDs(opts.seed)
	// One seed drives ids, variants and fake data. Without --seed, ids come
	// from crypto/rand (unguessable), and the seed of variants and fake
	// data is drawn at random and logged, so those can be had again.
	seed := randomSeed()
	if opts.seed != nil {
		seed = *opts.seed
	}
	variants, err := paymock.ParseVariants(opts.variants, seed)
	if err != nil {
		return &usageError{fmt.Errorf("--variants: %w", err)}
	}
	sched := scenarios.NewScheduler(clocks)
	hooks, err := webhooks.New(webhooks.Config{
		Logger:           logger,
		Scheduler:        sched,
		Clock:            clocks,
		DefaultEndpoints: endpoints,
		Retry:            opts.webhookRetry,
	})
	if err != nil {
		return &usageError{fmt.Errorf("webhooks: %w", err)}
	}
	engine, err := scenarios.NewEngine(scenarios.Config{
		Logger: logger, Store: store, Clocks: clocks, Scheduler: sched, IDs: ids, Webhooks: hooks, Scenarios: set,
		Variants: variants,
	})
	if err != nil {
		return fmt.Errorf("building the lifecycle: %w", err)
	}
	server, err := mockserver.New(mockserver.Config{
		Logger:      logger,
		Store:       store,
		Merchants:   merchants,
		IDs:         ids,
		Clock:       clocks,
		PublicURL:   publicURL,
		BodyLimit:   opts.bodyLimit,
		Lifecycle:   engine,
		JournalSize: journalSize(opts.journalSize),
		Variants:    variants,
		Seeder:      newSeeder(opts.fakePayments, seed),
	})
	if err != nil {
		return fmt.Errorf("building the server: %w", err)
	}
	hooks.Start()
	sched.Start()
	var handler http.Handler = server
	if h.wrap != nil {
		handler = h.wrap(handler)
	}

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if h.shuttingDown != nil {
		srv.RegisterOnShutdown(h.shuttingDown)
	}

	logStart(logger, opts, merchants, bound, publicURL, seed)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if h.ready != nil {
		h.ready(bound)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	logger.Info("paymock shutting down", "grace", shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// Requests first (they may emit events), then the deliveries (in
	// flight ones finish or are recorded as interrupted, as are queued and
	// scheduled ones), then the timers.
	shutErr := srv.Shutdown(sctx)
	if shutErr != nil {
		srv.Close()
	}
	if err := hooks.Close(sctx); err != nil {
		logger.Warn("webhook deliveries interrupted by shutdown", "error", err)
	}
	sched.Stop()
	if shutErr != nil {
		return fmt.Errorf("shutdown: requests still running after %s: %w", shutdownTimeout, shutErr)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("paymock stopped")
	return nil
}

// logStart logs how the server runs. It names merchants and counts keys;
// it never logs a key or a webhook secret.
func logStart(logger *slog.Logger, opts *options, merchants *paymock.Merchants, bound, publicURL string, seed uint64) {
	mode := "configured"
	keys := 0
	if merchants.Open() {
		mode = "open"
		logger.Warn("paymock runs in open mode: no merchants are configured, so any well-formed bearer token is accepted and each token is a merchant of its own")
	}
	for _, m := range merchants.Configured() {
		keys += len(m.APIKeys)
		logger.Info("merchant",
			"name", m.Name,
			"api_keys", len(m.APIKeys),
			"pci_approved", m.PCIApproved,
			"accounts", len(m.Accounts),
			"webhooks", len(m.Webhooks))
	}

	logger.Info("paymock listening",
		"addr", bound,
		"public_url", publicURL,
		"mode", mode,
		"merchants", len(merchants.Configured()),
		"api_keys", keys,
		"clock", string(opts.clockMode),
		"webhook_urls", len(opts.webhookURLs),
		"seed", seed,
		"variants", opts.variants,
		"fake_payments", opts.fakePayments,
		"scenarios", opts.scenariosPath,
		"version", buildVersion())
}

// randomSeed draws a seed for a run without --seed.
func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("paymock: no randomness: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// journalSize maps --journal-size (0: off) onto mockserver's (negative: off).
func journalSize(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
