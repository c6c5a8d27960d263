// Due work kept by the Backend's DueStore: what each pending payment
// becomes by itself and when, fired by this process's scheduler on time
// or by whichever sweep finds it first.

package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/paymock/paymock"
)

// Batches of due payments read at a time.
const (
	sweepBatch    = 100
	sweepAllBatch = 500
	// advanceBatch is how many due payments an advance fires in time
	// order with this process's own work (webhook retries); any more fire
	// after it, each still stamped at its due instant.
	advanceBatch = 1000
)

// SweepInterval is how often each sandbox sweeps every real-clock
// merchant's due payments: an expiry fires at most this late on a replica
// other than the one that created the payment (the one that did fires it
// on time), or after a restart.
const SweepInterval = time.Second

// unknownMerchantGrace is how long a payment of a merchant this replica
// cannot find stays due before this replica fires it. Open-mode merchants
// are found in a shared store, so this is a merchant configured on
// another replica only (replicas should share their configuration): the
// replica that knows it, and so its webhook endpoints, sweeps it first;
// this one steps in when that one is gone, and records the event with no
// endpoint to deliver it to.
const unknownMerchantGrace = 5 * time.Second

// schedule records a new payment's fate in the DueStore: the first of its
// scenario's steps when that comes before its expiry (the store knows the
// expiry already). On real clocks this process's scheduler fires it on
// time too, stamped at its due instant like a sweep, which stands in when
// this process is gone; in either case the store's row lock makes one
// event. On frozen clocks a step due at once goes to the scheduler, so
// that it fires now rather than at the next advance.
func (e *Engine) schedule(ctx context.Context, m *paymock.Merchant, p paymock.Payment, sc Scenario, selected bool) {
	at, to := p.ExpiresAt, paymock.StatusExpired
	if selected {
		for _, st := range sc.Steps {
			// Strictly before: at the same instant the expiry wins, and of
			// two steps the first listed, as the scheduler orders them.
			if due := p.CreatedAt.Add(st.After); due.Before(at) {
				at, to = due, st.Do
			}
		}
	}
	id := p.ID
	due := paymock.DuePayment{MerchantID: m.ID, ID: id, At: at, To: to}
	fire := func() {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if _, err := e.fireDue(ctx, m, due); err != nil {
			e.log.Warn("due payment not fired; a sweep will", "merchant", m.ID, "payment", id, "error", err)
		}
	}
	realClock := e.clocks.Mode() == ClockReal
	if realClock {
		e.sched.At(m.ID, at, fire)
	}
	if at.Equal(p.ExpiresAt) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := e.due.SetDue(ctx, m.ID, id, at, to); err != nil {
		// This process still fires it, unless it stops first.
		e.log.WarnContext(ctx, "scenario step not stored; only this process will fire it",
			"merchant", m.ID, "payment", id, "scenario", sc.Name, "error", err)
		if !realClock {
			e.sched.At(m.ID, at, fire)
		}
		return
	}
	if !realClock && !at.After(p.CreatedAt) {
		e.sched.At(m.ID, at, fire)
	}
}

// queueDue puts the merchant's payments due by until into this process's
// scheduler, so that the advance that follows fires them and this
// process's webhook retries in one time order, with the clock at each
// one's instant.
func (e *Engine) queueDue(ctx context.Context, m *paymock.Merchant, until time.Time) error {
	ds, err := e.due.Due(ctx, m.ID, until, advanceBatch)
	if err != nil {
		return err
	}
	for _, p := range ds {
		id, to := p.ID, p.To
		e.sched.At(m.ID, p.At, func() {
			e.fire(m, id, to, "due")
			// The event's first sends go at its instant, before the
			// advance moves the clock on: the sends publishing woke may
			// not have started yet.
			e.hooks.RunDue(m.ID)
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			if err := e.hooks.Idle(ctx, m.ID); err != nil {
				e.log.Warn("an advance went on before a send ended", "merchant", m.ID, "error", err)
			}
		})
	}
	return nil
}

// sweep fires the merchant's payments due by until, in due order, each
// stamped at its due instant, and returns how many it moved. One found
// final already was fired by another replica, or completed by someone
// first: it does not count.
func (e *Engine) sweep(ctx context.Context, m *paymock.Merchant, until time.Time) (int, error) {
	fired := 0
	for {
		ds, err := e.due.Due(ctx, m.ID, until, sweepBatch)
		if err != nil {
			return fired, err
		}
		for _, d := range ds {
			ok, err := e.fireDue(ctx, m, d)
			if err != nil {
				return fired, err
			}
			if ok {
				fired++
			}
		}
		// Every payment listed has left the pending ones (fired here or
		// elsewhere), so the next batch is new.
		if len(ds) < sweepBatch {
			return fired, nil
		}
	}
}

// SweepAll fires the pending payments due on every real-mode merchant's
// clock, in due order, and returns how many it moved. Each sandbox calls
// it every SweepInterval; the store makes sure each payment moves once.
func (e *Engine) SweepAll(ctx context.Context) (int, error) {
	fired := 0
	for {
		now, base := e.clocks.RealNow()
		ds, err := e.due.DueAll(ctx, now, base, sweepAllBatch)
		if err != nil {
			return fired, err
		}
		handled := 0
		for _, d := range ds {
			m, ok := e.merchant(ctx, d)
			if !ok {
				continue
			}
			handled++
			moved, err := e.fireDue(ctx, m, d)
			if err != nil {
				return fired, err
			}
			if moved {
				fired++
			}
		}
		// Payments passed over stay pending and would come back first:
		// stop once a batch moved nothing.
		if len(ds) < sweepAllBatch || handled == 0 {
			return fired, nil
		}
	}
}

// merchant is the merchant of a due payment for SweepAll. One this
// replica does not know is passed over for unknownMerchantGrace, then
// stood in for by a merchant with only its id.
func (e *Engine) merchant(ctx context.Context, d paymock.DuePayment) (*paymock.Merchant, bool) {
	if e.merchants != nil {
		if m, ok := e.merchants.ByID(ctx, d.MerchantID); ok {
			return m, true
		}
	}
	if now, err := e.clocks.Now(ctx, d.MerchantID); err != nil || now.Sub(d.At) < unknownMerchantGrace {
		return nil, false
	}
	return &paymock.Merchant{ID: d.MerchantID, Name: d.MerchantID}, true
}

// fireDue moves one due payment. It reports false, with no error, when
// the payment was final or gone already.
func (e *Engine) fireDue(ctx context.Context, m *paymock.Merchant, d paymock.DuePayment) (bool, error) {
	_, err := e.transitionAt(ctx, m, d.ID, d.To, d.At)
	var de *paymock.Error
	switch {
	case err == nil:
		e.log.DebugContext(ctx, "due payment fired", "merchant", m.ID, "payment", d.ID, "to", d.To, "due", d.At)
		return true, nil
	case errors.As(err, &de) && (de.Type == paymock.Conflict || de.Type == paymock.NotFound):
		return false, nil
	}
	return false, err
}
