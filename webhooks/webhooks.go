// Package webhooks turns events into signed deliveries: it posts each event
// to the merchant's endpoints, signed per Standard Webhooks, retries
// failures on the merchant's clock, keeps deliveries of one payment to one
// endpoint in order, and keeps a journal of every event and attempt for the
// control API and the dashboard.
//
// It imports only the standard library and the root package. What it needs
// from elsewhere is an interface declared here: the merchant clock and the
// scheduler that brings retries due (package lifecycle), the endpoints a
// merchant has now (*merchants.Registry), the fault rules that shape
// deliveries on purpose (package faults, through a small adapter) and an
// observer of outcomes (package metrics).
//
// # Endpoints
//
// With Config.Endpoints set, every Publish asks it for the merchant's
// endpoints at that moment, so an endpoint added at run time receives the
// next event exactly like a configured one (same signing, retries, order
// and journal), and one removed or disabled receives nothing more. A
// delivery already made keeps its endpoint: its retries still go there.
// Every delivery records the endpoint's id, so EndpointDeliveries lists
// one endpoint's deliveries.
//
// # The test event
//
// SendTest sends one event of type "webhook.test" (EventTest) to one
// endpoint, signed like every other:
//
//	{"id": "evt_...", "type": "webhook.test", "created_at": "2030-01-01T00:00:00Z",
//	 "data": {"endpoint_id": "we_...", "message": "..."}}
//
// It gets one attempt and no retries: a person is watching for its result
// now, and a ping that comes back an hour later would only confuse; the
// journal's redeliver sends it again (again once). It is in the journal
// like any event, with an empty payment_id. Fault rules for any event type
// shape it too, so a merchant can watch their receiver turn down a bad
// signature with one click.
//
// # Faults
//
// With Config.Faults set, each delivery asks once, when it is made (by
// Publish, Redeliver or SendTest, in endpoint order), whether a fault
// shapes it. Asking when the delivery is made rather than when a worker
// picks it up keeps the order of the asks, and so the seeded draws of
// probability rules, the same in every run. The fault shapes the
// delivery's first send only; its retries go out as normal, as a real
// sender's would after a glitch, so one hit is one anomaly at the
// receiver, followed by the retry path the receiver must also handle. A
// redelivery is a new delivery and asks again. The effects:
//
//   - Duplicate N: the first send goes out N times, one after the other,
//     with the same webhook-id, each freshly timestamped and signed, so
//     each verifies. The send counts as delivered if any copy got a 2xx.
//   - BadSignature: signed with a wrong key (the secret's bytes
//     inverted), so verification fails.
//   - TimestampSkew: webhook-timestamp that far from real time, signed
//     over the skewed value, so only a receiver's tolerance check fails.
//   - Delay: the first send waits that long on the merchant's clock,
//     like a retry: with a frozen clock it goes when the clock is advanced
//     past it (a test sees it not arrive, advances, and sees it arrive);
//     with a real clock it is simply late. The journal shows the pending
//     delivery's next_attempt_at meanwhile.
//   - Reorder: a reorder window opens for the endpoint, on the merchant's
//     clock, for Window (default 1 s). Every delivery to that endpoint
//     whose first send falls due while it is open, faulted or not, is held
//     in it; when it closes they are sent one after the other, newest
//     first. Deliveries of one payment to one endpoint still keep their
//     order: only the first of them is ever due.
//
// Each attempt a fault shaped carries a FaultRecord (its rule id and what
// was done) in the journal. Without Config.Faults, or when no rule
// matches, delivery is exactly as it was.
//
// # Outbox
//
// With Config.Outbox set (package postgres, for replicas sharing one
// database), the Dispatcher keeps no journal: every event and delivery is
// a row, so every replica lists the same events, and a restart or a
// killed replica loses none. A delivery is due at an instant of its
// merchant's clock; whichever replica claims it (for a lease: the
// attempt timeout plus 5 s) makes that one send and records it, which
// ends the claim. The replica that published an event attempts it at
// once; a retry is brought due by the replica that scheduled it, by an
// advance of the merchant's frozen clock on any replica (DueDeliveries),
// or, on real clocks, by every replica's sweep each OutboxSweepInterval:
// that is how the work of a replica that died, or of one restarted, is
// taken over once its claims lapse. Deliveries of one payment to one
// endpoint still go in order: only the first pending one is claimed. A
// transition and its event are stored in one transaction by the engine
// (Prepare, Round.Outgoing, Stored), so neither exists without the
// other. Faults shape deliveries as above; a reorder window is the
// latest pending delivery to the endpoint it holds, and its record does
// not count what it held. Close leaves pending deliveries pending for
// the other replicas, or for the next start; a send Close cuts short is
// not recorded and goes again. The journal is kept near MaxEvents per
// merchant: every trimEvery events a replica stores, it trims the journal
// of the merchant whose event it is. The Observer counts per replica.
//
// # Observer
//
// Config.Observer hears of every delivery made (EventCreated), every
// delivery reaching a final state (EventFinished: delivered, failed or
// interrupted; a Reset or Forget counts the pending deliveries it drops as
// interrupted), and every send's outcome (WebhookAttempt: delivered,
// retrying, failed or interrupted). So at any time created = delivered +
// failed + interrupted + pending.
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
	// --webhook-url / --webhook-secret). Unused when Endpoints is set,
	// which names the defaults itself.
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
	// Endpoints, when set, names at each Publish every endpoint the event
	// goes to (*merchants.Registry implements it). nil: m.Webhooks, or
	// DefaultEndpoints when m has none.
	Endpoints Endpoints
	// Faults shapes deliveries on purpose (see the package doc). nil: none.
	Faults Faults
	// Observer hears of deliveries and attempts. nil: none.
	Observer Observer
	// IDs makes the ids of test events. Default: unguessable ids from
	// crypto/rand.
	IDs *paymock.IDs
	// Outbox, when set, keeps the events and deliveries instead of this
	// process (see the package doc): every replica sharing it sees the
	// same journal and attempts each scheduled send once.
	Outbox Outbox
	// OutboxSweep claims, every OutboxSweepInterval, the outbox's
	// deliveries due on real clocks; set it when the merchants' clocks
	// are real (frozen clocks bring them due by advancing).
	OutboxSweep bool
	// ClockBase is the offset of a real merchant clock the outbox has not
	// stored (the sandbox's configured start), for the sweep.
	ClockBase time.Duration
}

