// The in-process server: New, its options, and the calls a test drives it
// with.

package paymocktest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	yaml "github.com/oasdiff/yaml3"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/sandbox"
)

// Server is one sandbox running for one test.
type Server struct {
	// URL is the base URL of the sandbox, e.g. http://127.0.0.1:41235:
	// the service API is under URL+"/api/v1".
	URL string
	// APIKey is the key of the test's merchant: a fresh open-mode
	// merchant, or the first merchant of WithConfig / WithMerchants.
	APIKey string

	client *sandbox.Client
	hooks  *Webhooks
}

// Option configures New. Options mirror the flags of paymock.
type Option func(*options)

type options struct {
	err             error
	logger          *slog.Logger
	seed            *uint64
	merchants       []paymock.Merchant
	clock           lifecycle.ClockConfig
	variants        string
	scenariosPath   string
	faultsPath      string
	retry           []time.Duration
	fakePayments    int
	allowViolations bool
}

// WithSeed makes ids, variants, fake data and fault draws reproducible
// (--seed).
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = &seed } }

// WithConfig reads the merchants, keys, accounts and webhook endpoints of
// a paymock config file (--config); APIKey is then the first key of the
// first merchant.
func WithConfig(path string) Option {
	return func(o *options) {
		ms, err := readConfig(path)
		if err != nil {
			o.err = errors.Join(o.err, err)
			return
		}
		o.merchants = append(o.merchants, ms...)
	}
}

// WithMerchants configures merchants directly, as WithConfig does from a
// file.
func WithMerchants(ms ...paymock.Merchant) Option {
	return func(o *options) { o.merchants = append(o.merchants, ms...) }
}

// WithScenarios loads scripted outcomes from a scenario file or folder
// (--scenarios).
func WithScenarios(path string) Option { return func(o *options) { o.scenariosPath = path } }

// WithVariants sends the payment wire forms of spec, e.g. "all" or
// "amount=string,status=succeeded" (--variants).
func WithVariants(spec string) Option { return func(o *options) { o.variants = spec } }

// WithClock sets how the merchants' clocks run (--clock, --clock-start):
// "frozen" (the default: time moves only through Advance) or "real"; a
// zero start means now.
func WithClock(mode lifecycle.ClockMode, start time.Time) Option {
	return func(o *options) { o.clock = lifecycle.ClockConfig{Mode: mode, Start: start} }
}

// WithWebhookRetry sets the delays between delivery attempts, on the
// merchant's clock (--webhook-retry).
func WithWebhookRetry(delays ...time.Duration) Option {
	return func(o *options) { o.retry = delays }
}

// WithFaults applies the fault rules of a YAML file to every merchant
// (--faults).
func WithFaults(path string) Option { return func(o *options) { o.faultsPath = path } }

// WithFakePayments starts each merchant with n payments made up from the
// seed (--fake-payments).
func WithFakePayments(n int) Option { return func(o *options) { o.fakePayments = n } }

// WithLogger receives the sandbox's logs; they are discarded otherwise.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// AllowViolations turns off the check that fails the test when the code
// under test sent a request that broke the contract: for tests that send
// bad requests on purpose.
func AllowViolations() Option { return func(o *options) { o.allowViolations = true } }

// cleanupTimeout bounds what cleanup waits for: the violation check and
// the deliveries still in flight.
const cleanupTimeout = 10 * time.Second

// New starts a sandbox for t and stops it when t ends. It fails t (with
// t.Fatal) when an option is invalid.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.err != nil {
		t.Fatalf("paymocktest: %v", o.err)
	}
	cfg, err := o.sandboxConfig()
	if err != nil {
		t.Fatalf("paymocktest: %v", err)
	}
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatalf("paymocktest: %v", err)
	}

	hooks, err := newWebhooks()
	if err != nil {
		t.Fatalf("paymocktest: %v", err)
	}
	t.Cleanup(hooks.close)
	cfg.Webhooks = sandbox.WebhookConfig{URLs: []string{hooks.URL()}, Secret: hooks.Secret(), Retry: o.retry}

	srv := httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + srv.Listener.Addr().String()
	sb, err := sandbox.New(cfg)
	if err != nil {
		srv.Listener.Close()
		t.Fatalf("paymocktest: %v", err)
	}
	sb.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		// Deliveries cut short by the end of the test are no failure of it.
		_ = sb.Close(ctx)
	})
	srv.Config.Handler = sb.Handler()
	srv.Start()
	t.Cleanup(srv.Close)

	keys := []string{randomKey()}
	if len(o.merchants) > 0 {
		keys = keys[:0]
		for _, m := range o.merchants {
			keys = append(keys, m.APIKeys[0])
		}
	}
	clients := make([]*sandbox.Client, len(keys))
	for i, k := range keys {
		if clients[i], err = sandbox.NewClient(sandbox.ClientConfig{URL: srv.URL, APIKey: k, HTTPClient: srv.Client(), Answers: docs}); err != nil {
			t.Fatalf("paymocktest: %v", err)
		}
	}
	s := &Server{URL: srv.URL, APIKey: keys[0], client: clients[0], hooks: hooks}
	if !o.allowViolations {
		// Registered last, so it runs first: the server still answers.
		t.Cleanup(func() { checkViolations(t, clients) })
	}
	return s
}

