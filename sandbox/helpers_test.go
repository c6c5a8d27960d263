// Test helpers: a real server over loopback, and a client whose transport
// validates every response against the contract on its own.

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/egress"
	"github.com/paymock/paymock/internal/contracttest"
	"github.com/paymock/paymock/internal/pgbackendtest"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/webhooks"
)

// testEnv is one running server and what a test needs to talk to it.
type testEnv struct {
	t      testing.TB
	srv    *httptest.Server
	URL    string
	client *http.Client
	sb     *Sandbox
	store  paymock.Store
	clocks *lifecycle.Clocks
	logs   *logBuffer
	hooks  *webhooks.Dispatcher
	// normalize turns variant forms back into the default one in send.
	normalize bool
}

type envOption func(*envConfig)

type envConfig struct {
	merchants      []paymock.Merchant
	start          time.Time
	bodyLimit      int64
	violations     bool
	realClock      bool
	realStart      time.Time // a real clock's first instant; zero: the real time
	endpoints      []string
	secret         string
	retry          []time.Duration
	scenarios      *lifecycle.Scenarios
	variants       string // a --variants spec, drawn from seed
	seed           *uint64
	faultsFile     string
	journalSize    *int
	maxMerchants   int
	maxPayments    int
	maxPending     int // Webhooks.MaxPendingForRedeliver
	metrics        bool
	backend        paymock.Backend // zero: testBackend's
	outage         bool            // 503 store_unavailable answers are expected
	webhookTimeout time.Duration
	egress         *egress.Policy // nil: the default policy
	logLevel       *slog.Level    // nil: debug, so that tests see every line
	// wrap is served around the sandbox's handler; nil: none.
	wrap func(http.Handler) http.Handler
}

// expectingOutage lets the server answer 503 store_unavailable, which a
// test of a database outage wants, without failing the test.
func expectingOutage() envOption { return func(c *envConfig) { c.outage = true } }

// withStart starts the merchants' frozen clocks at t.
func withStart(t time.Time) envOption { return func(c *envConfig) { c.start = t } }

// onStore builds the sandbox on st: several envs on one shared store are
// replicas of one sandbox.
func onBackend(b paymock.Backend) envOption { return func(c *envConfig) { c.backend = b } }

// withVariants sends the wire forms of a --variants spec, drawn from seed.
func withVariants(spec string, seed uint64) envOption {
	return func(c *envConfig) { c.variants, c.seed = spec, &seed }
}

// withRealClock runs the merchants' clocks on real time (default: frozen
// at testStart, moved only by advance).
// withSeed seeds ids, variants, fake data and fault draws.
func withSeed(seed uint64) envOption { return func(c *envConfig) { c.seed = &seed } }

// withFaultsFile applies the fault rules of a file to every merchant.
func withFaultsFile(path string) envOption { return func(c *envConfig) { c.faultsFile = path } }

// withMaxMerchants caps the open-mode merchants held at once.
func withMaxMerchants(n int) envOption { return func(c *envConfig) { c.maxMerchants = n } }

// withMaxPayments caps each merchant's payments (Config.MaxPayments).
func withMaxPayments(n int) envOption { return func(c *envConfig) { c.maxPayments = n } }

// withMaxPendingForRedeliver refuses a redelivery while a merchant has n
// deliveries pending (WebhookConfig.MaxPendingForRedeliver).
func withMaxPendingForRedeliver(n int) envOption { return func(c *envConfig) { c.maxPending = n } }

// withMetrics serves /metrics.
func withMetrics() envOption { return func(c *envConfig) { c.metrics = true } }

// withJournalSize keeps n requests per merchant; 0 turns the journal off.
func withJournalSize(n int) envOption { return func(c *envConfig) { c.journalSize = &n } }

func withRealClock() envOption { return func(c *envConfig) { c.realClock = true } }

// withLogLevel logs at l rather than debug: a benchmark measures the
// server as the binary runs it (info by default), not the debug lines a
// test reads.
func withLogLevel(l slog.Level) envOption { return func(c *envConfig) { c.logLevel = &l } }

// withRealClockAt runs the merchants' clocks real, starting at t.
func withRealClockAt(t time.Time) envOption {
	return func(c *envConfig) { c.realClock, c.realStart = true, t }
}