// Endpoints tells which endpoints receive a merchant's events now: its
// configured or default endpoints and those added at run time, enabled
// ones only, each with its ID. It must be safe for concurrent use.
type Endpoints interface {
	Deliverable(ctx context.Context, merchantID string) []paymock.WebhookEndpoint
}

// Observer is told what happens to deliveries, for metrics. Its methods are
// called synchronously, sometimes while the Dispatcher holds its lock: they
// must be quick, safe for concurrent use, and must not call the Dispatcher.
// (*metrics.Metrics implements it.)
type Observer interface {
	// WebhookAttempt is called once per send of a delivery, with
	// "delivered" (a 2xx), "retrying" (failed, another attempt is
	// scheduled), "failed" (failed for good) or "interrupted" (cut short
	// by Close, Reset or Forget). A duplicated send counts once.
	WebhookAttempt(outcome string)
	// EventCreated is called for each delivery made: one per event,
	// endpoint and round.
	EventCreated()
	// EventFinished is called once for each delivery made, when it reaches
	// "delivered", "failed" or "interrupted".
	EventFinished(state string)
}

type noObserver struct{}

func (noObserver) WebhookAttempt(string) {}
func (noObserver) EventCreated()         {}
func (noObserver) EventFinished(string)  {}

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
	endpoints Endpoints
	faults    Faults
	obs       Observer
	ids       *paymock.IDs

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

	out *durable // nil unless Config.Outbox is set

	mu        sync.Mutex
	merchants map[string]*merchantState
	started   bool
	closed    bool
	seq       uint64 // deliveries made so far: orders them newest first in a reorder window
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
	// pending counts the journal's deliveries in StatePending: queued, in
	// flight, waiting for a retry, a delay or a window, or waiting in line.
	pending int
}

