// Package metrics is the operator's view of a running sandbox: request and
// contract counts, webhook outcomes, the size of live state, and the Go
// runtime and process figures, served in the Prometheus text format.
//
// Everything is registered on a registry of its own (never the default
// one), so two sandboxes in one test process do not share or collide on
// counters. The methods the request chain and the webhook dispatcher call
// are safe for concurrent use, do not allocate once a series exists, and do
// nothing on a nil *Metrics, so callers with metrics turned off need no
// checks of their own.
package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// other is the label value every unknown operation, side, outcome, state or
// target folds to: a caller's typo or a new value must not grow the number
// of series without bound.
const other = "other"

// Status codes counted under their own number; anything else (net/http
// allows up to 999) is counted as "other".
const (
	minStatus = 100
	maxStatus = 599
)

// Config is what Metrics is built from. Every field may be left zero.
type Config struct {
	// Operations are the operation ids requests are counted under (the
	// operationIds of both contracts, and any names the caller gives to
	// routes outside them). Request with any other operation counts it as
	// "other".
	Operations []string

	// Gauges read at each scrape. They may be called from several
	// goroutines at once, so they must be safe for concurrent use; a nil
	// one leaves its gauge out.
	Merchants       func() int // merchants known (configured and open-mode)
	StoredPayments  func() int // payments held by the store, all merchants
	ScheduledTimers func() int // expiries, retries and scenario steps waiting

	// Logger receives errors met while serving a scrape. Default: discard.
	Logger *slog.Logger
}

// Metrics counts what the sandbox does and serves the counts to Prometheus.
// Build it with New.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler
	runtime sync.Once // registers the Go and process collectors; see registerRuntime

	ops      map[string]int // operation -> index into opNames; missing: other
	opNames  []string       // Config.Operations, then "other"
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// reqSlots holds one counter per operation and status, made on first
	// use: made in advance they would fill each scrape with thousands of
	// zeros. Index: op*statusSlots + status slot.
	reqSlots []atomic.Pointer[counterRef]
	durSlots []atomic.Pointer[observerRef] // one per operation

	violations *fixedCounter
	attempts   *fixedCounter
	finished   *fixedCounter
	faults     *fixedCounter
	created    prometheus.Counter
}

// statusSlots is the number of status slots per operation: one per code
// from minStatus to maxStatus, and one for "other".
const statusSlots = maxStatus - minStatus + 2

type counterRef struct{ c prometheus.Counter }

type observerRef struct{ o prometheus.Observer }

// New registers every metric on a new registry and returns them with the
// handler that serves it.
func New(cfg Config) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, ops: make(map[string]int, len(cfg.Operations))}
	for _, op := range cfg.Operations {
		if _, dup := m.ops[op]; dup || op == other {
			continue
		}
		m.ops[op] = len(m.opNames)
		m.opNames = append(m.opNames, op)
	}
	m.opNames = append(m.opNames, other)
	m.reqSlots = make([]atomic.Pointer[counterRef], len(m.opNames)*statusSlots)
	m.durSlots = make([]atomic.Pointer[observerRef], len(m.opNames))

	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paymock_requests_total",
		Help: "Requests answered, by operation and HTTP status (injected faults included).",
	}, []string{"operation", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "paymock_request_duration_seconds",
		Help:    "Time from receiving a request to its answer, by operation (injected delays included).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"operation"})
	m.violations = newFixedCounter(prometheus.CounterOpts{
		Name: "paymock_contract_violations_total",
		Help: "Requests refused by the contract (side=request) and answers that broke it (side=response).",
	}, "side", "request", "response")
	m.attempts = newFixedCounter(prometheus.CounterOpts{
		Name: "paymock_webhook_attempts_total",
		Help: "Webhook POSTs, by what came of them.",
	}, "outcome", "delivered", "retrying", "failed", "interrupted")
	m.created = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "paymock_webhook_events_created_total",
		Help: "Webhook deliveries queued (one per event, endpoint and round); each ends in paymock_webhook_events_finished_total.",
	})
	m.finished = newFixedCounter(prometheus.CounterOpts{
		Name: "paymock_webhook_events_finished_total",
		Help: "Webhook deliveries that reached a final state; created minus finished are pending.",
	}, "state", "delivered", "failed", "interrupted")
	m.faults = newFixedCounter(prometheus.CounterOpts{
		Name: "paymock_injected_faults_total",
		Help: "Faults injected on purpose, by target (api or webhooks).",
	}, "target", "api", "webhooks")

	reg.MustRegister(m.requests, m.duration, m.violations.vec, m.attempts.vec, m.created, m.finished.vec, m.faults.vec)
	gauge(reg, cfg.Merchants, "paymock_merchants", "Merchants the sandbox holds state for.")
	gauge(reg, cfg.StoredPayments, "paymock_stored_payments", "Payments held in the store, all merchants together.")
	gauge(reg, cfg.ScheduledTimers, "paymock_scheduled_timers", "Expiries, webhook retries and scenario steps waiting for their time.")

	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	served := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrintln{logger},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
		// The endpoint is unauthenticated: scrapes that arrive together
		// share one gathering, and a flood of them is turned away rather
		// than queued.
		CoalesceGather:      true,
		MaxRequestsInFlight: 8,
	})
	m.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.registerRuntime()
		served.ServeHTTP(w, r)
	})
	return m
}

