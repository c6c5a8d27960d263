// Package webhooks turns events into signed deliveries: it posts each event
// to the merchant's endpoints, signed per Standard Webhooks, retries
// failures on the merchant's clock, keeps deliveries of one payment to one
// endpoint in order, and keeps a journal of every event and attempt for the
// control API.
//
// It imports only the standard library and the root package. The merchant
// clock and the scheduler that brings retries due are interfaces declared
// here and implemented by package lifecycle.
package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// Scheduler runs fn once the merchant's clock reaches due. (Implemented by
// package lifecycle; in frozen-clock mode it only fires when the merchant's
// clock is advanced, and in real mode by itself.) fn returns once the retry
// it queues has been attempted, so a scheduler that advances a clock runs a
// whole retry schedule in order; At may be called from any goroutine.
type Scheduler interface {
	At(merchantID string, due time.Time, fn func())
}

// Clock tells a merchant's current time (attempt times in the journal use
// it).
type Clock interface {
	Now(merchantID string) time.Time
}

// Config is what a Dispatcher is built from. Only what differs from the
// defaults needs setting.
type Config struct {
	Logger *slog.Logger // default: discard
	// Scheduler brings retries due. Default: real time (time.AfterFunc),
	// for use without package lifecycle.
	Scheduler Scheduler
	// Clock stamps attempts and next_attempt_at. Default: real time.
	Clock Clock
	// Endpoints for merchants that have none of their own (from
	// --webhook-url / --webhook-secret).
	DefaultEndpoints []paymock.WebhookEndpoint
	// Retry is the delays between attempts, so a delivery gets up to
	// 1+len(Retry) attempts. nil means the default 5s,30s,2m,10m,1h; an
	// empty non-nil slice means a single attempt.
	Retry   []time.Duration
	Timeout time.Duration // per attempt; default 10s
	Workers int           // default 4
	// QueueSize bounds the deliveries waiting for a worker; default 1024.
	QueueSize int
	// MaxEvents bounds each merchant's event journal; default 10,000.
	// Past it the oldest events whose deliveries are all finished are
	// forgotten; an event with a delivery still pending is always kept.
	MaxEvents int
	// Client posts the deliveries. Default: a client that follows no
	// redirects (a 3xx is a failed attempt).
	Client *http.Client
	// Now is real time for the webhook-timestamp header; default time.Now.
	// Receivers check that header against their own clock, so it is never
	// the merchant clock, which may be frozen or far ahead.
	Now func() time.Time
}

// DefaultRetry is the delay schedule used when Config.Retry is nil.
func DefaultRetry() []time.Duration {
	return []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour}
}

// ErrClosed is returned by Publish and Redeliver once Close has begun.
var ErrClosed = errors.New("webhooks: dispatcher closed")

// Messages recorded on deliveries and attempts.
const (
	msgClosedQueued   = "dispatcher closed before the delivery was attempted"
	msgClosedInFlight = "interrupted: the dispatcher closed during the attempt"
	msgClosedRetry    = "dispatcher closed before the next attempt"
	msgGone           = "endpoint answered 410 Gone: retries stopped"
)

// Dispatcher queues, signs, sends and retries deliveries and keeps their
// journal. All methods are safe for concurrent use.
//
// Workers start with Start, or on the first Publish or Redeliver if Start
// was not called, so a forgotten Start cannot stall deliveries. New starts
// no goroutine.
type Dispatcher struct {
	log       *slog.Logger
	sched     Scheduler
	clock     Clock
	defaults  []endpoint
	retry     []time.Duration
	timeout   time.Duration
	workers   int
	maxEvents int // per merchant journal
	client    *http.Client
	now       func() time.Time

	queue      chan job
	stop       chan struct{}   // closed when Close begins
	base       context.Context // parent of every attempt; cancelled when Close stops waiting
	cancelBase context.CancelFunc
	closeDone  chan struct{} // closed when Close has finished

	workerWG sync.WaitGroup
	// senders counts goroutines about to put a job on the queue; Close
	// waits for them before it drains the queue, so no job lands there
	// unseen. Add is only called under mu while !closed.
	senders sync.WaitGroup

	mu        sync.Mutex
	merchants map[string]*merchantState
	started   bool
	closed    bool
}

