// Deliveries kept in an Outbox: publishing into it, claiming what is due,
// attempting it once and recording the outcome, from any replica.

package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// OutboxSweepInterval is how often each replica claims, on real clocks,
// the deliveries due in the outbox that no timer of its own brings: those
// scheduled by a replica that has died or restarted since.
const OutboxSweepInterval = time.Second

// outboxBatch is how many due deliveries one claim takes at most.
const outboxBatch = 100

// durable is the Dispatcher's state when Config.Outbox is set: no journal,
// only the deliveries this replica is attempting now.
type durable struct {
	box   Outbox
	lease time.Duration
	base  time.Duration // offset of a real clock the outbox has not stored
	sweep bool

	mu        sync.Mutex
	published int                   // events stored by this replica, for trimming
	busy      map[string]*busyCount // merchant -> its attempts under way here
	closed    bool
	runs      sync.WaitGroup
	stop      chan struct{} // closed by Close: the sweep ends
	loopDone  chan struct{} // closed when the sweep has ended (or never ran)
	started   bool
}

type busyCount struct {
	n    int
	idle chan struct{} // closed when n drops to 0
}

func newDurable(cfg Config, timeout time.Duration) *durable {
	return &durable{
		box: cfg.Outbox,
		// Longer than one send may take, so that a claim outliving it
		// means its replica died. (A send a Duplicate fault multiplies
		// against a receiver that times out on each copy may outlive it:
		// another replica then sends it again, and records it.)
		lease:    timeout + 5*time.Second,
		base:     cfg.ClockBase,
		sweep:    cfg.OutboxSweep,
		busy:     make(map[string]*busyCount),
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
}

// Durable reports whether deliveries live in an Outbox (Config.Outbox).
func (d *Dispatcher) Durable() bool { return d.out != nil }

// acquire counts an attempt, or a batch of them, under way for a merchant;
// false once Close has begun.
func (o *durable) acquire(merchantID string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	b := o.busy[merchantID]
	if b == nil {
		b = &busyCount{idle: make(chan struct{})}
		o.busy[merchantID] = b
	}
	b.n++
	o.runs.Add(1)
	return true
}

func (o *durable) release(merchantID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b := o.busy[merchantID]; b != nil {
		if b.n--; b.n == 0 {
			close(b.idle)
			delete(o.busy, merchantID)
		}
	}
	o.runs.Done()
}

func (o *durable) idle(ctx context.Context, merchantID string) error {
	o.mu.Lock()
	b := o.busy[merchantID]
	o.mu.Unlock()
	if b == nil {
		return nil
	}
	select {
	case <-b.idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Round is the deliveries an event of one merchant goes to now, with the
// faults that shape them: what Prepare reads before the transition whose
// event it is, so that no lookup runs inside the store's transaction.
type Round struct {
	deliveries []Delivery
}

// Prepare names the endpoints an event of type typ of m goes to now and
// asks the fault rules about each, for an Outbox. Outgoing completes it
// with the event.
func (d *Dispatcher) Prepare(ctx context.Context, m *paymock.Merchant, typ paymock.EventType) (Round, error) {
	slots := d.slotsFor(ctx, m, "")
	return d.prepareSlots(ctx, m.ID, typ, slots, false)
}

func (d *Dispatcher) prepareSlots(ctx context.Context, merchantID string, typ paymock.EventType, slots []endpointSlot, oneShot bool) (Round, error) {
	faults, _ := d.matchFaults(merchantID, typ, slots)
	now := d.clock.Now(merchantID)
	r := Round{deliveries: make([]Delivery, 0, len(slots))}
	for i, s := range slots {
		del := Delivery{MerchantID: merchantID, EventType: typ, EndpointID: s.ep.id, URL: s.ep.url,
			Secret: s.ep.secret, State: StatePending, NextAt: now, OneShot: oneShot, Position: i}
		if s.err != nil {
			del.URL, del.State, del.Error, del.NextAt = s.ep.display, StateFailed, s.err.Error(), time.Time{}
			r.deliveries = append(r.deliveries, del)
			continue
		}
		if faults != nil && faults[i] != nil {
			f := faults[i]
			del.Fault = f
			if f.Delay > 0 {
				del.NextAt = now.Add(f.Delay)
			}
			if f.Reorder {
				del.Window = f
				del.NextAt = del.NextAt.Add(f.Window)
			}
		}
		if del.Window == nil && d.faults != nil {
			closes, opener, err := d.out.box.Window(ctx, merchantID, s.ep.url, now)
			if err != nil {
				return Round{}, fmt.Errorf("webhooks: reorder window: %w", err)
			}
			if opener != nil && closes.After(del.NextAt) {
				del.NextAt, del.Window = closes, opener
			}
		}
		r.deliveries = append(r.deliveries, del)
	}
	return r, nil
}

// Outgoing is the round with its event, ready for Outbox.AddEvent.
func (r Round) Outgoing(ev paymock.Event) Outgoing {
	o := Outgoing{Event: ev, Deliveries: make([]Delivery, len(r.deliveries))}
	for i, del := range r.deliveries {
		del.EventID, del.PaymentID, del.Body, del.Round = ev.ID, ev.Payment.ID, ev.Body, 1
		if ev.Payment.ID != "" && del.State == StatePending {
			del.Chain = ev.Payment.ID + " " + del.URL
		}
		o.OneShot = o.OneShot || del.OneShot
		o.Deliveries[i] = del
	}
	return o
}

// Stored tells the Dispatcher that an Outgoing it prepared has been
// stored (by Outbox.AddEvent or a store's transaction), with its
// deliveries' ids: it counts them and attempts those due now, in the
// background.
func (d *Dispatcher) Stored(merchantID string, o Outgoing, ids []int64) {
	d.countCreated(o.Deliveries)
	d.trimDurable(merchantID)
	if len(ids) == 0 || !d.out.acquire(merchantID) {
		return
	}
	// A first send a fault's delay or a reorder window holds is brought
	// due here on time; the sweep, or an advance anywhere, stands in.
	now := d.clock.Now(merchantID)
	for i, del := range o.Deliveries {
		if i < len(ids) && del.State == StatePending && del.NextAt.After(now) {
			d.sched.At(merchantID, del.NextAt, d.dueFn(merchantID, ids[i], del.Window != nil))
		}
	}
	go func() {
		defer d.out.release(merchantID)
		d.claimAndRun(merchantID, ids)
	}()
}

func (d *Dispatcher) countCreated(dels []Delivery) {
	for _, del := range dels {
		d.obs.EventCreated()
		if del.State != StatePending {
			d.obs.EventFinished(string(del.State))
		}
	}
}

// trimEvery is how many events a replica stores between two trims of the
// journal of the merchant whose event it is: a merchant publishing a
// share p of them is trimmed every trimEvery/p of its own, so it keeps
// about MaxEvents plus trimEvery events.
const trimEvery = 100

// trimDurable keeps the merchant's journal near Config.MaxEvents, now and
// then, as the in-memory journal does at each publish.
func (d *Dispatcher) trimDurable(merchantID string) {
	o := d.out
	o.mu.Lock()
	o.published++
	due := o.published%trimEvery == 0
	o.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.box.TrimEvents(ctx, merchantID, d.maxEvents); err != nil {
		d.log.Warn("event journal not trimmed; the next trim will", "merchant", merchantID, "error", err)
	}
}

// publishDurable stores an event and its deliveries, and attempts them.
func (d *Dispatcher) publishDurable(ctx context.Context, m *paymock.Merchant, ev paymock.Event) error {
	r, err := d.Prepare(ctx, m, ev.Type)
	if err != nil {
		return err
	}
	o := r.Outgoing(ev)
	ids, err := d.out.box.AddEvent(ctx, o)
	if err != nil {
		return fmt.Errorf("webhooks: publish %s: %w", ev.ID, err)
	}
	d.Stored(m.ID, o, ids)
	return nil
}

// redeliverDurable adds a round of an event's deliveries to the endpoints
// of its first round.
func (d *Dispatcher) redeliverDurable(ctx context.Context, merchantID, eventID string) (EventRecord, error) {
	rec, ok, err := d.out.box.Event(ctx, merchantID, eventID)
	if err != nil {
		return EventRecord{}, err
	}
	if !ok {
		return EventRecord{}, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	first, err := d.out.box.Round(ctx, merchantID, eventID, 1)
	if err != nil {
		return EventRecord{}, err
	}
	slots := make([]endpointSlot, 0, len(first))
	oneShot := false
	for _, del := range first {
		ep, err := parseEndpoint(paymock.WebhookEndpoint{ID: del.EndpointID, URL: del.URL, Secret: del.Secret})
		slots = append(slots, endpointSlot{ep: ep, err: err})
		oneShot = oneShot || del.OneShot
	}
	r, err := d.prepareSlots(ctx, merchantID, rec.Type, slots, oneShot)
	if err != nil {
		return EventRecord{}, err
	}
	o := r.Outgoing(paymock.Event{ID: eventID, Type: rec.Type, MerchantID: merchantID,
		Payment: paymock.Payment{ID: rec.PaymentID}, Body: rec.Payload})
	ids, err := d.out.box.AddRound(ctx, merchantID, eventID, o.Deliveries)
	if err != nil {
		return EventRecord{}, err
	}
	d.Stored(merchantID, o, ids)
	rec, ok, err = d.out.box.Event(ctx, merchantID, eventID)
	if err == nil && !ok {
		err = fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	return rec, err
}

// claimAndRun claims the deliveries ids (all of the merchant's due ones
// when ids is nil) due now on the merchant's clock and attempts them one
// after the other; then, while attempts ended chains' heads, whatever of
// the merchant's fell due behind them.
func (d *Dispatcher) claimAndRun(merchantID string, ids []int64) {
	for {
		c := Claim{IDs: ids, MerchantID: merchantID, Until: d.clock.Now(merchantID), Now: time.Now(),
			Lease: d.out.lease, Limit: outboxBatch}
		dels, err := d.out.box.Claim(context.Background(), c)
		if err != nil {
			d.log.Warn("webhook deliveries not claimed; another replica or the sweep will", "merchant", merchantID, "error", err)
			return
		}
		more := false
		for _, del := range dels {
			if d.attemptDurable(del) {
				more = true
			}
		}
		if !more {
			return
		}
		ids = nil // the chains' next heads, and anything else now due
	}
}

// settlePoll is how often Settle looks for other replicas' sends.
const settlePoll = 20 * time.Millisecond

// Settle waits until no send of the merchant is under way: here (Idle) and,
// with an Outbox, on any replica (a live claim), for at most a lease. An
// advance settles first, so that the retry a send on another replica is
// about to schedule is due from that send and fires in the advance.
func (d *Dispatcher) Settle(ctx context.Context, merchantID string) error {
	if err := d.Idle(ctx, merchantID); err != nil || d.out == nil {
		return err
	}
	deadline := time.Now().Add(d.out.lease)
	for {
		claimed, err := d.out.box.Claimed(ctx, merchantID, time.Now())
		if err != nil {
			return fmt.Errorf("webhooks: sends under way: %w", err)
		}
		if !claimed || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

// RunDue sends the merchant's deliveries due now on its clock, earliest
// first, and returns once they are sent: an advance ends with it, so that
// nothing due by its target waits for the next one.
func (d *Dispatcher) RunDue(merchantID string) {
	if d.out == nil || !d.out.acquire(merchantID) {
		return
	}
	defer d.out.release(merchantID)
	d.claimAndRun(merchantID, nil)
}

// DueDeliveries registers with the scheduler the merchant's deliveries due
// by until, whichever replica made them, so that an advance of a frozen
// clock fires them in time order with everything else due.
func (d *Dispatcher) DueDeliveries(ctx context.Context, merchantID string, until time.Time) error {
	if d.out == nil {
		return nil
	}
	dels, err := d.out.box.DueDeliveries(ctx, merchantID, until, 1000)
	if err != nil {
		return fmt.Errorf("webhooks: due deliveries: %w", err)
	}
	for _, del := range dels {
		d.sched.At(merchantID, del.NextAt, d.dueFn(merchantID, del.ID, del.Window != nil))
	}
	return nil
}

// dueFn attempts one delivery when its scheduled instant comes, and
// returns once it has (an advancing clock sees each outcome in order). A
// delivery in a reorder window is claimed with all that is due, in the
// outbox's order, which sends the window newest first.
func (d *Dispatcher) dueFn(merchantID string, id int64, windowed bool) func() {
	ids := []int64{id}
	if windowed {
		ids = nil
	}
	return func() {
		if !d.out.acquire(merchantID) {
			return
		}
		defer d.out.release(merchantID)
		d.claimAndRun(merchantID, ids)
	}
}

// attemptDurable makes one send of a claimed delivery and records what it
// came to. It reports whether the delivery ended while heading a chain,
// so that the next of it may now be due.
func (d *Dispatcher) attemptDurable(del Delivery) bool {
	ep, err := parseEndpoint(paymock.WebhookEndpoint{ID: del.EndpointID, URL: del.URL, Secret: del.Secret})
	if err != nil {
		d.recordDurable(del, Outcome{Sends: del.Sends, State: StateFailed, Error: err.Error()}, "")
		return del.Chain != ""
	}
	n := del.Sends + 1
	ev := paymock.Event{ID: del.EventID, Type: del.EventType, MerchantID: del.MerchantID, Body: del.Body}
	at := d.clock.Now(del.MerchantID)
	var sh *shape
	if del.Sends == 0 && (del.Fault != nil || del.Window != nil) {
		sh = &shape{copies: 1, fault: del.Fault}
		if f := del.Fault; f != nil {
			sh.copies, sh.badSignature, sh.skew = max(f.Duplicate, 1), f.BadSignature, f.TimestampSkew
		}
		if del.Window != nil {
			sh.reorder = reorderInfo{fault: del.Window}
		}
	}
	var (
		status      int
		errMsg      string
		interrupted bool
		attempts    []AttemptRecord
	)
	if sh == nil {
		start := time.Now()
		status, errMsg, interrupted = d.post(ep, ev, nil)
		attempts = []AttemptRecord{{Attempt: n, At: paymock.FormatTime(at), StatusCode: status, Error: errMsg,
			DurationMS: time.Since(start).Milliseconds()}}
	} else {
		var made []attempt
		status, errMsg, interrupted, made = d.postShaped(ep, ev, sh, n, at)
		for _, a := range made {
			attempts = append(attempts, AttemptRecord{Attempt: a.n, At: paymock.FormatTime(a.at), StatusCode: a.status,
				Error: a.err, DurationMS: a.dur.Milliseconds(), Fault: a.fault})
		}
	}
	if interrupted {
		// Cut short by Close: not recorded, so that the send is made again
		// by whichever replica claims it next.
		d.obs.WebhookAttempt(string(StateInterrupted))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.out.box.Release(ctx, del); err != nil {
			d.log.Warn("webhook claim not released; it lapses with its lease", "event", del.EventID, "error", err)
		}
		return false
	}
	out := Outcome{Attempts: attempts, Sends: n}
	retries := len(d.retry)
	if del.OneShot {
		retries = 0
	}
	outcome := ""
	switch {
	case errMsg == "":
		out.State, outcome = StateDelivered, string(StateDelivered)
	case status == http.StatusGone:
		out.State, out.Error, outcome = StateFailed, msgGone, string(StateFailed)
	case n > retries:
		out.State, outcome = StateFailed, string(StateFailed)
		out.Error = fmt.Sprintf("no 2xx answer after %d attempts", n)
		if n == 1 {
			out.Error = "no 2xx answer to its single attempt"
		}
	default:
		out.State, out.NextAt, outcome = StatePending, at.Add(d.retry[n-1]), "retrying"
	}
	d.obs.WebhookAttempt(outcome)
	d.log.Debug("webhook attempt", "merchant", del.MerchantID, "event", del.EventID, "url", ep.display,
		"attempt", n, "status", status, "error", errMsg)
	if !d.recordDurable(del, out, errMsg) {
		return false
	}
	if out.State == StatePending {
		d.sched.At(del.MerchantID, out.NextAt, d.dueFn(del.MerchantID, del.ID, false))
		return false
	}
	return del.Chain != ""
}

// recordDurable records an outcome in the outbox; false when it could not
// be (the claim then lapses, and the send is made again).
func (d *Dispatcher) recordDurable(del Delivery, out Outcome, lastErr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.out.box.Attempted(ctx, del, out); err != nil {
		d.log.Warn("webhook attempt not recorded; the delivery is sent again once its claim lapses",
			"event", del.EventID, "error", err)
		return false
	}
	if out.State != StatePending {
		d.obs.EventFinished(string(out.State))
		if out.State == StateFailed {
			d.log.Warn("webhook delivery failed", "merchant", del.MerchantID, "event", del.EventID,
				"reason", out.Error, "last_error", lastErr)
		}
	}
	return true
}

// sweepDurable claims, every OutboxSweepInterval, what is due on real
// clocks and attempts it, until Close.
func (d *Dispatcher) sweepDurable() {
	defer close(d.out.loopDone)
	t := time.NewTicker(OutboxSweepInterval)
	defer t.Stop()
	failing := false
	for {
		n, err := d.sweepOnce()
		switch {
		case err != nil && !failing:
			failing = true
			d.log.Warn("due webhook deliveries not claimed; retrying every interval", "error", err)
		case err == nil && failing:
			failing = false
			d.log.Info("due webhook deliveries claimed again", "claimed", n)
		}
		if n == outboxBatch {
			continue // more may be due
		}
		select {
		case <-d.out.stop:
			return
		case <-t.C:
		}
	}
}

// sweepOnce claims one batch of due deliveries on real clocks and attempts
// them, each chain's in its own goroutine.
func (d *Dispatcher) sweepOnce() (int, error) {
	select {
	case <-d.out.stop:
		return 0, nil
	default:
	}
	dels, err := d.out.box.Claim(context.Background(), Claim{Now: time.Now(), Base: d.out.base,
		Lease: d.out.lease, Limit: outboxBatch})
	if err != nil {
		return 0, err
	}
	// One goroutine per merchant, sending its deliveries in the claimed
	// order: a reorder window's newest first.
	var (
		wg     sync.WaitGroup
		order  []string
		groups = map[string][]Delivery{}
	)
	for _, del := range dels {
		if groups[del.MerchantID] == nil {
			order = append(order, del.MerchantID)
		}
		groups[del.MerchantID] = append(groups[del.MerchantID], del)
	}
	for _, merchantID := range order {
		group := groups[merchantID]
		if !d.out.acquire(merchantID) {
			d.release(group) // closing: another replica sends them now
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer d.out.release(merchantID)
			more := false
			for _, del := range group {
				if d.attemptDurable(del) {
					more = true
				}
			}
			if more {
				d.claimAndRun(merchantID, nil)
			}
		}()
	}
	wg.Wait()
	return len(dels), nil
}

// release gives back claims that will not be attempted here.
func (d *Dispatcher) release(dels []Delivery) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, del := range dels {
		if err := d.out.box.Release(ctx, del); err != nil {
			d.log.Warn("webhook claim not released; it lapses with its lease", "event", del.EventID, "error", err)
			return
		}
	}
}

// startDurable starts the sweep, once, when Config.OutboxSweep asks for it.
func (d *Dispatcher) startDurable() {
	o := d.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started || o.closed {
		return
	}
	o.started = true
	if o.sweep {
		go d.sweepDurable()
	} else {
		close(o.loopDone)
	}
}

// closeDurable stops the sweep and waits for the attempts under way; once
// ctx is done it cuts them short (they are then sent again by another
// replica). What is pending stays pending in the outbox.
func (d *Dispatcher) closeDurable(ctx context.Context) error {
	o := d.out
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	if !o.started {
		o.started = true
		close(o.loopDone)
	}
	close(o.stop)
	o.mu.Unlock()
	<-o.loopDone
	err := d.waitOrCut(ctx, o.runs.Wait)
	d.cancelBase()
	return err
}

// sendTestDurable stores a test event and makes its one attempt now.
func (d *Dispatcher) sendTestDurable(ctx context.Context, m *paymock.Merchant, ev paymock.Event, slot endpointSlot) (EventRecord, error) {
	r, err := d.prepareSlots(ctx, m.ID, ev.Type, []endpointSlot{slot}, true)
	if err != nil {
		return EventRecord{}, err
	}
	o := r.Outgoing(ev)
	ids, err := d.out.box.AddEvent(ctx, o)
	if err != nil {
		return EventRecord{}, fmt.Errorf("webhooks: send test event: %w", err)
	}
	d.countCreated(o.Deliveries)
	d.trimDurable(m.ID)
	if d.out.acquire(m.ID) {
		d.claimAndRun(m.ID, ids)
		d.out.release(m.ID)
	}
	rec, ok, err := d.out.box.Event(ctx, m.ID, ev.ID)
	if err == nil && !ok {
		err = errors.New("webhooks: the test event is gone (the merchant was reset)")
	}
	return rec, err
}