// registerRuntime registers the Go runtime's and the process's collectors
// before the first scrape or gathering rather than in New: building and
// registering them was about a millisecond of every start, for figures a
// run may never be asked for. Their values are read at each scrape
// anyway, so a late registration shows the same figures.
func (m *Metrics) registerRuntime() {
	m.runtime.Do(func() {
		m.reg.MustRegister(
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
	})
}

// gauge registers a gauge read from fn at each scrape, unless fn is nil.
func gauge(reg *prometheus.Registry, fn func() int, name, help string) {
	if fn == nil {
		return
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
		func() float64 { return float64(fn()) }))
}

// Handler serves the metrics in the Prometheus text format (or another
// format the scraper asks for in Accept). On a nil *Metrics it answers 404,
// as if the route did not exist.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// Registry is the registry everything is registered on, for a caller that
// wants to add collectors of its own or gather without HTTP.
func (m *Metrics) Registry() *prometheus.Registry {
	m.registerRuntime()
	return m.reg
}

// Request counts one answered request under its operation id (one of
// Config.Operations; anything else counts as "other") and HTTP status, and
// records how long it took.
func (m *Metrics) Request(operation string, status int, elapsed time.Duration) {
	if m == nil {
		return
	}
	op, ok := m.ops[operation]
	if !ok {
		op = len(m.opNames) - 1
	}
	slot := statusSlots - 1
	if status >= minStatus && status <= maxStatus {
		slot = status - minStatus
	}
	ref := m.reqSlots[op*statusSlots+slot].Load()
	if ref == nil {
		ref = m.requestCounter(op, slot)
	}
	ref.c.Inc()

	dref := m.durSlots[op].Load()
	if dref == nil {
		dref = &observerRef{m.duration.WithLabelValues(m.opNames[op])}
		m.durSlots[op].Store(dref)
	}
	dref.o.Observe(elapsed.Seconds())
}

// requestCounter makes the counter of one operation and status slot. Two
// goroutines may both get here for a new series; WithLabelValues returns
// the same child to both, so storing it twice is harmless.
func (m *Metrics) requestCounter(op, slot int) *counterRef {
	status := other
	if slot < statusSlots-1 {
		status = strconv.Itoa(slot + minStatus)
	}
	ref := &counterRef{m.requests.WithLabelValues(m.opNames[op], status)}
	m.reqSlots[op*statusSlots+slot].Store(ref)
	return ref
}

// ContractViolation counts a contract failure: side "request" for a request
// the contract refused, "response" for an answer that broke it (a bug).
func (m *Metrics) ContractViolation(side string) {
	if m != nil {
		m.violations.inc(side)
	}
}

// WebhookAttempt counts one webhook POST by its outcome: "delivered" (2xx),
// "retrying" (failed, another attempt is scheduled), "failed" (failed, no
// attempt left, or the endpoint answered 410), "interrupted" (stopped by
// shutdown).
func (m *Metrics) WebhookAttempt(outcome string) {
	if m != nil {
		m.attempts.inc(outcome)
	}
}

// EventCreated counts a webhook delivery entering the pending state: once
// per event, endpoint and round (a redelivery is a new round). Together
// with EventFinished it lets a soak check that nothing is lost:
// created = delivered + failed + interrupted + still pending.
func (m *Metrics) EventCreated() {
	if m != nil {
		m.created.Inc()
	}
}

// EventFinished counts a delivery counted by EventCreated reaching its
// final state: "delivered", "failed" or "interrupted".
func (m *Metrics) EventFinished(state string) {
	if m != nil {
		m.finished.inc(state)
	}
}

// InjectedFault counts a fault injected on purpose: target "api" for a
// request's answer, "webhooks" for a delivery.
func (m *Metrics) InjectedFault(target string) {
	if m != nil {
		m.faults.inc(target)
	}
}

// fixedCounter is a counter with one label whose values are known in
// advance; their children are resolved once, so counting is a short scan
// and an atomic add. Their series exist from the start (at 0), so a query
// for "failed" finds a zero rather than nothing.
type fixedCounter struct {
	vec      *prometheus.CounterVec
	values   []string
	children []prometheus.Counter
}

func newFixedCounter(opts prometheus.CounterOpts, label string, values ...string) *fixedCounter {
	f := &fixedCounter{vec: prometheus.NewCounterVec(opts, []string{label}), values: values}
	for _, v := range values {
		f.children = append(f.children, f.vec.WithLabelValues(v))
	}
	return f
}

// inc counts value, or "other" when value is not one of the known ones
// (a caller's bug: that path may allocate).
func (f *fixedCounter) inc(value string) {
	for i, v := range f.values {
		if v == value {
			f.children[i].Inc()
			return
		}
	}
	f.vec.WithLabelValues(other).Inc()
}

// slogPrintln lets promhttp report scrape errors through slog.
type slogPrintln struct{ l *slog.Logger }

func (p slogPrintln) Println(v ...any) {
	p.l.Error("serve metrics", "err", fmt.Sprint(v...))
}