// job is one attempt of one delivery, waiting for a worker. Each job holds
// one busy token of its merchant until a worker is done with it.
type job struct{ del *delivery }

// merchantState is one merchant's journal and its count of busy tokens
// (deliveries queued, about to be queued, or in flight).
type merchantState struct {
	id   string
	busy int
	idle chan struct{} // closed when busy drops to 0
	j    *journal      // replaced by Reset
}

// journal is a merchant's events in publish order, and the chains that keep
// deliveries of one payment to one endpoint in order.
type journal struct {
	events []*eventEntry
	byID   map[string]*eventEntry
	// chains: per payment id and endpoint URL, the unfinished deliveries in
	// order. Only the head is ever queued, in flight or scheduled.
	chains map[string][]*delivery
}

// DefaultMaxEvents is how many events a merchant's journal keeps at least.
const DefaultMaxEvents = 10000

// trimLocked forgets the oldest events past max whose deliveries are all
// finished, so the journal stays bounded; the caller holds d.mu.
func (j *journal) trimLocked(max int) {
	over := len(j.events) - max
	if over <= 0 {
		return
	}
	kept := j.events[:0]
	for _, e := range j.events {
		if over > 0 && e.finishedLocked() {
			delete(j.byID, e.ev.ID)
			over--
			continue
		}
		kept = append(kept, e)
	}
	clear(j.events[len(kept):]) // let the forgotten ones be collected
	j.events = kept
}

// finishedLocked reports whether no delivery of the event is pending.
func (e *eventEntry) finishedLocked() bool {
	for _, del := range e.deliveries {
		if del.state == StatePending {
			return false
		}
	}
	return true
}

func newJournal() *journal {
	return &journal{byID: make(map[string]*eventEntry), chains: make(map[string][]*delivery)}
}

type eventEntry struct {
	j          *journal // the journal it belongs to: not the merchant's current one once Reset
	ev         paymock.Event
	endpoints  []endpointSlot // as at Publish; Redeliver uses them again
	deliveries []*delivery
	rounds     int
}

type endpointSlot struct {
	ep  endpoint
	err error // the endpoint is invalid: its deliveries fail at once
}

type delivery struct {
	ms       *merchantState
	entry    *eventEntry
	round    int
	ep       endpoint
	chain    string // key in journal.chains, "" when not chained
	state    State
	err      string
	attempts []attempt
	waiting  bool      // a retry is scheduled
	nextAt   time.Time // when, on the merchant clock
	// attempted is closed when the next attempt has been recorded or the
	// delivery ends; retryDue waits on it.
	attempted chan struct{}
}

