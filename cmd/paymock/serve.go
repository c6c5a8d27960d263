// Serving: the sandbox behind an HTTP server with limits, started and
// shut down gracefully.

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

	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/merchants"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/postgres"
	"github.com/paymock/paymock/sandbox"
)

// shutdownTimeout is how long in-flight requests get to finish at shutdown.
const shutdownTimeout = 10 * time.Second

// storeOpenTimeout bounds opening the --store database at start, so that a
// database that is down fails the start instead of hanging it.
const storeOpenTimeout = 15 * time.Second

// serverLimits are the HTTP server's timeouts and header size limit: a
// client that sends slowly, or sends too much, cannot hold a connection
// or memory for ever.
type serverLimits struct {
	// readHeader bounds reading the request line and headers.
	readHeader time.Duration
	// read bounds reading the whole request, body included.
	read time.Duration
	// write bounds the time from the end of the headers to the end of the
	// answer. It must outlast the longest delay a fault rule may inject
	// (faults.MaxDelayMS, 10 minutes), or the delayed answer would be cut.
	write time.Duration
	// idle bounds how long a kept-alive connection waits for its next request.
	idle time.Duration
	// answer bounds writing an answer, from its first byte: a client that
	// reads none of a large one cannot hold it for the whole write.
	answer time.Duration
	// maxHeaderBytes bounds the request line and headers.
	maxHeaderBytes int
	// maxConns bounds the connections held at once (connlimit); 0 takes
	// connlimit.FromFileLimit, the binary's bound.
	maxConns int
	// answerBytes bounds the bytes of large answers being written at once
	// (connlimit.Answers); 0 takes connlimit.DefaultAnswerBytes.
	answerBytes int64
}

// conns is the bound of the connections a server holds at once.
func (l serverLimits) conns() *connlimit.Limiter {
	n := l.maxConns
	if n == 0 {
		n = connlimit.FromFileLimit()
	}
	return connlimit.New(connlimit.Config{Max: n, Refusal: mockserver.HTTPRefusal(l.maxHeaderBytes)})
}

// defaultLimits are the limits of the binary; tests shorten them through
// hooks.limits.
var defaultLimits = serverLimits{
	readHeader:     10 * time.Second,
	read:           time.Minute,
	write:          faults.MaxDelayMS*time.Millisecond + time.Minute,
	answer:         time.Minute,
	idle:           2 * time.Minute,
	maxHeaderBytes: 64 << 10,
}

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

	policy := opts.egress()
	list, err := loadMerchants(opts.apiKeys, apiKeysFrom, opts.configPath, policy)
	if err != nil {
		return err
	}
	var set *lifecycle.Scenarios
	if opts.scenariosPath != "" {
		if set, err = lifecycle.LoadScenarios(opts.scenariosPath); err != nil {
			return &usageError{err: err}
		}
	}

	// Like the config and scenario files, a fault file with a mistake is
	// refused with its file:line before the port is taken (the sandbox
	// reads it again, as every embedder's does).
	if opts.faultsPath != "" {
		if _, err := faults.LoadFile(opts.faultsPath); err != nil {
			return &usageError{err: err}
		}
	}

	// The database first: one that is down is a start-up error (exit 2)
	// naming it, before the port is taken.
	backend := memory.New()
	if opts.storeURL != "" {
		octx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
		pg, err := postgres.Open(octx, postgres.Config{URL: opts.storeURL, Logger: logger})
		cancel()
		if err != nil {
			return &usageError{err: fmt.Errorf("%s: cannot use the PostgreSQL database: %w", opts.storeFrom, err)}
		}
		defer pg.Close() // after the sandbox has stopped, below
		backend = pg.Backend()
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

	limits := defaultLimits
	if h.limits != nil {
		limits = *h.limits
	}
	sb, err := sandbox.New(sandbox.Config{
		MaxAnswerBytes:  limits.answerBytes,
		ReadWithin:      limits.read,
		Logger:          logger,
		Merchants:       list,
		Clock:           lifecycle.ClockConfig{Mode: opts.clockMode, Start: opts.clockStart},
		Seed:            opts.seed,
		Variants:        opts.variants,
		Scenarios:       set,
		Webhooks:        sandbox.WebhookConfig{URLs: opts.webhookURLs, Secret: opts.webhookSecret, Retry: opts.webhookRetry, Egress: policy},
		PublicURL:       publicURL,
		BodyLimit:       opts.bodyLimit,
		JournalSize:     opts.journalSize,
		FakePayments:    opts.fakePayments,
		Backend:         backend,
		MaxMerchants:    sandboxNoCap(opts.maxMerchants),
		MaxPayments:     sandboxNoCap(opts.maxPayments),
		MerchantIdleTTL: sandboxIdleTTL(opts.merchantIdleTTL),
		FaultsFile:      opts.faultsPath,
		Metrics:         opts.metrics,
	})
	if err != nil {
		return &usageError{err: err}
	}
	sb.Start()
	var handler = sb.Handler()
	if h.wrap != nil {
		handler = h.wrap(handler)
	}

	conns := limits.conns()
	srv := &http.Server{
		Handler:           conns.Handler(connlimit.AnswerWithin(limits.answer, handler)),
		ReadHeaderTimeout: limits.readHeader,
		ReadTimeout:       limits.read,
		WriteTimeout:      limits.write,
		IdleTimeout:       limits.idle,
		MaxHeaderBytes:    limits.maxHeaderBytes,
		// OPTIONS * goes to the sandbox, which answers it as every request
		// (an error of the one shape, nosniff, no-store), not to net/http's
		// bare 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	conns.Server(srv)
	if h.shuttingDown != nil {
		srv.RegisterOnShutdown(h.shuttingDown)
	}

	logStart(logger, opts, sb.Merchants(), bound, publicURL, sb.Seed())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns.Listen(ln)) }()
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