// sandboxConfig turns the options into the sandbox's Config.
func (o *options) sandboxConfig() (sandbox.Config, error) {
	cfg := sandbox.Config{
		Logger:       o.logger,
		Merchants:    o.merchants,
		Clock:        o.clock,
		Seed:         o.seed,
		Variants:     o.variants,
		FaultsFile:   o.faultsPath,
		FakePayments: o.fakePayments,
		JournalSize:  sandbox.DefaultJournalSize,
	}
	if o.scenariosPath != "" {
		sc, err := lifecycle.LoadScenarios(o.scenariosPath)
		if err != nil {
			return cfg, err
		}
		cfg.Scenarios = sc
	}
	for i, m := range o.merchants {
		if len(m.APIKeys) == 0 {
			return cfg, fmt.Errorf("merchant %d (%q) has no api_keys: a test needs a key to call it with", i+1, m.Name)
		}
	}
	return cfg, nil
}

// randomKey is a fresh open-mode key: its own merchant in the sandbox.
func randomKey() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := []byte("sk_test_")
	for range 24 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic("paymocktest: no randomness: " + err.Error())
		}
		b = append(b, alphabet[n.Int64()])
	}
	return string(b)
}

// readConfig reads the merchants of a paymock config file. The sandbox
// validates them; this only reads the YAML, refusing unknown fields so a
// typo does not pass unseen.
func readConfig(path string) ([]paymock.Merchant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var cfg struct {
		Merchants []paymock.Merchant `yaml:"merchants"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if len(cfg.Merchants) == 0 {
		return nil, fmt.Errorf("config file %s: no merchants, want a merchants: list", path)
	}
	return cfg.Merchants, nil
}

// checkViolations fails t when a merchant's client sent a service API
// request the contract refused, listing each one, oldest first.
func checkViolations(t testing.TB, clients []*sandbox.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var lines []string
	total := 0
	for _, c := range clients {
		// The report counts every call, also those the bounded journal
		// has let go; most tests have none, and stop at this one call.
		rep, err := c.Report(ctx)
		if err != nil {
			t.Errorf("paymocktest: read the report for the contract check: %v", err)
			return
		}
		if rep.ViolatingCalls == 0 {
			continue
		}
		total += rep.ViolatingCalls
		entries, err := c.Requests(ctx, sandbox.RequestFilter{Violations: true})
		if err != nil {
			t.Errorf("paymocktest: read the request journal for the contract check: %v", err)
			return
		}
		slices.Reverse(entries)
		for _, e := range entries {
			if !strings.HasPrefix(e.Path, "/api/") {
				continue // the test's own control calls answer for themselves
			}
			lines = append(lines, describe(e))
		}
	}
	if total == 0 && len(lines) == 0 {
		return
	}
	msg := fmt.Sprintf("paymocktest: the code under test sent %d request(s) that break the contract:\n%s", max(total, len(lines)), strings.Join(lines, "\n"))
	if older := total - len(lines); older > 0 {
		msg += fmt.Sprintf("\n  ... and %d older one(s) the journal no longer holds", older)
	}
	t.Errorf("%s\n(paymocktest.AllowViolations() turns this check off for tests that send bad requests on purpose)", msg)
}

// describe is one refused request as the failure lists it.
func describe(e sandbox.JournalEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s %s", e.Method, e.Path)
	if e.Query != "" {
		b.WriteString("?" + e.Query)
	}
	fmt.Fprintf(&b, " -> %d", e.Status)
	for _, v := range e.Violations {
		b.WriteString("\n      ")
		if v.Param != "" {
			b.WriteString(v.Param + ": ")
		}
		fmt.Fprintf(&b, "%s (%s)", v.Message, v.Code)
	}
	return b.String()
}

// Complete moves a pending payment to completed; its payment.completed
// event goes to Webhooks.
func (s *Server) Complete(ctx context.Context, id string) (paymock.Payment, error) {
	return s.client.Complete(ctx, id)
}

// Fail moves a pending payment to failed.
func (s *Server) Fail(ctx context.Context, id string) (paymock.Payment, error) {
	return s.client.Fail(ctx, id)
}

// Expire moves a pending payment to expired.
func (s *Server) Expire(ctx context.Context, id string) (paymock.Payment, error) {
	return s.client.Expire(ctx, id)
}

// Advance moves the merchant's clock forward by d, a whole number of
// seconds. Everything that falls due on the way (expiries, scenario steps,
// webhook retries) has fired, and its deliveries have been attempted,
// when it returns.
func (s *Server) Advance(ctx context.Context, d time.Duration) error {
	_, err := s.client.Advance(ctx, d)
	return err
}

// Inject adds a fault rule for the merchant: API answers or webhook
// deliveries that fail on purpose.
func (s *Server) Inject(ctx context.Context, f Fault) error {
	r, err := f.rule()
	if err != nil {
		return err
	}
	_, err = s.client.AddFault(ctx, r)
	return err
}

// Webhooks is the receiver of the merchant's webhook deliveries.
func (s *Server) Webhooks() *Webhooks { return s.hooks }

// Requests is the merchant's request journal, newest first: every request
// with its status and, for those the contract refused, the violations. The
// server is in the test's own process, so it takes no context.
func (s *Server) Requests() ([]sandbox.JournalEntry, error) {
	return s.client.Requests(context.Background(), sandbox.RequestFilter{})
}