// journal is a merchant's events in publish order, and the chains that keep
// deliveries of one payment to one endpoint in order.
type journal struct {
	events []*eventEntry
	byID   map[string]*eventEntry
	// chains: per payment id and endpoint URL, the unfinished deliveries in
	// order. Only the head is ever queued, in flight or scheduled.
	chains map[string][]*delivery
	// windows: per endpoint URL, the open reorder window; made on first use.
	windows map[string]*window
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
	oneShot    bool // a test event: one attempt per delivery, no retries
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
	sends    int       // sends made; a duplicated send is one
	waiting  bool      // a retry, a delay or a reorder window will bring it back
	nextAt   time.Time // when, on the merchant clock
	// attempted is closed when the next attempt has been recorded or the
	// delivery ends; retryDue waits on it.
	attempted chan struct{}

	seq uint64 // order made, across the dispatcher
	// hold is what faults do to it; nil until a fault or a reorder window
	// concerns it, so a plain delivery pays one pointer.
	hold *hold
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
		endpoints: cfg.Endpoints,
		faults:    cfg.Faults,
		obs:       cfg.Observer,
		ids:       cfg.IDs,
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
	if d.obs == nil {
		d.obs = noObserver{}
	}
	if d.ids == nil {
		d.ids = paymock.NewIDs(nil)
	}
	d.queue = make(chan job, size)
	d.base, d.cancelBase = context.WithCancel(context.Background())
	if cfg.Outbox != nil {
		d.out = newDurable(cfg, d.timeout)
	}
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
	if d.out != nil {
		d.startDurable()
		return
	}
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
// those Config.Endpoints names, or without it m.Webhooks, or the default
// endpoints when m has none. With no endpoint the event is still
// recorded, with no deliveries. An invalid merchant endpoint gives a
// delivery that fails at once, with the reason.
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
	if d.out != nil {
		return d.publishDurable(ctx, m, ev)
	}

	slots := d.slotsFor(ctx, m, ev.ID)
	faults, now := d.matchFaults(m.ID, ev.Type, slots)

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
	next := d.newRoundLocked(ms, entry, faults, now)
	d.mu.Unlock()

	d.log.DebugContext(ctx, "webhook event published", "merchant", m.ID, "event", ev.ID, "type", ev.Type,
		"payment", ev.Payment.ID, "endpoints", len(slots))
	d.schedule(ms.id, next.timers)
	if closed {
		return ErrClosed
	}
	return d.sendWaiting(ctx, next.jobs)
}

// slotsFor checks the endpoints an event of m goes to now.
func (d *Dispatcher) slotsFor(ctx context.Context, m *paymock.Merchant, eventID string) []endpointSlot {
	var eps []paymock.WebhookEndpoint
	switch {
	case d.endpoints != nil:
		eps = d.endpoints.Deliverable(ctx, m.ID)
	case len(m.Webhooks) > 0:
		eps = m.Webhooks
	default:
		slots := make([]endpointSlot, 0, len(d.defaults))
		for _, ep := range d.defaults {
			slots = append(slots, endpointSlot{ep: ep})
		}
		return slots
	}
	slots := make([]endpointSlot, 0, len(eps))
	for _, w := range eps {
		ep, err := parseEndpoint(w)
		if err != nil {
			d.log.WarnContext(ctx, "webhook endpoint invalid: its deliveries fail", "merchant", m.ID, "event", eventID,
				"endpoint", w.ID, "error", err)
		}
		slots = append(slots, endpointSlot{ep: ep, err: err})
	}
	return slots
}