// sandboxNoCap is a cap flag (--max-merchants, --max-payments) as
// sandbox.Config reads it: the flag's 0 (no cap) is the Config's negative.
func sandboxNoCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// sandboxIdleTTL is --merchant-idle-ttl as sandbox.Config reads it: the
// flag's 0 (never forget) is the Config's negative.
func sandboxIdleTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// storeName is how the log names --store: never the URL, which may hold a
// password.
func storeName(storeURL string) string {
	if storeURL == "" {
		return "memory"
	}
	return "postgres"
}

// logStart logs how the server runs. It names merchants and counts keys;
// it never logs a key or a webhook secret.
func logStart(logger *slog.Logger, opts *options, merchants *merchants.Registry, bound, publicURL string, seed uint64) {
	mode := "configured"
	keys := 0
	if merchants.Open() {
		mode = "open"
		logger.Warn("paymock runs in open mode: no merchants are configured, so any well-formed bearer token is accepted and each token is a merchant of its own")
	}
	for _, m := range merchants.Configured() {
		keys += len(m.APIKeys)
		// webhooks counts the endpoints the merchant's events go to: its
		// own, or else the --webhook-url ones every merchant without its
		// own gets. Counting its own alone read webhooks=0 beside
		// webhook_urls=1, as if its webhooks were off.
		hooks, from := len(m.Webhooks), "config"
		if hooks == 0 {
			hooks, from = len(opts.webhookURLs), "--webhook-url"
		}
		if hooks == 0 {
			from = "none"
		}
		logger.Info("merchant",
			"name", m.Name,
			"api_keys", len(m.APIKeys),
			"pci_approved", m.PCIApproved,
			"accounts", len(m.Accounts),
			"webhooks", hooks,
			"webhooks_from", from)
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
		"faults", opts.faultsPath,
		"store", storeName(opts.storeURL),
		"max_merchants", opts.maxMerchants,
		"max_payments", opts.maxPayments,
		"merchant_idle_ttl", opts.merchantIdleTTL.String(),
		"metrics", opts.metrics,
		"version", buildVersion())
}
