package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/sandbox"
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
	var set *lifecycle.Scenarios
	if opts.scenariosPath != "" {
		if set, err = lifecycle.LoadScenarios(opts.scenariosPath); err != nil {
			return &usageError{err}
		}
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

	sb, err := sandbox.New(sandbox.Config{
		Logger:       logger,
		Merchants:    list,
		Clock:        lifecycle.ClockConfig{Mode: opts.clockMode, Start: opts.clockStart},
		Seed:         opts.seed,
		Variants:     opts.variants,
		Scenarios:    set,
		Webhooks:     sandbox.WebhookConfig{URLs: opts.webhookURLs, Secret: opts.webhookSecret, Retry: opts.webhookRetry},
		PublicURL:    publicURL,
		BodyLimit:    opts.bodyLimit,
		JournalSize:  opts.journalSize,
		FakePayments: opts.fakePayments,
	})
	if err != nil {
		return &usageError{err}
	}
	sb.Start()
	var handler = sb.Handler()
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

	logStart(logger, opts, sb.Merchants(), bound, publicURL, sb.Seed())

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
	if err := sb.Close(sctx); err != nil {
		logger.Warn("webhook deliveries interrupted by shutdown", "error", err)
	}
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