// New checks cfg and returns a Dispatcher. Default endpoints must have an
// absolute http(s) URL and a "whsec_" + base64 secret; Retry delays,
// Timeout, Workers and QueueSize must not be negative (zero means the
// default).
func New(cfg Config) (*Dispatcher, error) {
	d := &Dispatcher{
		log:       cfg.Logger,
		sched:     cfg.Scheduler,
		clock:     cfg.Clock,
		timeout:   cfg.Timeout,
		workers:   cfg.Workers,
		client:    cfg.Client,
		now:       cfg.Now,
		merchants: make(map[string]*merchantState),
		stop:      make(chan struct{}),
		closeDone: make(chan struct{}),
	}
	for i, ep := range cfg.DefaultEndpoints {
		e, err := parseEndpoint(ep)
		if err != nil {
			return nil, fmt.Errorf("webhooks: default endpoint %d: %w", i+1, err)
		}
		d.defaults = append(d.defaults, e)
	}
	if cfg.Retry == nil {
		d.retry = DefaultRetry()
	} else {
		d.retry = append([]time.Duration{}, cfg.Retry...)
	}
	for i, r := range d.retry {
		if r <= 0 {
			return nil, fmt.Errorf("webhooks: retry delay %d is %s: must be greater than 0", i+1, r)
		}
	}
	switch {
	case cfg.Timeout < 0:
		return nil, errors.New("webhooks: Timeout must not be negative")
	case cfg.Workers < 0:
		return nil, errors.New("webhooks: Workers must not be negative")
	case cfg.QueueSize < 0:
		return nil, errors.New("webhooks: QueueSize must not be negative")
	case cfg.MaxEvents < 0:
		return nil, errors.New("webhooks: MaxEvents must not be negative")
	}
	d.maxEvents = cfg.MaxEvents
	if d.maxEvents == 0 {
		d.maxEvents = DefaultMaxEvents
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.sched == nil {
		d.sched = realScheduler{}
	}
	if d.clock == nil {
		d.clock = realClock{}
	}
	if d.timeout == 0 {
		d.timeout = 10 * time.Second
	}
	if d.workers == 0 {
		d.workers = 4
	}
	size := cfg.QueueSize
	if size == 0 {
		size = 1024
	}
	if d.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = d.workers
		d.client = &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.queue = make(chan job, size)
	d.base, d.cancelBase = context.WithCancel(context.Background())
	return d, nil
}

// realScheduler and realClock are the defaults when no lifecycle package
// drives time: everything on the real clock.
type realScheduler struct{}

func (realScheduler) At(_ string, due time.Time, fn func()) { time.AfterFunc(time.Until(due), fn) }

type realClock struct{}

func (realClock) Now(string) time.Time { return time.Now() }

// Start starts the workers. It is idempotent, does nothing after Close,
// and is also done by the first Publish or Redeliver.
func (d *Dispatcher) Start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startLocked()
}

func (d *Dispatcher) startLocked() {
	if d.started || d.closed {
		return
	}
	d.started = true
	d.workerWG.Add(d.workers)
	for range d.workers {
		go d.work()
	}
}

// Publish records ev in m's journal and queues one delivery per endpoint:
// m.Webhooks, or the default endpoints when m has none. With no endpoint
// the event is still recorded, with no deliveries. An invalid merchant
// endpoint gives a delivery that fails at once, with the reason.
//
// When the queue is full Publish waits for room until ctx is done; the
// deliveries it could not queue are then recorded as interrupted and the
// error wraps ctx.Err(). The event stays in the journal whatever the
// error, except for an invalid event. After Close it records the event
// with interrupted deliveries and returns ErrClosed.
func (d *Dispatcher) Publish(ctx context.Context, m *paymock.Merchant, ev paymock.Event) error {
	switch {
	case m == nil || m.ID == "":
		return errors.New("webhooks: publish: no merchant")
	case ev.ID == "":
		return errors.New("webhooks: publish: event has no id")
	case ev.MerchantID != "" && ev.MerchantID != m.ID:
		return fmt.Errorf("webhooks: publish: event %s belongs to another merchant", ev.ID)
	case !json.Valid(ev.Body):
		return fmt.Errorf("webhooks: publish: event %s: body is not JSON", ev.ID)
	}
	ev.MerchantID = m.ID
	ev.Body = bytes.Clone(ev.Body)

	var slots []endpointSlot
	if len(m.Webhooks) > 0 {
		for _, w := range m.Webhooks {
			ep, err := parseEndpoint(w)
			if err != nil {
				d.log.WarnContext(ctx, "webhook endpoint invalid: its deliveries fail", "merchant", m.ID, "event", ev.ID, "error", err)
			}
			slots = append(slots, endpointSlot{ep: ep, err: err})
		}
	} else {
		for _, ep := range d.defaults {
			slots = append(slots, endpointSlot{ep: ep})
		}
	}

	d.mu.Lock()
	ms := d.merchantLocked(m.ID)
	if _, dup := ms.j.byID[ev.ID]; dup {
		d.mu.Unlock()
		return fmt.Errorf("webhooks: publish: event %s is already published (Redeliver sends it again)", ev.ID)
	}
	entry := &eventEntry{j: ms.j, ev: ev, endpoints: slots}
	ms.j.events = append(ms.j.events, entry)
	ms.j.byID[ev.ID] = entry
	ms.j.trimLocked(d.maxEvents)
	closed := d.closed
	d.startLocked()
	jobs := d.newRoundLocked(ms, entry)
	d.mu.Unlock()

	d.log.DebugContext(ctx, "webhook event published", "merchant", m.ID, "event", ev.ID, "type", ev.Type,
		"payment", ev.Payment.ID, "endpoints", len(slots))
	if closed {
		return ErrClosed
	}
	return d.sendWaiting(ctx, jobs)
}

