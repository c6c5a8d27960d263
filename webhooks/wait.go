// Waiting for sends: whether a merchant has deliveries to make, until
// when its sends are under way here or on any replica, and Close.

package webhooks

import (
	"context"
	"fmt"
	"time"
)

// Busy reports whether the merchant has any delivery still to make: being
// sent, due, waiting for a retry, a fault's delay or a reorder window, or
// waiting in line behind one that is. A merchant that is not busy can be
// forgotten without losing a delivery. An outbox that cannot be read
// counts as busy.
func (d *Dispatcher) Busy(merchantID string) bool {
	d.mu.Lock()
	busy := d.lanes[merchantID] != nil
	d.mu.Unlock()
	if busy {
		return true
	}
	pending, err := d.box.Pending(context.Background(), merchantID)
	return pending || err != nil
}

// Idle waits until no send of the merchant is under way or wanted in this
// process, or ctx is done. Deliveries waiting for a scheduled retry, a
// fault's delay or a reorder window, or waiting behind one that is, do not
// count (Busy does count them).
func (d *Dispatcher) Idle(ctx context.Context, merchantID string) error {
	d.mu.Lock()
	l := d.lanes[merchantID]
	if l == nil {
		d.mu.Unlock()
		return nil
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	ch := l.idle
	d.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settlePoll is how often Settle looks for other replicas' sends.
const settlePoll = 20 * time.Millisecond

// Settle waits until no send of the merchant is under way: here (Idle) and
// on any replica (a live claim), for at most a lease. An advance settles
// first, so that the retry a send elsewhere is about to schedule is due
// from that send and fires in the advance.
func (d *Dispatcher) Settle(ctx context.Context, merchantID string) error {
	if err := d.Idle(ctx, merchantID); err != nil {
		return err
	}
	deadline := time.Now().Add(d.lease)
	for {
		claimed, err := d.box.Claimed(ctx, merchantID, time.Now())
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

func (d *Dispatcher) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// Close stops the sweep and waits for the sends under way. If ctx is done
// first, those sends are cut short, and Close returns ctx.Err(): each
// delivery cut short stays pending, unrecorded, to be sent again. Every
// delivery not sent stays pending in the outbox (see the package doc).
// Close may be called more than once.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	if !d.started {
		d.started = true
		close(d.sweepDone)
	}
	close(d.stop)
	// Merchants waiting for a sender get none: their deliveries stay
	// pending.
	for _, id := range d.waiting {
		if l := d.lanes[id]; l != nil {
			l.queued = false
			d.endLaneLocked(id, l)
		}
	}
	d.waiting = nil
	d.mu.Unlock()
	<-d.sweepDone
	err := d.waitOrCut(ctx, d.runs.Wait)
	d.cancelSends()
	// What waits for a retry, a delay or a window stays pending in the
	// backend (on PostgreSQL the next start sends it); the log says how
	// much, since a memory backend ends with the process.
	d.mu.Lock()
	scheduled := len(d.timers)
	d.mu.Unlock()
	if scheduled > 0 {
		d.log.Info("webhook deliveries left pending at shutdown", "scheduled_sends", scheduled)
	}
	return err
}

// waitOrCut waits for wait to return; once ctx is done it cuts the sends
// under way short and waits for the rest, returning ctx's error.
func (d *Dispatcher) waitOrCut(ctx context.Context, wait func()) error {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.cancelSends()
		<-done
		return ctx.Err()
	}
}