// withWebhookTimeout gives each webhook attempt d (default 5 s).
func withWebhookTimeout(d time.Duration) envOption {
	return func(c *envConfig) { c.webhookTimeout = d }
}

// withWebhooks sends every merchant's events to endpoints, retrying on the
// given schedule.
func withWebhooks(retry []time.Duration, eps ...paymock.WebhookEndpoint) envOption {
	return func(c *envConfig) {
		c.retry = retry
		for _, ep := range eps {
			c.endpoints, c.secret = append(c.endpoints, ep.URL), ep.Secret
		}
	}
}

func withScenarios(set *lifecycle.Scenarios) envOption {
	return func(c *envConfig) { c.scenarios = set }
}

func withMerchants(ms ...paymock.Merchant) envOption {
	return func(c *envConfig) { c.merchants = ms }
}

func withBodyLimit(n int64) envOption { return func(c *envConfig) { c.bodyLimit = n } }

// wrappedIn serves the sandbox's handler inside wrap, which may watch or
// pause the requests it passes on.
func wrappedIn(wrap func(http.Handler) http.Handler) envOption {
	return func(c *envConfig) { c.wrap = wrap }
}

// expectingViolations is for the tests that make the server break its
// own contract on purpose: its 500 response_contract_violation answers
// and the violations it logs do not fail the test. Every answer is still
// checked against the contract.
func expectingViolations() envOption { return func(c *envConfig) { c.violations = true } }