// Redeliver starts a new delivery round of an event: one delivery per
// endpoint it was published to, same event id and body. Each new delivery
// keeps its place in line: it waits behind any unfinished delivery of the
// same payment to the same endpoint. It returns the event's record once
// the round is queued. An unknown event, or another merchant's, is an
// error wrapping paymock.ErrNotFound. A full queue is handled as in
// Publish.
func (d *Dispatcher) Redeliver(ctx context.Context, merchantID, eventID string) (EventRecord, error) {
	d.mu.Lock()
	ms := d.merchants[merchantID]
	var entry *eventEntry
	if ms != nil {
		entry = ms.j.byID[eventID]
	}
	if entry == nil {
		d.mu.Unlock()
		return EventRecord{}, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	if d.closed {
		d.mu.Unlock()
		return EventRecord{}, ErrClosed
	}
	d.startLocked()
	jobs := d.newRoundLocked(ms, entry)
	d.mu.Unlock()

	d.log.DebugContext(ctx, "webhook event redelivered", "merchant", merchantID, "event", eventID, "round", entry.rounds)
	err := d.sendWaiting(ctx, jobs)
	d.mu.Lock()
	rec := recordLocked(entry)
	d.mu.Unlock()
	return rec, err
}

// Events lists a merchant's events, newest first (publish order), from
// offset, at most limit of them (limit <= 0: all), with the total count.
func (d *Dispatcher) Events(merchantID string, offset, limit int) ([]EventRecord, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []EventRecord{}
	ms := d.merchants[merchantID]
	if ms == nil {
		return out, 0
	}
	evs := ms.j.events
	total := len(evs)
	offset = max(offset, 0)
	for i := offset; i < total && (limit <= 0 || len(out) < limit); i++ {
		out = append(out, recordLocked(evs[total-1-i]))
	}
	return out, total
}

// Event returns one of a merchant's events.
func (d *Dispatcher) Event(merchantID, eventID string) (EventRecord, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ms := d.merchants[merchantID]
	if ms == nil {
		return EventRecord{}, false
	}
	e, ok := ms.j.byID[eventID]
	if !ok {
		return EventRecord{}, false
	}
	return recordLocked(e), true
}

// Reset forgets a merchant's events. Their queued deliveries are dropped
// without an attempt, and their scheduled retries do nothing when they
// fire; an attempt already in flight finishes (the receiver may still get
// it) but is not recorded. Idle still waits for those.
func (d *Dispatcher) Reset(merchantID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ms := d.merchants[merchantID]; ms != nil {
		ms.j = newJournal()
	}
}

// Idle waits until none of the merchant's deliveries is queued or in
// flight, or ctx is done. Deliveries waiting for a scheduled retry, or
// waiting behind one that is, do not count.
func (d *Dispatcher) Idle(ctx context.Context, merchantID string) error {
	d.mu.Lock()
	ms := d.merchants[merchantID]
	if ms == nil || ms.busy == 0 {
		d.mu.Unlock()
		return nil
	}
	ch := ms.idle
	d.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting work and waits for attempts in flight to finish.
// If ctx is done first, those attempts are cancelled and recorded as
// interrupted, and Close returns ctx.Err(). Deliveries still queued,
// waiting for a retry or waiting in line are recorded as interrupted:
// nothing vanishes from the journal. Close may be called more than once.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		select {
		case <-d.closeDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	d.closed = true
	close(d.stop)
	d.mu.Unlock()
	defer close(d.closeDone)
	defer d.cancelBase()

	d.senders.Wait() // each sees stop closed and returns
	done := make(chan struct{})
	go func() { d.workerWG.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		d.cancelBase()
		<-done
	}

	// No worker or sender is left: what is in the queue stays there.
	for drained := false; !drained; {
		select {
		case j := <-d.queue:
			d.end(j, StateInterrupted, msgClosedQueued)
		default:
			drained = true
		}
	}

	d.mu.Lock()
	interrupted := 0
	for _, ms := range d.merchants {
		for _, e := range ms.j.events {
			for _, del := range e.deliveries {
				if del.state != StatePending {
					continue
				}
				msg := msgClosedQueued
				if del.waiting {
					msg = msgClosedRetry
				}
				del.state, del.err, del.waiting, del.nextAt = StateInterrupted, msg, false, time.Time{}
				interrupted++
			}
		}
	}
	d.mu.Unlock()
	if interrupted > 0 {
		d.log.Warn("webhook deliveries interrupted by shutdown", "deliveries", interrupted)
	}
	return err
}

// merchantLocked returns a merchant's state, making it on first use.
func (d *Dispatcher) merchantLocked(id string) *merchantState {
	ms := d.merchants[id]
	if ms == nil {
		ms = &merchantState{id: id, j: newJournal()}
		d.merchants[id] = ms
	}
	return ms
}

// acquireLocked takes a busy token for a job about to be queued, and
// registers its sender.
func (d *Dispatcher) acquireLocked(ms *merchantState) {
	ms.busy++
	if ms.busy == 1 {
		ms.idle = make(chan struct{})
	}
	d.senders.Add(1)
}

func releaseLocked(ms *merchantState) {
	ms.busy--
	if ms.busy == 0 {
		close(ms.idle)
		ms.idle = nil
	}
}

func droppedLocked(del *delivery) bool { return del.entry.j != del.ms.j }

// newRoundLocked adds one delivery per endpoint to entry and returns the
// jobs of those that head their chain: the caller must send them.
func (d *Dispatcher) newRoundLocked(ms *merchantState, entry *eventEntry) []job {
	entry.rounds++
	var jobs []job
	for _, slot := range entry.endpoints {
		del := &delivery{ms: ms, entry: entry, round: entry.rounds, ep: slot.ep, state: StatePending}
		entry.deliveries = append(entry.deliveries, del)
		switch {
		case slot.err != nil:
			del.state, del.err = StateFailed, slot.err.Error()
		case d.closed:
			del.state, del.err = StateInterrupted, msgClosedQueued
		default:
			del.chain = entry.ev.Payment.ID + "\x00" + slot.ep.url
			c := append(ms.j.chains[del.chain], del)
			ms.j.chains[del.chain] = c
			if len(c) == 1 {
				d.acquireLocked(ms)
				jobs = append(jobs, job{del})
			}
		}
	}
	return jobs
}

// finishLocked puts del in a final state and starts the next delivery of
// its chain, whose job it returns for sendInternal. After Close began, the
// rest of the chain is interrupted instead.
func (d *Dispatcher) finishLocked(del *delivery, st State, msg string) []job {
	for {
		del.state, del.err, del.waiting, del.nextAt = st, msg, false, time.Time{}
		next := popChainLocked(del)
		if next == nil {
			return nil
		}
		if !d.closed {
			d.acquireLocked(next.ms)
			return []job{{next}}
		}
		del, st, msg = next, StateInterrupted, msgClosedQueued
	}
}

// popChainLocked removes del, which has finished, from the head of its
// chain and returns the new head, if any.
func popChainLocked(del *delivery) *delivery {
	if del.chain == "" || droppedLocked(del) {
		return nil
	}
	chains := del.ms.j.chains
	c := chains[del.chain]
	if len(c) == 0 || c[0] != del {
		return nil
	}
	c[0] = nil
	c = c[1:]
	if len(c) == 0 {
		delete(chains, del.chain)
		return nil
	}
	chains[del.chain] = c
	return c[0]
}

// end finishes a job that will not be attempted and gives back its token.
func (d *Dispatcher) end(j job, st State, msg string) {
	d.mu.Lock()
	signalAttempted(j.del)
	var next []job
	if !droppedLocked(j.del) {
		next = d.finishLocked(j.del, st, msg)
	}
	releaseLocked(j.del.ms)
	d.mu.Unlock()
	d.sendInternal(next)
}

// sendWaiting queues jobs for Publish and Redeliver: it waits for room
// until ctx is done or Close begins.
func (d *Dispatcher) sendWaiting(ctx context.Context, jobs []job) error {
	var err error
	for _, j := range jobs {
		select {
		case d.queue <- j:
		case <-ctx.Done():
			cause := ctx.Err()
			if err == nil {
				err = fmt.Errorf("webhooks: delivery queue full: %w", cause)
			}
			d.end(j, StateInterrupted, "not queued: the delivery queue stayed full until the caller gave up ("+cause.Error()+")")
		case <-d.stop:
			if err == nil {
				err = ErrClosed
			}
			d.end(j, StateInterrupted, msgClosedQueued)
		}
		d.senders.Done()
	}
	return err
}

// sendInternal queues jobs from workers and scheduler callbacks, which
// must not block: when the queue is full a goroutine waits for room.
func (d *Dispatcher) sendInternal(jobs []job) {
	for _, j := range jobs {
		select {
		case d.queue <- j:
			d.senders.Done()
			continue
		default:
		}
		go func() {
			defer d.senders.Done()
			select {
			case d.queue <- j:
			case <-d.stop:
				d.end(j, StateInterrupted, msgClosedQueued)
			}
		}()
	}
}

func (d *Dispatcher) work() {
	defer d.workerWG.Done()
	for {
		select { // stop wins over a queued job
		case <-d.stop:
			return
		default:
		}
		select {
		case j := <-d.queue:
			d.run(j)
		case <-d.stop:
			return
		}
	}
}

// run makes one attempt of a delivery and decides what comes next.
func (d *Dispatcher) run(j job) {
	del, ms := j.del, j.del.ms
	// Last of all, once any next retry is registered with the scheduler.
	defer func() {
		d.mu.Lock()
		signalAttempted(del)
		d.mu.Unlock()
	}()
	d.mu.Lock()
	if droppedLocked(del) {
		releaseLocked(ms)
		d.mu.Unlock()
		return
	}
	if d.closed {
		next := d.finishLocked(del, StateInterrupted, msgClosedQueued)
		releaseLocked(ms)
		d.mu.Unlock()
		d.sendInternal(next)
		return
	}
	n := len(del.attempts) + 1
	ev, ep := del.entry.ev, del.ep
	d.mu.Unlock()

	at := d.clock.Now(ms.id)
	start := time.Now()
	status, errMsg, interrupted := d.post(ep, ev)
	dur := time.Since(start)

	log := d.log.With("merchant", ms.id, "event", ev.ID, "url", ep.display, "attempt", n)
	d.mu.Lock()
	if droppedLocked(del) {
		releaseLocked(ms)
		d.mu.Unlock()
		log.Debug("webhook attempt of a reset event", "status", status, "error", errMsg)
		return
	}
	del.attempts = append(del.attempts, attempt{n: n, at: at, status: status, err: errMsg, dur: dur})
	var next []job
	var retryIn time.Duration
	var final string
	switch {
	case interrupted:
		next = d.finishLocked(del, StateInterrupted, msgClosedInFlight)
	case errMsg == "":
		next = d.finishLocked(del, StateDelivered, "")
	case status == http.StatusGone:
		next = d.finishLocked(del, StateFailed, msgGone)
		final = msgGone
	case n > len(d.retry):
		final = fmt.Sprintf("no 2xx answer after %d attempts", n)
		next = d.finishLocked(del, StateFailed, final)
	case d.closed:
		next = d.finishLocked(del, StateInterrupted, msgClosedRetry)
	default:
		// Measured from the attempt's start on the merchant clock, so the
		// schedule does not drift with how long attempts take, nor with a
		// clock advanced while an attempt was in flight.
		retryIn = d.retry[n-1]
		del.waiting, del.nextAt = true, at.Add(retryIn)
	}
	if retryIn == 0 {
		releaseLocked(ms)
	}
	d.mu.Unlock()

	log.Debug("webhook attempt", "status", status, "error", errMsg, "duration_ms", dur.Milliseconds(), "retry_in", retryIn)
	if final != "" {
		log.Warn("webhook delivery failed", "reason", final, "last_error", errMsg)
	}
	if retryIn > 0 {
		// The token is kept until the retry is registered, so that Idle
		// returning means the scheduler knows about it.
		d.sched.At(ms.id, at.Add(retryIn), func() { d.retryDue(del) })
		d.mu.Lock()
		releaseLocked(ms)
		d.mu.Unlock()
	}
	d.sendInternal(next)
}

// retryDue queues the next attempt of a delivery whose retry fell due and
// waits until it has been made (or the dispatcher stops), so that an
// advancing clock sees each retry's outcome before the next one is due.
func (d *Dispatcher) retryDue(del *delivery) {
	d.mu.Lock()
	if d.closed || droppedLocked(del) || !del.waiting || del.state != StatePending {
		d.mu.Unlock()
		return
	}
	del.waiting, del.nextAt = false, time.Time{}
	done := make(chan struct{})
	del.attempted = done
	d.acquireLocked(del.ms)
	d.mu.Unlock()
	d.sendInternal([]job{{del}})
	select {
	case <-done:
	case <-d.stop:
	case <-time.After(d.timeout + 5*time.Second): // a job lost to a reset
	}
}

// signalAttempted wakes a retryDue waiting on del; the caller holds d.mu.
func signalAttempted(del *delivery) {
	if del.attempted != nil {
		close(del.attempted)
		del.attempted = nil
	}
}

// post makes one signed POST. It returns the status code (0 without an
// answer), an error message ("" on a 2xx), and whether Close cut the
// attempt short.
func (d *Dispatcher) post(ep endpoint, ev paymock.Event) (int, string, bool) {
	ctx, cancel := context.WithTimeout(d.base, d.timeout)
	defer cancel()
	ts := d.now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, "request not built: " + err.Error(), false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, ev.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, signKey(ep.key, ev.ID, ts, ev.Body))
	resp, err := d.client.Do(req)
	if err != nil {
		switch {
		case d.base.Err() != nil:
			return 0, msgClosedInFlight, true
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return 0, fmt.Sprintf("timeout: no answer within %s", d.timeout), false
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL is in the record already
		}
		return 0, "request failed: " + err.Error(), false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return code, "", false
	case code == http.StatusGone:
		return code, msgGone, false
	case code >= 300 && code < 400:
		return code, fmt.Sprintf("endpoint answered %d %s (redirects are not followed)", code, http.StatusText(code)), false
	}
	return code, fmt.Sprintf("endpoint answered %d %s", code, http.StatusText(code)), false
}
