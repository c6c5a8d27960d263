// Package metrics is the operator's view of a running sandbox: request and
// contract counts, webhook outcomes, the size of live state, and the Go
// runtime and process figures, served in the Prometheus text format.
//
// paymock writes the text exposition format itself rather than link
// Prometheus's client library: the library's package initialisation was
// about 5 ms of every start and 2.5 MB of the binary, for a format of a few
// lines per series. The names, types, labels, help texts and buckets are
// those the library served; the tests read every scrape with Prometheus's
// own parser.
//
// Each Metrics counts on its own, so two sandboxes in one test process do
// not share counters. The methods the request chain and the webhook
// dispatcher call are safe for concurrent use, do not allocate, and do
// nothing on a nil *Metrics, so callers with metrics turned off need no
// checks of their own.
package metrics

import (
	"log/slog"
	"sort"
	"sync/atomic"
	"time"
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

// statusSlots is the number of status slots per operation: one per code
// from minStatus to maxStatus, and one for "other".
const statusSlots = maxStatus - minStatus + 2

// bucketLimits are the paymock_request_duration_seconds bucket bounds,
// held as durations so that a request is placed by comparing integers,
// not by converting to seconds; bucketBounds gives them in seconds.
func bucketLimits() [numBounds]time.Duration {
	return [numBounds]time.Duration{
		time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
		25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
		500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	}
}

// numBounds is the number of bucket bounds; bucket numBounds is +Inf.
const numBounds = 13

// bucketOf is the index of the bucket d falls in (numBounds: above every
// bound).
func bucketOf(d time.Duration) int {
	for i, limit := range bucketLimits() {
		if d <= limit {
			return i
		}
	}
	return numBounds
}

func bucketBounds() [numBounds]float64 {
	var b [numBounds]float64
	for i, limit := range bucketLimits() {
		b[i] = limit.Seconds()
	}
	return b
}

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

// Metrics counts what the sandbox does and serves the counts in the
// Prometheus text format. Build it with New.
type Metrics struct {
	logger *slog.Logger
	gauges []gaugeFunc
	// scrapes holds a token per scrape in progress: the endpoint is
	// unauthenticated, so a flood is turned away rather than queued.
	scrapes chan struct{}

	ops     map[string]int // operation -> index into opNames; missing: other
	opNames []string       // Config.Operations, then "other"
	opOrder []int          // indexes of opNames sorted by name, the exposition's order

	// requests holds one counter per operation and status slot (index:
	// op*statusSlots + slot); a series is served once its count is not
	// zero, as the client library served a series once it was made.
	requests  []atomic.Uint64
	durations []histogram // one per operation

	violations fixedCounter
	attempts   fixedCounter
	finished   fixedCounter
	faults     fixedCounter
	created    atomic.Uint64
}

// histogram is one operation's request durations. Buckets are counted
// apart (not cumulated) so that a request adds to one of them; the
// exposition cumulates them and takes the count from their total, so that
// the count always equals the +Inf bucket even while requests land.
type histogram struct {
	buckets [numBounds + 1]atomic.Uint64 // the last: above every bound
	sum     atomic.Int64                 // nanoseconds
}

// gaugeFunc is a gauge read from fn at each scrape.
type gaugeFunc struct {
	name, help string
	fn         func() int
}

// maxScrapes is how many scrapes may run at once; more get a 503.
const maxScrapes = 8

// New returns Metrics counting from zero.
func New(cfg Config) *Metrics {
	m := &Metrics{
		logger:  cfg.Logger,
		scrapes: make(chan struct{}, maxScrapes),
		ops:     make(map[string]int, len(cfg.Operations)),
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	for _, op := range cfg.Operations {
		if _, dup := m.ops[op]; dup || op == other {
			continue
		}
		m.ops[op] = len(m.opNames)
		m.opNames = append(m.opNames, op)
	}
	m.opNames = append(m.opNames, other)
	m.opOrder = make([]int, len(m.opNames))
	for i := range m.opOrder {
		m.opOrder[i] = i
	}
	sort.Slice(m.opOrder, func(a, b int) bool { return m.opNames[m.opOrder[a]] < m.opNames[m.opOrder[b]] })
	m.requests = make([]atomic.Uint64, len(m.opNames)*statusSlots)
	m.durations = make([]histogram, len(m.opNames))

	m.violations = newFixedCounter("side", "request", "response")
	m.attempts = newFixedCounter("outcome", "delivered", "retrying", "failed", "interrupted")
	m.finished = newFixedCounter("state", "delivered", "failed", "interrupted")
	m.faults = newFixedCounter("target", "api", "webhooks")

	for _, g := range []gaugeFunc{
		{"paymock_merchants", "Merchants the sandbox holds state for.", cfg.Merchants},
		{"paymock_stored_payments", "Payments held in the store, all merchants together.", cfg.StoredPayments},
		{"paymock_scheduled_timers", "Expiries, webhook retries and scenario steps waiting for their time.", cfg.ScheduledTimers},
	} {
		if g.fn != nil {
			m.gauges = append(m.gauges, g)
		}
	}
	return m
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
	m.requests[op*statusSlots+slot].Add(1)

	h := &m.durations[op]
	h.buckets[bucketOf(elapsed)].Add(1)
	h.sum.Add(int64(elapsed))
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
		m.created.Add(1)
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
// advance, plus "other" for any value that is not. The known values'
// series are served from the start (at 0), so a query for "failed" finds a
// zero rather than nothing; "other" only once something fell into it.
type fixedCounter struct {
	label  string
	values []string
	counts []atomic.Uint64 // one per value, then other
}

func newFixedCounter(label string, values ...string) fixedCounter {
	return fixedCounter{label: label, values: values, counts: make([]atomic.Uint64, len(values)+1)}
}

// inc counts value, or "other" when value is not one of the known ones.
func (f *fixedCounter) inc(value string) {
	for i, v := range f.values {
		if v == value {
			f.counts[i].Add(1)
			return
		}
	}
	f.counts[len(f.values)].Add(1)
}
