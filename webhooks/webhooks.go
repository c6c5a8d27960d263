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
//     The copies (and an UnknownType message) share the one Timeout, so
//     a shaped send ends within its claim's lease like a plain one;
//     copies it leaves no time for are not sent, and the journal says so.
//   - BadSignature: signed with a wrong key (the secret's bytes
//     inverted), so verification fails.
//   - TimestampSkew: webhook-timestamp that far from real time, signed
//     over the skewed value: only a receiver's tolerance check can fail,
//     and within ±300 s the reference libraries' default one does not.
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
//   - UnknownType: just before the first send, one more message goes to
//     the endpoint: the event with type paymock.FaultUnknownEventType and
//     an id (so a webhook-id) of its own, correctly signed. Its answer is
//     recorded and decides nothing; the real message follows, so a
//     receiver that ignores the unknown type, as it should, loses nothing.
//   - ExtraFields: the first send's payload carries
//     paymock.FaultExtraField at its top and inside data, signed over the
//     enlarged payload, so a receiver that parses strictly fails.
//
// Each attempt a fault shaped carries a paymock.WebhookFaultRecord (its rule id and what
// was done) in the journal. Without Config.Faults, or when no rule
// matches, delivery is exactly as it was.
//
// # Outbox
//
// Every event and delivery is a record in a paymock.Outbox (Config.Outbox:
// package memory's, or package postgres's that replicas share), and this
// walk over it is the only dispatcher. A delivery is due at an instant of
// its merchant's clock; a sender claims it (for a lease: the attempt
// timeout plus 5 s), makes that one send and records it, which ends the
// claim. Deliveries of one payment to one endpoint go in order: only the
// first pending one is claimed. A transition and its event are stored in
// one step by the engine (Prepare, Round.Outgoing, a
// paymock.EventStore, Stored), so neither exists without the other.
//
// What brings a delivery due: a publish wakes the merchant's senders; a
// retry, a fault's delay or a reorder window is a timer of the Scheduler
// (so an advance of a frozen clock brings it, in time order with
// everything else); an advance on any replica lists what fell due
// (DueDeliveries) and ends by sending what is still due (RunDue); and,
// with Config.Sweep, every OutboxSweepInterval, the merchants on real
// clocks with something due (the work of a replica that died, or of the
// process before a restart) have their senders woken.
//
// # Fair sending
//
// A merchant's deliveries are sent by at most Config.MerchantSenders
// goroutines at once, and all merchants' by at most Config.Senders
// (merchants waiting for one are served in the order they asked). Each
// sender claims one due delivery at a time, sends it and claims the next,
// so a merchant whose endpoints never answer ties up at most
// MerchantSenders senders (each for one timeout at a time), and another
// merchant's deliveries go as soon as they are due. Publishing only wakes
// senders: no API call waits for a sender, and there is no queue to fill.
// Timers (retries, delays, windows) send on the merchant's own scheduler
// goroutine, and an advance or a test event in the caller's, one
// delivery at a time. Every send, whatever makes it, first takes a slot:
// at most MerchantSenders sends of one merchant and Senders in all are
// under way at once (so that many outbound requests), and a send waits in
// line for a slot before it claims its delivery. A test event whose
// caller gives up while it waits is left to the merchant's senders.
//
// # Close
//
// Close stops the sweep and waits for the sends under way; once its ctx
// is done it cuts them short. A send cut short is not recorded: its
// delivery stays pending, with the attempts it had, and is sent again by
// the next process (or replica) that claims it. Nothing else changes: a
// delivery due, waiting for a retry or waiting in line stays pending in
// the outbox. The journal is kept near MaxEvents per merchant: every
// trimEvery events or rounds a merchant stores through this Dispatcher
// (and at its first), its journal is trimmed. The Observer counts per
// process.
//
// # Observer
//
// Config.Observer hears of every delivery made (EventCreated), every
// delivery reaching a final state (EventFinished: delivered or failed; a
// Reset counts the pending deliveries it drops as interrupted), and every
// send's outcome (WebhookAttempt: delivered, retrying, failed, or
// interrupted for a send Close cut short). So in one process, at any
// time, created = delivered + failed + interrupted + pending.
package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/everyn"
)

