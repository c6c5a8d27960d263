// Send slots: the bound on sends under way, per merchant and in all,
// whatever makes them (a sender, a timer, an advance, a test event).

package webhooks

import (
	"context"
	"slices"
)

// slotWait is a send waiting for a slot, in line.
type slotWait struct {
	l     *lane
	ready chan struct{} // closed once the slot is granted
}

// fitsLocked reports whether a send of l's merchant may start now.
func (d *Dispatcher) fitsLocked(l *lane) bool {
	return l.sending < d.perMerchant && d.sending < d.senders
}

// acquire takes a send slot for l's merchant: one of its MerchantSenders
// and one of the process's Senders. Senders alone never need to wait, as
// there are no more of them than slots; timers, advances and test events
// send in their caller's goroutine, and without this bound they added
// outbound connections past Senders (a receiver that never answers held
// 76 with 64 senders). Waiting sends are served in the order they asked.
// False when ctx or Close ended the wait; the slot is then not held.
func (d *Dispatcher) acquire(ctx context.Context, l *lane) bool {
	d.mu.Lock()
	if d.fitsLocked(l) {
		// No send waiting could start now (release hands freed slots to
		// every one that fits), so taking it overtakes none.
		l.sending++
		d.sending++
		d.mu.Unlock()
		return true
	}
	w := &slotWait{l: l, ready: make(chan struct{})}
	d.slotWaits = append(d.slotWaits, w)
	d.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	case <-d.sendCtx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile: hand it on
		d.releaseLocked(l)
	default:
		d.slotWaits = slices.DeleteFunc(d.slotWaits, func(o *slotWait) bool { return o == w })
	}
	return false
}

// release gives back a slot acquire took.
func (d *Dispatcher) release(l *lane) {
	d.mu.Lock()
	d.releaseLocked(l)
	d.mu.Unlock()
}

// releaseLocked gives back l's slot and grants slots to the waiting sends
// that fit now, in the order they asked: one waiting for its merchant's
// share does not hold up another merchant's.
func (d *Dispatcher) releaseLocked(l *lane) {
	l.sending--
	d.sending--
	if len(d.slotWaits) == 0 {
		return
	}
	kept := d.slotWaits[:0]
	for _, w := range d.slotWaits {
		if d.fitsLocked(w.l) {
			w.l.sending++
			d.sending++
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(d.slotWaits[len(kept):])
	d.slotWaits = kept
}