// Redeliver starts a new delivery round of an event: one delivery per
// endpoint it was published to, same event id and body. Each new delivery
// keeps its place in line: it waits behind any unfinished delivery of the
// same payment to the same endpoint. Faults are asked again for the new
// deliveries. It returns the event's record once the round is queued. An
// unknown event, or another merchant's, is an error wrapping
// paymock.ErrNotFound. A full queue is handled as in Publish.
func (d *Dispatcher) Redeliver(ctx context.Context, merchantID, eventID string) (EventRecord, error) {
	if d.out != nil {
		return d.redeliverDurable(ctx, merchantID, eventID)
	}
	var (
		faults []*Fault
		now    time.Time
		asked  *eventEntry
	)
	if d.faults != nil {
		// Asked outside the lock, so that the rule book's lock is never
		// taken under the dispatcher's.
		d.mu.Lock()
		asked = d.entryLocked(merchantID, eventID)
		var typ paymock.EventType
		var slots []endpointSlot
		if asked != nil {
			typ, slots = asked.ev.Type, asked.endpoints
		}
		d.mu.Unlock()
		if asked != nil {
			faults, now = d.matchFaults(merchantID, typ, slots)
		}
	}

	d.mu.Lock()
	entry := d.entryLocked(merchantID, eventID)
	if entry == nil {
		d.mu.Unlock()
		return EventRecord{}, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	if d.closed {
		d.mu.Unlock()
		return EventRecord{}, ErrClosed
	}
	if entry != asked {
		faults = nil // reset and published again in between: the asks were for another event
	}
	d.startLocked()
	next := d.newRoundLocked(d.merchants[merchantID], entry, faults, now)
	d.mu.Unlock()

	d.log.DebugContext(ctx, "webhook event redelivered", "merchant", merchantID, "event", eventID, "round", entry.rounds)
	d.schedule(merchantID, next.timers)
	err := d.sendWaiting(ctx, next.jobs)
	d.mu.Lock()
	rec := recordLocked(entry)
	d.mu.Unlock()
	return rec, err
}

// entryLocked finds one of a merchant's events in its current journal.
func (d *Dispatcher) entryLocked(merchantID, eventID string) *eventEntry {
	ms := d.merchants[merchantID]
	if ms == nil {
		return nil
	}
	return ms.j.byID[eventID]
}

// Events lists a merchant's events, newest first (publish order), from
// offset, at most limit of them (limit <= 0: all), with the total count.
func (d *Dispatcher) Events(merchantID string, offset, limit int) ([]EventRecord, int) {
	out, total, _ := d.EventsContext(context.Background(), merchantID, offset, limit)
	return out, total
}

// EventsContext is Events, with the error of an Outbox that could not be
// read (without one it never fails).
func (d *Dispatcher) EventsContext(ctx context.Context, merchantID string, offset, limit int) ([]EventRecord, int, error) {
	if d.out != nil {
		return d.out.box.Events(ctx, merchantID, max(offset, 0), limit)
	}
	out, total := d.events(merchantID, offset, limit)
	return out, total, nil
}

func (d *Dispatcher) events(merchantID string, offset, limit int) ([]EventRecord, int) {
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
	rec, ok, _ := d.EventContext(context.Background(), merchantID, eventID)
	return rec, ok
}

// EventContext is Event, with the error of an Outbox that could not be
// read (without one it never fails).
func (d *Dispatcher) EventContext(ctx context.Context, merchantID, eventID string) (EventRecord, bool, error) {
	if d.out != nil {
		return d.out.box.Event(ctx, merchantID, eventID)
	}
	rec, ok := d.event(merchantID, eventID)
	return rec, ok, nil
}

func (d *Dispatcher) event(merchantID, eventID string) (EventRecord, bool) {
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
// without an attempt, and their scheduled retries, delays and reorder
// windows do nothing when they fire; an attempt already in flight finishes
// (the receiver may still get it) but is not recorded. Idle still waits
// for those. The observer counts the dropped pending deliveries as
// interrupted.
func (d *Dispatcher) Reset(merchantID string) {
	_ = d.ResetContext(context.Background(), merchantID)
}

// ResetContext is Reset, with the error of an Outbox that could not be
// reset (without one it never fails).
func (d *Dispatcher) ResetContext(ctx context.Context, merchantID string) error {
	if d.out != nil {
		if err := d.out.box.ResetEvents(ctx, merchantID); err != nil {
			return fmt.Errorf("webhooks: reset %s: %w", merchantID, err)
		}
		return nil
	}
	d.reset(merchantID)
	return nil
}

func (d *Dispatcher) reset(merchantID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ms := d.merchants[merchantID]; ms != nil {
		d.dropJournalLocked(ms)
	}
}

// Forget drops everything the dispatcher holds for a merchant that is gone,
// as Reset does, and the merchant itself. Call it when Busy says false: an
// attempt still in flight finishes unrecorded, and Idle no longer waits
// for it.
func (d *Dispatcher) Forget(merchantID string) {
	if d.out != nil {
		return // the outbox is every replica's: this one keeps nothing of the merchant
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if ms := d.merchants[merchantID]; ms != nil {
		d.dropJournalLocked(ms)
		delete(d.merchants, merchantID)
	}
}

func (d *Dispatcher) dropJournalLocked(ms *merchantState) {
	for range ms.pending {
		d.obs.EventFinished(string(StateInterrupted))
	}
	ms.pending = 0
	ms.j = newJournal()
}

// Busy reports whether the merchant has any delivery still to make: queued,
// in flight, waiting for a retry, a fault's delay or a reorder window, or
// waiting in line behind one that is. A merchant that is not busy can be
// forgotten without losing a delivery.
func (d *Dispatcher) Busy(merchantID string) bool {
	if d.out != nil {
		d.out.mu.Lock()
		busy := d.out.busy[merchantID] != nil
		d.out.mu.Unlock()
		if busy {
			return true
		}
		pending, err := d.out.box.Pending(context.Background(), merchantID)
		return pending || err != nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ms := d.merchants[merchantID]
	return ms != nil && (ms.busy > 0 || ms.pending > 0)
}

// Idle waits until none of the merchant's deliveries is queued or in
// flight, or ctx is done. Deliveries waiting for a scheduled retry, a
// fault's delay or a reorder window, or waiting behind one that is, do not
// count (Busy does count them).
func (d *Dispatcher) Idle(ctx context.Context, merchantID string) error {
	if d.out != nil {
		return d.out.idle(ctx, merchantID)
	}
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
	if d.out != nil {
		return d.closeDurable(ctx)
	}
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
	err := d.waitOrCut(ctx, d.workerWG.Wait)

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
				if del.waiting && del.sends > 0 {
					msg = msgClosedRetry
				}
				d.finalLocked(del, StateInterrupted, msg)
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

// waitOrCut waits for wait to return; once ctx is done it cuts the
// attempts in flight short (they end as interrupted) and waits for the
// rest, returning ctx's error.
func (d *Dispatcher) waitOrCut(ctx context.Context, wait func()) error {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.cancelBase()
		<-done
		return ctx.Err()
	}
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

// followUp is what must happen once d.mu is released: jobs to queue (each
// holding a busy token already) and timers to register with the scheduler.
type followUp struct {
	jobs   []job
	timers []timer
}

type timer struct {
	at time.Time // merchant clock
	fn func()
}

func (f *followUp) add(g followUp) {
	if f.jobs == nil {
		f.jobs = g.jobs // the usual case: no copy, no allocation
	} else {
		f.jobs = append(f.jobs, g.jobs...)
	}
	f.timers = append(f.timers, g.timers...)
}

// schedule registers timers with the scheduler; the caller holds no lock.
func (d *Dispatcher) schedule(merchantID string, timers []timer) {
	for _, t := range timers {
		d.sched.At(merchantID, t.at, t.fn)
	}
}

// newRoundLocked adds one delivery per endpoint to entry, with the faults
// matched for them (nil: none), and returns what the caller must do for
// those that head their chain. now is the merchant clock, read when faults
// is not nil.
func (d *Dispatcher) newRoundLocked(ms *merchantState, entry *eventEntry, faults []*Fault, now time.Time) followUp {
	entry.rounds++
	var f followUp
	for i, slot := range entry.endpoints {
		d.seq++
		del := &delivery{ms: ms, entry: entry, round: entry.rounds, ep: slot.ep, state: StatePending, seq: d.seq}
		if faults != nil && faults[i] != nil {
			del.hold = &hold{fault: faults[i]}
		}
		entry.deliveries = append(entry.deliveries, del)
		ms.pending++
		d.obs.EventCreated()
		switch {
		case slot.err != nil:
			d.finalLocked(del, StateFailed, slot.err.Error())
		case d.closed:
			d.finalLocked(del, StateInterrupted, msgClosedQueued)
		case entry.ev.Payment.ID == "":
			// No payment (the test event): no order to keep.
			f.add(d.dueLocked(del, now))
		default:
			del.chain = entry.ev.Payment.ID + "\x00" + slot.ep.url
			c := append(ms.j.chains[del.chain], del)
			ms.j.chains[del.chain] = c
			if len(c) == 1 {
				f.add(d.dueLocked(del, now))
			}
		}
	}
	return f
}

// dueLocked is called when del's first send falls due (it heads its chain
// and nothing holds it any more): it queues the send, or lets a fault's
// delay or a reorder window hold it. Without faults it only queues.
func (d *Dispatcher) dueLocked(del *delivery, now time.Time) followUp {
	if d.faults != nil && del.sends == 0 {
		if f, held := d.holdLocked(del, now); held {
			return f
		}
	}
	d.acquireLocked(del.ms)
	return followUp{jobs: []job{{del}}}
}

// finalLocked puts a delivery in a final state and keeps the merchant's
// pending count and the observer up to date.
func (d *Dispatcher) finalLocked(del *delivery, st State, msg string) {
	was := del.state
	del.state, del.err, del.waiting, del.nextAt = st, msg, false, time.Time{}
	if del.hold != nil {
		del.hold.window = nil
	}
	if was == StatePending && !droppedLocked(del) {
		del.ms.pending--
		d.obs.EventFinished(string(st))
	}
}

// finishLocked puts del in a final state and makes the next delivery of
// its chain due, returning what the caller must do for it. After Close
// began, the rest of the chain is interrupted instead. now is the merchant
// clock, read when faults are configured.
func (d *Dispatcher) finishLocked(del *delivery, st State, msg string, now time.Time) followUp {
	for {
		d.finalLocked(del, st, msg)
		next := popChainLocked(del)
		if next == nil {
			return followUp{}
		}
		if !d.closed {
			return d.dueLocked(next, now)
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
	now := d.faultClock(j.del.ms.id)
	d.mu.Lock()
	signalAttempted(j.del)
	var next followUp
	if !droppedLocked(j.del) {
		next = d.finishLocked(j.del, st, msg, now)
	}
	if len(next.timers) == 0 {
		releaseLocked(j.del.ms)
		d.mu.Unlock()
	} else {
		// The token is kept until the timers are registered, so that Idle
		// returning means the scheduler knows about them.
		d.mu.Unlock()
		d.schedule(j.del.ms.id, next.timers)
		d.mu.Lock()
		releaseLocked(j.del.ms)
		d.mu.Unlock()
	}
	d.sendInternal(next.jobs)
}

// faultClock reads the merchant clock when faults may need it (a delay or
// a reorder window is timed from it), and returns the zero time otherwise.
// It is read before d.mu is taken: the clock must never be asked under it.
func (d *Dispatcher) faultClock(merchantID string) time.Time {
	if d.faults == nil {
		return time.Time{}
	}
	return d.clock.Now(merchantID)
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

// run makes one send of a delivery (several POSTs when a fault duplicates
// it) and decides what comes next.
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
		next := d.finishLocked(del, StateInterrupted, msgClosedQueued, time.Time{})
		releaseLocked(ms)
		d.mu.Unlock()
		d.sendInternal(next.jobs)
		return
	}
	n := del.sends + 1
	ev, ep := del.entry.ev, del.ep
	sh := shapeLocked(del)
	d.mu.Unlock()

	at := d.clock.Now(ms.id)
	var (
		status      int
		errMsg      string
		interrupted bool
		dur         time.Duration
		shaped      []attempt // the copies of a shaped send; nil for a plain one
	)
	if sh == nil {
		start := time.Now()
		status, errMsg, interrupted = d.post(ep, ev, nil)
		dur = time.Since(start)
	} else {
		status, errMsg, interrupted, shaped = d.postShaped(ep, ev, sh, n, at)
		dur = shaped[len(shaped)-1].dur
	}

	log := d.log.With("merchant", ms.id, "event", ev.ID, "url", ep.display, "attempt", n)
	now := d.faultClock(ms.id)
	d.mu.Lock()
	if droppedLocked(del) {
		d.obs.WebhookAttempt(string(StateInterrupted))
		releaseLocked(ms)
		d.mu.Unlock()
		log.Debug("webhook attempt of a reset event", "status", status, "error", errMsg)
		return
	}
	if shaped == nil {
		del.attempts = append(del.attempts, attempt{n: n, at: at, status: status, err: errMsg, dur: dur})
	} else {
		del.attempts = append(del.attempts, shaped...)
	}
	del.sends = n
	var next followUp
	var retryIn time.Duration
	var final, outcome string
	switch {
	case interrupted:
		next = d.finishLocked(del, StateInterrupted, msgClosedInFlight, now)
		outcome = string(StateInterrupted)
	case errMsg == "":
		next = d.finishLocked(del, StateDelivered, "", now)
		outcome = string(StateDelivered)
	case status == http.StatusGone:
		next = d.finishLocked(del, StateFailed, msgGone, now)
		final, outcome = msgGone, string(StateFailed)
	case n > d.retriesOf(del):
		final, outcome = fmt.Sprintf("no 2xx answer after %d attempts", n), string(StateFailed)
		if n == 1 {
			final = "no 2xx answer to its single attempt"
		}
		next = d.finishLocked(del, StateFailed, final, now)
	case d.closed:
		next = d.finishLocked(del, StateInterrupted, msgClosedRetry, now)
		outcome = string(StateInterrupted)
	default:
		// Measured from the attempt's start on the merchant clock, so the
		// schedule does not drift with how long attempts take, nor with a
		// clock advanced while an attempt was in flight.
		retryIn = d.retry[n-1]
		del.waiting, del.nextAt = true, at.Add(retryIn)
		outcome = "retrying"
	}
	d.obs.WebhookAttempt(outcome)
	// The token is kept until any retry or timer is registered, so that
	// Idle returning means the scheduler knows about it.
	keep := retryIn > 0 || len(next.timers) > 0
	if !keep {
		releaseLocked(ms)
	}
	d.mu.Unlock()

	log.Debug("webhook attempt", "status", status, "error", errMsg, "duration_ms", dur.Milliseconds(), "retry_in", retryIn)
	if final != "" {
		log.Warn("webhook delivery failed", "reason", final, "last_error", errMsg)
	}
	if keep {
		if retryIn > 0 {
			d.sched.At(ms.id, at.Add(retryIn), func() { d.retryDue(del) })
		}
		d.schedule(ms.id, next.timers)
		d.mu.Lock()
		releaseLocked(ms)
		d.mu.Unlock()
	}
	d.sendInternal(next.jobs)
}

// retriesOf is how many retries a delivery may have.
func (d *Dispatcher) retriesOf(del *delivery) int {
	if del.entry.oneShot {
		return 0
	}
	return len(d.retry)
}

// retryDue queues the next send of a delivery whose retry, or whose
// fault's delay, fell due, and waits until it has been made (or the
// dispatcher stops), so that an advancing clock sees each send's outcome
// before the next one is due.
func (d *Dispatcher) retryDue(del *delivery) {
	now := d.faultClock(del.ms.id)
	d.mu.Lock()
	if d.closed || droppedLocked(del) || !del.waiting || del.state != StatePending || del.hold != nil && del.hold.window != nil {
		d.mu.Unlock()
		return
	}
	del.waiting, del.nextAt = false, time.Time{}
	var next followUp
	if del.sends == 0 {
		next = d.dueLocked(del, now) // a delay served: a reorder window may still hold it
	} else {
		d.acquireLocked(del.ms)
		next.jobs = []job{{del}}
	}
	d.mu.Unlock()
	d.schedule(del.ms.id, next.timers)
	d.sendAndWait(next.jobs)
}

// sendAndWait queues jobs (at most one, whose token is held) and waits until
// it has been attempted, the dispatcher stops, or long enough that the job
// must have been lost to a reset.
func (d *Dispatcher) sendAndWait(jobs []job) {
	if len(jobs) == 0 {
		return
	}
	done := make(chan struct{})
	d.mu.Lock()
	jobs[0].del.attempted = done
	d.mu.Unlock()
	d.sendInternal(jobs)
	select {
	case <-done:
	case <-d.stop:
	case <-time.After(d.timeout + 5*time.Second):
	}
}

// signalAttempted wakes a retryDue waiting on del; the caller holds d.mu.
func signalAttempted(del *delivery) {
	if del.attempted != nil {
		close(del.attempted)
		del.attempted = nil
	}
}

// post makes one signed POST, shaped by sh when it is not nil. It returns
// the status code (0 without an answer), an error message ("" on a 2xx),
// and whether Close cut the attempt short.
func (d *Dispatcher) post(ep endpoint, ev paymock.Event, sh *shape) (int, string, bool) {
	ctx, cancel := context.WithTimeout(d.base, d.timeout)
	defer cancel()
	now := d.now()
	key := ep.key
	if sh != nil {
		now = now.Add(sh.skew)
		if sh.badSignature {
			key = wrongKey(key)
		}
	}
	ts := now.Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, "request not built: " + err.Error(), false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, ev.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, signKey(key, ev.ID, ts, ev.Body))
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