// Scheduler runs fn once the merchant's clock reaches due. (Implemented by
// package lifecycle; in frozen-clock mode it only fires when the merchant's
// clock is advanced, and in real mode by itself.) fn returns once the send
// it brings due has been made, so a scheduler that advances a clock runs a
// whole retry schedule in order; At may be called from any goroutine.
type Scheduler interface {
	At(merchantID string, due time.Time, fn func())
}

// Clock tells a merchant's current time (attempt times in the journal use
// it). ctx bounds the read: the caller's, an API call's or the senders'
// (cancelled when Close cuts sends short), so that a read makes no
// context of its own; a clock that cannot be read answers with the real
// time.
type Clock interface {
	Now(ctx context.Context, merchantID string) time.Time
}

// Config is what a Dispatcher is built from. Only Outbox is required;
// what else differs from the defaults needs setting.
type Config struct {
	// Outbox keeps the events and deliveries (memory.Outbox in one
	// process, a postgres.Store for replicas sharing a database).
	Outbox paymock.Outbox
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
	// Senders bounds the sends under way at once, all merchants
	// together; default 64. MerchantSenders bounds one merchant's;
	// default 4, and at most Senders.
	Senders         int
	MerchantSenders int
	// MaxEvents bounds each merchant's event journal; default 10,000.
	// Past it the oldest events whose deliveries are all finished are
	// forgotten; an event with a delivery still pending is always kept.
	MaxEvents int
	// MaxDeliveries bounds the deliveries, every round's, that the events
	// of a merchant's journal hold between them; default
	// DefaultMaxDeliveries. Past it the oldest events whose deliveries
	// are all finished are forgotten, as past MaxEvents.
	MaxDeliveries int
	// MaxPendingForRedeliver refuses a redelivery while the merchant has
	// this many deliveries pending or more; default
	// DefaultMaxPendingForRedeliver.
	MaxPendingForRedeliver int
	// Client's Transport posts the deliveries (http.DefaultTransport when
	// it has none). Only the Transport is used: a 3xx is a failed attempt
	// whatever the client's CheckRedirect says, and Config.Timeout (not
	// the client's) bounds each attempt. Default: a transport keeping
	// MerchantSenders idle connections per host.
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
	IDs *paymock.MerchantIDs
	// Sweep wakes, every OutboxSweepInterval, the senders of merchants on
	// real clocks with deliveries due that no timer of this process
	// brings (see the package doc); set it when the clocks are real.
	Sweep bool
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
// called synchronously: they must be quick, safe for concurrent use, and
// must not call the Dispatcher. (*metrics.Metrics implements it.)
type Observer interface {
	// WebhookAttempt is called once per send of a delivery, with
	// "delivered" (a 2xx), "retrying" (failed, another attempt is
	// scheduled), "failed" (failed for good) or "interrupted" (cut short
	// by Close, to be sent again). A duplicated send counts once.
	WebhookAttempt(outcome string)
	// EventCreated is called for each delivery made: one per event,
	// endpoint and round.
	EventCreated()
	// EventFinished is called once for each delivery made, when it reaches
	// "delivered" or "failed", or is dropped pending by a Reset
	// ("interrupted").
	EventFinished(state string)
}

type noObserver struct{}

func (noObserver) WebhookAttempt(string) {}
func (noObserver) EventCreated()         {}
func (noObserver) EventFinished(string)  {}

// ErrClosed is returned by Publish, Redeliver and SendTest once Close has
// begun.
var ErrClosed = errors.New("webhooks: dispatcher closed")

// DefaultMaxEvents is how many events a merchant's journal keeps at least.
const DefaultMaxEvents = 10000

// DefaultMaxDeliveries is how many deliveries, every round's, the events
// a merchant's journal keeps hold at most, besides those of events with
// a delivery still pending (and what a merchant stores between two trims).
// MaxEvents alone does not bound the journal: a redelivery adds a round to
// an event kept whole, one delivery per endpoint, so 10,000 events of 100
// rounds to 20 endpoints held 20 million deliveries (about 10 GB in
// memory, a 410 KB event each). 50,000 are the first rounds of 10,000
// events to 5 endpoints, and about 25 MB in memory.
const DefaultMaxDeliveries = 50_000

// DefaultMaxPendingForRedeliver is how many deliveries a merchant may have
// pending before Redeliver refuses to add a round: each call adds one per
// endpoint, so a merchant looping on it would otherwise grow the outbox
// (process memory, or the database every merchant shares) without bound.
// Publishing is not refused: a merchant's payment events are bounded
// already, through its payments (paymock.DefaultMaxPayments) and their few
// transitions. 10,000 pending is far past what an honest test leaves
// waiting, and few enough that the cap costs a bounded read.
const DefaultMaxPendingForRedeliver = 10_000

// Dispatcher signs, sends and retries the deliveries of an Outbox and
// reads its journal. All methods are safe for concurrent use.
//
// The sweep starts with Start; senders start when there is something to
// send, Start or not. New starts no goroutine.
type Dispatcher struct {
	box       paymock.Outbox
	log       *slog.Logger
	sched     Scheduler
	clock     Clock
	defaults  []endpoint
	retry     []time.Duration
	timeout   time.Duration
	lease     time.Duration
	maxEvents int // per merchant journal
	// maxDeliveries is Config.MaxDeliveries.
	maxDeliveries int
	// maxPending is Config.MaxPendingForRedeliver.
	maxPending int
	// transport is Config.Client's: an attempt is one request and
	// follows no redirect, so it goes to the transport directly, without
	// the client's redirect bookkeeping and copy of the headers.
	transport http.RoundTripper
	now       func() time.Time
	endpoints Endpoints
	faults    Faults
	obs       Observer
	ids       *paymock.MerchantIDs
	sweep     bool
	base      time.Duration // offset of a real clock the outbox has not stored

	senders     int // bound on the senders of all merchants
	perMerchant int // bound on one merchant's

	// sendCtx is the parent of every send; cancelled when Close stops
	// waiting.
	sendCtx     context.Context
	cancelSends context.CancelFunc
	stop        chan struct{} // closed by Close: the sweep ends
	sweepDone   chan struct{} // closed when the sweep has ended (or never ran)
	runs        sync.WaitGroup

	parsedMu sync.Mutex
	parsed   map[endpointKey]endpoint // see endpoint

	trims *everyn.Counter // when each merchant's journal is trimmed next

	mu    sync.Mutex
	lanes map[string]*lane // merchants with sends under way or wanted
	// timers are the instants at which a send of a merchant's due
	// deliveries is registered with the scheduler and not yet run: one
	// timer an instant, however many deliveries fall due then.
	timers    map[timerKey]struct{}
	waiting   []string    // merchants waiting for a free sender, in order
	running   int         // senders running, all merchants
	sending   int         // send slots held, all merchants (see acquire)
	slotWaits []*slotWait // sends waiting for a slot, in order
	started   bool
	closed    bool
}

// New checks cfg and returns a Dispatcher. Default endpoints must have an
// absolute http(s) URL and a "whsec_" + base64 secret; Retry delays must
// be positive; Timeout, Senders, MerchantSenders, MaxEvents, MaxDeliveries and
// MaxPendingForRedeliver must not be negative (zero means the default).
func New(cfg Config) (*Dispatcher, error) {
	d := &Dispatcher{
		box:         cfg.Outbox,
		log:         cfg.Logger,
		sched:       cfg.Scheduler,
		clock:       cfg.Clock,
		timeout:     cfg.Timeout,
		maxEvents:   cfg.MaxEvents,
		maxPending:  cfg.MaxPendingForRedeliver,
		now:         cfg.Now,
		endpoints:   cfg.Endpoints,
		faults:      cfg.Faults,
		obs:         cfg.Observer,
		ids:         cfg.IDs,
		sweep:       cfg.Sweep,
		base:        cfg.ClockBase,
		senders:     cfg.Senders,
		perMerchant: cfg.MerchantSenders,
		lanes:       make(map[string]*lane),
		parsed:      make(map[endpointKey]endpoint),
		timers:      make(map[timerKey]struct{}),
		stop:        make(chan struct{}),
		sweepDone:   make(chan struct{}),
	}
	d.maxDeliveries = cfg.MaxDeliveries
	if d.box == nil {
		return nil, errors.New("webhooks: an Outbox is required")
	}
	for i, ep := range cfg.DefaultEndpoints {
		e, err := parseEndpoint(ep)
		if err != nil {
			return nil, fmt.Errorf("webhooks: default endpoint %d: %w", i+1, err)
		}
		d.defaults = append(d.defaults, e)
	}
	retry, err := retrySchedule(cfg.Retry)
	if err != nil {
		return nil, err
	}
	d.retry = retry
	switch {
	case cfg.Timeout < 0:
		return nil, errors.New("webhooks: Timeout must not be negative")
	case cfg.Senders < 0 || cfg.MerchantSenders < 0:
		return nil, errors.New("webhooks: Senders and MerchantSenders must not be negative")
	case cfg.MaxEvents < 0:
		return nil, errors.New("webhooks: MaxEvents must not be negative")
	case cfg.MaxDeliveries < 0:
		return nil, errors.New("webhooks: MaxDeliveries must not be negative")
	case cfg.MaxPendingForRedeliver < 0:
		return nil, errors.New("webhooks: MaxPendingForRedeliver must not be negative")
	}
	d.defaultsFill(cfg.Client)
	return d, nil
}

// defaultsFill sets what the Config left zero.
func (d *Dispatcher) defaultsFill(client *http.Client) {
	if d.maxEvents == 0 {
		d.maxEvents = DefaultMaxEvents
	}
	if d.maxDeliveries == 0 {
		d.maxDeliveries = DefaultMaxDeliveries
	}
	if d.maxPending == 0 {
		d.maxPending = DefaultMaxPendingForRedeliver
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
	// Longer than one send may take, so that a claim outliving it means
	// its sender died. A send a fault shapes takes no longer: its copies
	// and unknown-type message share the one timeout (postShaped).
	d.lease = d.timeout + 5*time.Second
	if d.senders == 0 {
		d.senders = 64
	}
	if d.perMerchant == 0 {
		d.perMerchant = 4
	}
	d.perMerchant = min(d.perMerchant, d.senders)
	switch {
	case client == nil:
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = d.perMerchant
		d.transport = tr
	case client.Transport == nil:
		d.transport = http.DefaultTransport
	default:
		d.transport = client.Transport
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.obs == nil {
		d.obs = noObserver{}
	}
	if d.ids == nil {
		d.ids = paymock.NewMerchantIDs(nil, nil, nil)
	}
	d.sendCtx, d.cancelSends = context.WithCancel(context.Background())
	d.trims = everyn.New(trimEvery)
}

// realScheduler and realClock are the defaults when no lifecycle package
// drives time: everything on the real clock.
type realScheduler struct{}

func (realScheduler) At(_ string, due time.Time, fn func()) { time.AfterFunc(time.Until(due), fn) }

type realClock struct{}

func (realClock) Now(context.Context, string) time.Time { return time.Now() }

// Start starts the sweep when Config.Sweep asks for it. It is idempotent
// and does nothing after Close.
func (d *Dispatcher) Start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started || d.closed {
		return
	}
	d.started = true
	if d.sweep {
		go d.sweepLoop()
	} else {
		close(d.sweepDone)
	}
}