// testStart is the frozen instant every test clock starts at.
var testStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func newEnv(t testing.TB, opts ...envOption) *testEnv {
	t.Helper()
	cfg := envConfig{start: testStart, webhookTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	// PAYMOCK_TEST_VARIANTS runs the whole suite with the server sending
	// other wire forms (the test command does a pass with "all"): the
	// validating transport checks the raw answers, and send() turns them
	// back into the default form so the tests' own assertions still hold.
	normalize := false
	if spec := os.Getenv("PAYMOCK_TEST_VARIANTS"); spec != "" && cfg.variants == "" {
		if _, err := paymock.ParseVariants(spec, 1); err != nil {
			t.Fatalf("PAYMOCK_TEST_VARIANTS: %v", err)
		}
		cfg.variants, normalize = spec, true
		if cfg.seed == nil { // a test's own seed stands
			seed := uint64(1)
			cfg.seed = &seed
		}
	}
	clockCfg := lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: cfg.start}
	if cfg.realClock {
		clockCfg = lifecycle.ClockConfig{Mode: lifecycle.ClockReal, Start: cfg.realStart}
	}
	logs := &logBuffer{}
	level := slog.LevelDebug
	if cfg.logLevel != nil {
		level = *cfg.logLevel
	}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))
	journalSize := DefaultJournalSize
	if cfg.journalSize != nil {
		journalSize = *cfg.journalSize
	}
	srv := httptest.NewUnstartedServer(nil)
	backend := cfg.backend
	if backend.Payments == nil {
		backend = testBackend(t)
	}
	sb, err := New(Config{
		Backend:   backend,
		Logger:    logger,
		Merchants: cfg.merchants,
		Clock:     clockCfg,
		Seed:      cfg.seed,
		Variants:  cfg.variants,
		Scenarios: cfg.scenarios,
		Webhooks: WebhookConfig{URLs: cfg.endpoints, Secret: cfg.secret, Retry: cfg.retry, Timeout: cfg.webhookTimeout, Egress: cfg.egress,
			MaxPendingForRedeliver: cfg.maxPending},
		PublicURL:    "http://" + srv.Listener.Addr().String(),
		BodyLimit:    cfg.bodyLimit,
		JournalSize:  journalSize,
		FaultsFile:   cfg.faultsFile,
		MaxMerchants: cfg.maxMerchants,
		MaxPayments:  cfg.maxPayments,
		Metrics:      cfg.metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	sb.Start()
	t.Cleanup(func() { _ = sb.Close(context.Background()) })
	srv.Config.Handler = sb.Handler()
	if cfg.wrap != nil {
		srv.Config.Handler = cfg.wrap(srv.Config.Handler)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	env := &testEnv{t: t, srv: srv, URL: srv.URL, sb: sb, store: sb.Store(), clocks: sb.Clocks(), logs: logs,
		hooks: sb.Webhooks(), normalize: normalize}
	env.client = &http.Client{Transport: checking(t, http.DefaultTransport, cfg),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(func() {
		if cfg.violations {
			return
		}
		if strings.Contains(logs.String(), "response violates the contract") {
			t.Errorf("the server logged a contract violation:\n%s", logs.String())
		}
	})
	return env
}

// testBackend is the backend a test's sandbox keeps its state in: memory
// (memory.New), or with PAYMOCK_TEST_STORE=postgres a fresh database on
// a throwaway PostgreSQL, so the whole suite runs against both.
func testBackend(t testing.TB) paymock.Backend {
	t.Helper()
	if os.Getenv("PAYMOCK_TEST_STORE") != "postgres" {
		return memory.New()
	}
	return pgbackendtest.Backend(t)
}

// logBuffer collects the server's logs; tests read them (keys must never
// appear) and fail on any contract violation the server reports.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// checking is the client transport of a test's env: it checks, independently
// of the server's own check (the contract files read by kin-openapi alone),
// that every answer to an API call is one the contract declares, and that
// no answer is a 5xx the test did not ask for.
func checking(t testing.TB, next http.RoundTripper, cfg envConfig) *contracttest.Transport {
	return &contracttest.Transport{T: t, Answers: contracttest.Independent(t, ".."), Next: next, Expected: cfg.expected}
}

// expected reports whether a 5xx answer is one the test asked for: an
// injected fault, and with expectingOutage or expectingViolations the
// answers they name.
func (c envConfig) expected(status int, body []byte) bool {
	unavailable := c.outage && status == http.StatusServiceUnavailable && bytes.Contains(body, []byte(`"store_unavailable"`))
	violation := c.violations && status == http.StatusInternalServerError && bytes.Contains(body, []byte(`"response_contract_violation"`))
	return injected(body) || unavailable || violation
}

// do sends a request with an optional JSON body and bearer key, and
// returns the status and the decoded JSON answer.
func (e *testEnv) do(method, path, key string, body any) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.send(e.request(method, path, key, body))
}

// request builds a request with an optional JSON body and bearer key.
func (e *testEnv) request(method, path, key string, body any) *http.Request {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

func (e *testEnv) send(req *http.Request) (int, map[string]any, http.Header) {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %v: %s", req.Method, req.URL.Path, err, raw)
		}
	}
	if e.normalize {
		defaultForm(out, e.URL+"/checkout/")
	}
	return resp.StatusCode, out, resp.Header
}

// defaultForm rewrites, in place, every payment found in v from any
// variant form into the default one: amount as a number, "completed" for
// "succeeded", and payment_link back on card-less payments (checkout is
// the base of their checkout URLs; "" leaves payment_link alone).
func defaultForm(v any, checkout string) {
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			defaultForm(it, checkout)
		}
	case map[string]any:
		if id, _ := x["id"].(string); strings.HasPrefix(id, "pay_") {
			if a, ok := x["amount"].(string); ok {
				if f, err := strconv.ParseFloat(a, 64); err == nil {
					x["amount"] = f
				}
			}
			if x["status"] == "succeeded" {
				x["status"] = "completed"
			}
			if _, has := x["payment_link"]; !has && x["payment_method"] == nil && checkout != "" {
				x["payment_link"] = checkout + id
			}
		}
		for _, it := range x {
			defaultForm(it, checkout)
		}
	}
}

// validCreate is a create body that passes every rule; tests change one
// thing at a time.
func validCreate() map[string]any {
	return map[string]any{
		"amount":      10.5,
		"currency":    "USD",
		"customer":    map[string]any{"email": "jane@example.com", "name": "Jane Doe"},
		"description": "Order 1234",
		"expires_in":  3600,
		"metadata":    map[string]any{"order_id": "ord_1234"},
		"success_url": "https://shop.example.com/success",
		"cancel_url":  "https://shop.example.com/cancel",
		"mcc":         5732,
	}
}

func withCard(body map[string]any) map[string]any {
	body["payment_method"] = map[string]any{
		"type": "card",
		"card": map[string]any{"number": "4242424242424242", "expiry_month": 12, "expiry_year": 2030, "cvc": "123"},
	}
	return body
}

// errorOf returns the error object of an answer.
func errorOf(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	return e
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// injected reports whether an answer is a fault the test asked for: the
// one kind of 5xx a test may see.
func injected(body []byte) bool {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Code == "injected_fault"
}
