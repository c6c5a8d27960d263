// The outbox walk: preparing an event's deliveries, storing them, and the
// senders that claim what is due, one delivery at a time, each merchant
// within its share.

package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/paymock/paymock"
)

// OutboxSweepInterval is how often the sweep (Config.Sweep) looks for
// merchants on real clocks with deliveries due that no timer of this
// process brings: those scheduled by a replica that has died, or by this
// process before a restart.
const OutboxSweepInterval = time.Second

// sweepBatch is how many merchants one sweep wakes at most.
const sweepBatch = 1000

// Round is the deliveries an event of one merchant goes to now, with the
// faults that shape them: what Prepare reads before the transition whose
// event it is, so that no lookup runs inside the store's transaction.
type Round struct {
	deliveries []paymock.Delivery
}

// Prepare names the endpoints an event of type typ of m goes to now and
// asks the fault rules about each. Outgoing completes it with the event.
func (d *Dispatcher) Prepare(ctx context.Context, m *paymock.Merchant, typ paymock.EventType) (Round, error) {
	return d.prepareSlots(ctx, m.ID, typ, d.slotsFor(ctx, m), false)
}

func (d *Dispatcher) prepareSlots(ctx context.Context, merchantID string, typ paymock.EventType, slots []endpointSlot, oneShot bool) (Round, error) {
	faults := d.matchFaults(ctx, merchantID, typ, slots)
	now := d.clock.Now(ctx, merchantID)
	r := Round{deliveries: make([]paymock.Delivery, 0, len(slots))}
	for i, s := range slots {
		del := paymock.Delivery{MerchantID: merchantID, EventType: typ, EndpointID: s.ep.id, URL: s.ep.url,
			Secret: s.ep.secret, State: paymock.DeliveryPending, NextAt: now, OneShot: oneShot, Position: i}
		if s.err != nil {
			del.URL, del.State, del.Error, del.NextAt = s.ep.display, paymock.DeliveryFailed, s.err.Error(), time.Time{}
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
			del.NextAt = paymock.NoLaterThanLastSecond(del.NextAt)
		}
		if del.Window == nil && d.faults != nil {
			// A window another delivery opened holds this one too.
			closes, opener, err := d.box.Window(ctx, merchantID, s.ep.url, now)
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

// Outgoing is the round with its event, ready to be stored.
func (r Round) Outgoing(ev paymock.Event) paymock.Outgoing {
	o := paymock.Outgoing{Event: ev, Deliveries: make([]paymock.Delivery, len(r.deliveries))}
	for i, del := range r.deliveries {
		del.EventID, del.PaymentID, del.Body, del.Round = ev.ID, ev.Payment.ID, ev.Body, 1
		if ev.Payment.ID != "" && del.State == paymock.DeliveryPending {
			del.Chain = ev.Payment.ID + " " + del.URL
		}
		o.OneShot = o.OneShot || del.OneShot
		o.Deliveries[i] = del
	}
	return o
}

// Stored tells the Dispatcher that an Outgoing it prepared has been stored
// (by Outbox.AddEvent or an EventStore), with its deliveries' ids: it
// counts them, schedules the first sends a fault's delay or a reorder
// window holds, and wakes the merchant's senders for the others. It
// never waits for a send. False once Close has begun: nothing is sent
// then, and the deliveries stay pending.
func (d *Dispatcher) Stored(merchantID string, o paymock.Outgoing, ids []int64) bool {
	d.countCreated(o.Deliveries)
	d.trim(merchantID)
	if d.isClosed() {
		return false
	}
	due := false
	var now time.Time
	for i, del := range o.Deliveries {
		if i >= len(ids) || del.State != paymock.DeliveryPending {
			continue
		}
		if !held(del) {
			// Due at the instant Prepare read, which the clock has
			// passed: no need to read it again (on PostgreSQL a round
			// trip inside the API call).
			due = true
			continue
		}
		if now.IsZero() {
			// Held deliveries are rare (a fault's delay, a reorder
			// window): the bound is made only for them.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			now = d.clock.Now(ctx, merchantID)
			cancel()
		}
		if del.NextAt.After(now) {
			d.timerAt(merchantID, del.NextAt)
		} else {
			due = true
		}
	}
	if due {
		d.wake(merchantID)
	}
	return true
}

// held reports whether a fault's delay or a reorder window holds a new
// delivery past the instant its round was prepared.
func held(del paymock.Delivery) bool {
	return del.Window != nil || del.Fault != nil && del.Fault.Delay > 0
}

func (d *Dispatcher) countCreated(dels []paymock.Delivery) {
	for _, del := range dels {
		d.obs.EventCreated()
		if del.State != paymock.DeliveryPending {
			d.obs.EventFinished(string(del.State))
		}
	}
}

// lane is a merchant's sends under way in this process.
type lane struct {
	senders int // sender goroutines running
	inline  int // sends made in a caller's goroutine (timers, advances, test events)
	sending int // send slots held (see acquire), of senders and inline sends

	again  bool // something may have fallen due since a sender last claimed
	queued bool // in d.waiting, for a free sender
	// idle is closed when the lane ends, for Idle; made on demand.
	idle chan struct{}
}

func (d *Dispatcher) laneLocked(merchantID string) *lane {
	l := d.lanes[merchantID]
	if l == nil {
		l = &lane{}
		d.lanes[merchantID] = l
	}
	return l
}

// endLaneLocked drops a lane with nothing under way or wanted.
func (d *Dispatcher) endLaneLocked(merchantID string, l *lane) {
	if l.senders > 0 || l.inline > 0 || l.queued || d.lanes[merchantID] != l {
		return
	}
	delete(d.lanes, merchantID)
	if l.idle != nil {
		close(l.idle)
	}
}

// wake has the merchant's due deliveries sent: by a new sender if the
// merchant and the process have one to spare, else by one running now
// (again), or by the next free one (queued, in turn). It never blocks.
func (d *Dispatcher) wake(merchantID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	l := d.laneLocked(merchantID)
	l.again = true
	switch {
	case l.senders >= d.perMerchant:
		// A sender of the merchant claims again before it ends.
	case d.running >= d.senders:
		if !l.queued && l.senders == 0 {
			l.queued = true
			d.waiting = append(d.waiting, merchantID)
		}
	default:
		d.startSenderLocked(merchantID, l)
	}
}

func (d *Dispatcher) startSenderLocked(merchantID string, l *lane) {
	l.senders++
	d.running++
	d.runs.Add(1)
	go d.sender(merchantID, l)
	// The runtime puts a new goroutine in its creator's run-next slot,
	// which an idle processor takes over only after a deliberate back-off
	// (runqgrab's usleep(3), some 50 µs under Linux's timer slack), so
	// the sender would wait for the API call that woke it to finish its
	// answer. An empty goroutine started after it takes the slot and
	// moves the sender to the run queue, which an idle processor takes
	// from at once: the delivery goes out while the answer is written.
	go func() {}()
}

// sender sends the merchant's due deliveries, one claim at a time, until
// none is left that it can claim; or, while other merchants wait for a
// sender, after each send, putting its merchant back in line.
func (d *Dispatcher) sender(merchantID string, l *lane) {
	defer d.runs.Done()
	for {
		d.mu.Lock()
		l.again = false
		closed := d.closed
		d.mu.Unlock()
		sent := !closed && d.sendOne(context.Background(), merchantID, l, nil)
		d.mu.Lock()
		switch {
		case d.closed:
		case sent && len(d.waiting) == 0, !sent && l.again:
			d.mu.Unlock()
			continue
		}
		l.senders--
		d.running--
		if sent && !d.closed && l.senders == 0 && !l.queued {
			// More may be due: the merchant's turn comes again.
			l.queued = true
			d.waiting = append(d.waiting, merchantID)
		}
		// The sender freed is the next waiting merchant's.
		for len(d.waiting) > 0 && d.running < d.senders && !d.closed {
			next := d.waiting[0]
			d.waiting = d.waiting[1:]
			if nl := d.lanes[next]; nl != nil && nl.queued {
				nl.queued = false
				if nl.senders < d.perMerchant {
					d.startSenderLocked(next, nl)
				}
			}
		}
		d.endLaneLocked(merchantID, l)
		d.mu.Unlock()
		return
	}
}

// sendOne claims one of the merchant's due deliveries (of ids when not
// nil) and sends it, once it holds a send slot (l is the merchant's lane);
// false when none could be claimed, or ctx ended the wait for a slot.
func (d *Dispatcher) sendOne(ctx context.Context, merchantID string, l *lane, ids []int64) bool {
	// The slot before the claim: a claim's lease runs from the claim, so
	// a send waiting for a slot holds none.
	if !d.acquire(ctx, l) {
		return false
	}
	defer d.release(l)
	if d.isClosed() {
		return false
	}
	// The senders' context: Close cuts a clock read or a claim short as
	// it does a send, and a round makes no context of its own.
	now := d.clock.Now(d.sendCtx, merchantID)
	c := paymock.Claim{MerchantID: merchantID, IDs: ids, Until: now, Now: time.Now(), Lease: d.lease, Limit: 1}
	dels, err := d.box.Claim(d.sendCtx, c)
	if err != nil {
		d.log.Warn("webhook deliveries not claimed; a later wake, advance or sweep will", "merchant", merchantID, "error", err)
		return false
	}
	if len(dels) == 0 {
		return false
	}
	d.attempt(dels[0], now)
	return true
}

// sendInline sends, in the caller's goroutine, the merchant's deliveries
// due now (of ids when not nil), in due order, one after the other, and
// returns once they are sent: a timer or an advance sees each outcome
// before the next is due. It counts as under way for Idle. Each send
// waits for a slot (acquire); when ctx ends that wait, the merchant's
// senders are woken to send what is left.
func (d *Dispatcher) sendInline(ctx context.Context, merchantID string, ids []int64) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	l := d.laneLocked(merchantID)
	l.inline++
	d.runs.Add(1)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		l.inline--
		d.endLaneLocked(merchantID, l)
		d.mu.Unlock()
		d.runs.Done()
	}()
	for !d.isClosed() && d.sendOne(ctx, merchantID, l, ids) {
	}
	if ctx.Err() != nil {
		d.wake(merchantID)
	}
}

// timerKey is one merchant's instant.
type timerKey struct {
	merchantID string
	at         int64 // unix nanoseconds
}

// timerAt has the scheduler send the merchant's deliveries due at at (a
// retry, a fault's delay, a reorder window), once: the publishing sender
// and an advance's listing of what falls due may both name the instant,
// and one send of what is due then serves both.
func (d *Dispatcher) timerAt(merchantID string, at time.Time) {
	key := timerKey{merchantID, at.UnixNano()}
	d.mu.Lock()
	if _, ok := d.timers[key]; ok {
		d.mu.Unlock()
		return
	}
	d.timers[key] = struct{}{}
	d.mu.Unlock()
	d.sched.At(merchantID, at, func() {
		d.mu.Lock()
		delete(d.timers, key)
		d.mu.Unlock()
		d.sendInline(context.Background(), merchantID, nil)
	})
}

// RunDue sends the merchant's deliveries due now on its clock, in due
// order, and returns once they are sent: an advance ends with it, so that
// nothing due by its target waits for the next one.
func (d *Dispatcher) RunDue(merchantID string) { d.sendInline(context.Background(), merchantID, nil) }

// DueDeliveries registers with the scheduler the merchant's deliveries due
// by until, whichever replica made them, so that an advance of a frozen
// clock fires them in time order with everything else due.
func (d *Dispatcher) DueDeliveries(ctx context.Context, merchantID string, until time.Time) error {
	dels, err := d.box.DueDeliveries(ctx, merchantID, until, 1000)
	if err != nil {
		return fmt.Errorf("webhooks: due deliveries: %w", err)
	}
	for _, del := range dels {
		d.timerAt(merchantID, del.NextAt)
	}
	return nil
}

// sweepLoop wakes, every OutboxSweepInterval, the senders of merchants on
// real clocks with deliveries due, until Close.
func (d *Dispatcher) sweepLoop() {
	defer close(d.sweepDone)
	t := time.NewTicker(OutboxSweepInterval)
	defer t.Stop()
	failing := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ids, err := d.box.DueMerchants(ctx, time.Now(), d.base, sweepBatch)
		cancel()
		switch {
		case err != nil && !failing:
			failing = true
			d.log.Warn("due webhook deliveries not looked for; retrying every interval", "error", err)
		case err == nil && failing:
			failing = false
			d.log.Info("due webhook deliveries looked for again", "merchants", len(ids))
		}
		for _, id := range ids {
			d.wake(id)
		}
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
	}
}
