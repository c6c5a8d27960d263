// The lifecycle engine: the state machine of a payment, what moves it
// (control calls, pages, scenario steps, expiry) and the event each move
// emits.

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/webhooks"
)

// Config is what an Engine is built from.
type Config struct {
	Logger    *slog.Logger
	Store     paymock.Store
	Clocks    *Clocks
	Scheduler *Scheduler
	// Due knows when each pending payment falls due, and Advances takes
	// one merchant's advances in turn: the Backend's Due and Advances.
	Due      paymock.DueStore
	Advances paymock.AdvanceLocker
	IDs      *paymock.MerchantIDs
	Webhooks *webhooks.Dispatcher
	// Events stores each transition with its event (the Backend's).
	Events    paymock.EventStore
	Scenarios *Scenarios // from --scenarios; nil for built-ins and test cards only
	// Variants picks the wire form of the payment in each event body.
	Variants *paymock.Variants
	// Merchants finds a merchant by id, for sweeping every merchant's due
	// payments (SweepAll); nil finds none.
	Merchants MerchantFinder
}

// MerchantFinder finds a merchant by id (*merchants.Registry does).
type MerchantFinder interface {
	ByID(ctx context.Context, id string) (*paymock.Merchant, bool)
}

// Engine moves payments from pending to their outcome. Every transition,
// whatever triggers it, goes through Transition: one store update, one
// event.
type Engine struct {
	log       *slog.Logger
	store     paymock.Store
	clocks    *Clocks
	sched     *Scheduler
	ids       *paymock.MerchantIDs
	hooks     *webhooks.Dispatcher
	scenarios *Scenarios
	variants  *paymock.Variants
	merchants MerchantFinder
	// due holds expiries and scenario steps, for whoever sweeps first;
	// the scheduler brings them due in this process (see sweep.go).
	due paymock.DueStore
	// events keeps each transition's event with it.
	events paymock.EventStore
	// advances takes a merchant's advances in turn, across replicas on a
	// shared backend.
	advances paymock.AdvanceLocker
	// unknownScenario bounds the warning of a metadata.scenario that
	// names no scenario, which a merchant can set off on every create.
	unknownScenario *warnLimit
}

// NewEngine returns the engine of cfg.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Clocks == nil || cfg.Scheduler == nil || cfg.Due == nil || cfg.Advances == nil ||
		cfg.IDs == nil || cfg.Webhooks == nil || cfg.Events == nil {
		return nil, errors.New("lifecycle: Store, Clocks, Scheduler, Due, Advances, IDs, Webhooks and Events are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{log: cfg.Logger, store: cfg.Store, clocks: cfg.Clocks, sched: cfg.Scheduler, ids: cfg.IDs,
		hooks: cfg.Webhooks, events: cfg.Events, scenarios: cfg.Scenarios, variants: cfg.Variants, merchants: cfg.Merchants,
		due: cfg.Due, advances: cfg.Advances}
	realNow := func() time.Time { t, _ := e.clocks.RealNow(); return t }
	e.unknownScenario = newWarnLimit(realNow, warnInterval, warnMerchants)
	return e, nil
}

// Now is the merchant's current time.
func (e *Engine) Now(ctx context.Context, m *paymock.Merchant) (time.Time, error) {
	return e.clocks.Now(ctx, m.ID)
}

// ClockMode is the mode of every merchant's clock.
func (e *Engine) ClockMode() ClockMode { return e.clocks.Mode() }

// Created schedules what happens to a new payment by itself: its expiry
// or, when it comes first, the first step of the scenario it triggers
// (see sweep.go).
func (e *Engine) Created(ctx context.Context, m *paymock.Merchant, p paymock.Payment, t Trigger) {
	id := p.ID
	sc, ok := e.scenarios.Select(p, t)
	if !ok && t.MetadataScenario != "" {
		e.warnUnknownScenario(ctx, m, id, t.MetadataScenario)
	}
	if ok {
		e.log.DebugContext(ctx, "scenario selected", "merchant", m.ID, "payment", id, "scenario", sc.Name, "source", sc.Source)
	}
	e.schedule(ctx, m, p, sc, ok)
}

// warnUnknownScenario tells the honest merchant who mistyped a scenario
// name, at most once a minute each and with a bounded prefix of the name,
// so that a merchant creating at request rate cannot flood the log.
func (e *Engine) warnUnknownScenario(ctx context.Context, m *paymock.Merchant, paymentID, name string) {
	ok, suppressed, untracked := e.unknownScenario.allow(m.ID)
	if !ok {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	shown, cut := truncated(name, warnValueBytes)
	attrs = append(attrs, slog.String("merchant", m.ID), slog.String("payment", paymentID), slog.String("scenario", shown))
	if cut {
		attrs = append(attrs, slog.Int("scenario_truncated_from_bytes", len(name)))
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	if untracked > 0 {
		attrs = append(attrs, slog.Int("suppressed_untracked", untracked))
	}
	e.log.LogAttrs(ctx, slog.LevelWarn, "metadata.scenario names no scenario; the payment waits for an outcome", attrs...)
}

// fire is a scheduled transition: one that finds the payment already
// final (completed before it expired, say) has nothing to do.
func (e *Engine) fire(m *paymock.Merchant, id string, to paymock.Status, why string) {
	_, err := e.Transition(context.Background(), m, id, to)
	var de *paymock.Error
	switch {
	case err == nil:
		e.log.Debug("scheduled transition", "merchant", m.ID, "payment", id, "to", to, "by", why)
	case errors.As(err, &de) && (de.Type == paymock.Conflict || de.Type == paymock.NotFound):
	default:
		e.log.Error("scheduled transition failed", "merchant", m.ID, "payment", id, "to", to, "by", why, "error", err)
	}
}

// Transition moves a pending payment to a final status on the merchant's
// clock and emits its event. A final payment is a conflict_error; an
// unknown one not_found_error.
func (e *Engine) Transition(ctx context.Context, m *paymock.Merchant, id string, to paymock.Status) (paymock.Payment, error) {
	now, err := e.clocks.Now(ctx, m.ID)
	if err != nil {
		return paymock.Payment{}, err
	}
	return e.transitionAt(ctx, m, id, to, now)
}

// transitionAt is Transition stamped at now, an instant of the merchant's
// clock: a sweep stamps what it fires at the instant it fell due.
func (e *Engine) transitionAt(ctx context.Context, m *paymock.Merchant, id string, to paymock.Status, now time.Time) (paymock.Payment, error) {
	typ, err := paymock.EventTypeFor(to)
	if err != nil {
		return paymock.Payment{}, err
	}
	// The event and its deliveries are stored in the transition's own
	// step (a transaction in PostgreSQL), so neither exists without the
	// other. Their endpoints and faults are looked up before it, so that
	// no other query waits inside it. The store serialises updates of one
	// payment and a final payment refuses another transition, so two
	// replicas firing the same due payment make one event.
	round, err := e.hooks.Prepare(ctx, m, typ)
	if err != nil {
		return paymock.Payment{}, err
	}
	draw, err := e.ids.Draw(ctx, m)
	if err != nil {
		return paymock.Payment{}, err
	}
	p, o, ids, err := e.events.UpdateWithEvent(ctx, m.ID, id,
		func(p *paymock.Payment) error { return p.Transition(to, now) },
		func(p paymock.Payment) (paymock.Outgoing, error) {
			ev, err := paymock.NewEvent(draw.ID("evt"), typ, p, now, e.variants.Next())
			if err != nil {
				return paymock.Outgoing{}, fmt.Errorf("event for %s: %w", id, err)
			}
			ev.MerchantID = m.ID
			return round.Outgoing(ev), nil
		})
	if errors.Is(err, paymock.ErrNotFound) {
		return paymock.Payment{}, paymock.PaymentNotFound(id)
	}
	if err != nil {
		return p, err
	}
	e.hooks.Stored(m.ID, o, ids)
	return p, nil
}

// Act is an outcome asked for by a person (a hosted page's button, the
// dashboard); to "" asks for none (a page's cancel). A payment whose
// expiry has come on the merchant's clock while the person looked at it,
// before the scheduler got to it, expires now, once, and what was asked is
// refused like on any final payment: a conflict_error.
func (e *Engine) Act(ctx context.Context, m *paymock.Merchant, id string, to paymock.Status) (paymock.Payment, error) {
	p, err := e.store.Get(ctx, m.ID, id)
	if errors.Is(err, paymock.ErrNotFound) {
		return paymock.Payment{}, paymock.PaymentNotFound(id)
	}
	if err != nil {
		return p, err
	}
	now, err := e.clocks.Now(ctx, m.ID)
	if err != nil {
		return p, err
	}
	if p.Overdue(now) && to != paymock.StatusExpired {
		if p, err = e.Transition(ctx, m, id, paymock.StatusExpired); err != nil {
			return p, err
		}
		return p, &paymock.Error{Type: paymock.Conflict, Code: "payment_expired",
			Message: "payment " + id + " expired before the action could be taken"}
	}
	if to == "" {
		return p, nil
	}
	return e.Transition(ctx, m, id, to)
}

// Advance moves the merchant's clock forward, fires everything that fell
// due on the way in time order, and waits for the webhook deliveries that
// caused to be attempted, so the caller sees their outcome. The payments
// due by then, whichever replica created them, join this process's
// scheduler for the advance (see queueDue). An advance that would take
// the clock past what it can show is an invalid_request_error naming
// seconds, and moves nothing.
func (e *Engine) Advance(ctx context.Context, m *paymock.Merchant, d time.Duration) (time.Time, int, error) {
	if d < 0 {
		return time.Time{}, 0, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	unlock, err := e.advances.LockAdvance(ctx, m.ID)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("wait for another advance: %w", err)
	}
	defer unlock()
	now, err := e.clocks.Now(ctx, m.ID)
	if err != nil {
		return now, 0, err
	}
	target := now.Add(d)
	if !e.clocks.CanShow(target) {
		return now, 0, paymock.Invalid(paymock.Violation{Param: "seconds", Code: "parameter_invalid",
			Message: fmt.Sprintf("the clock shows %s and cannot move %d seconds on: a clock shows at most %s",
				paymock.FormatTime(now), d/time.Second, e.lastShown())})
	}
	// Deliveries already under way settle first, on every replica, so the
	// retries they schedule are due from their own attempt and fire in
	// this advance.
	if err := e.hooks.Settle(ctx, m.ID); err != nil {
		return now, 0, fmt.Errorf("wait for deliveries: %w", err)
	}
	if err := e.queueDue(ctx, m, target); err != nil {
		return now, 0, err
	}
	// The webhook sends due by then too, whichever replica scheduled
	// them, so that they go in time order with the payments.
	if err := e.hooks.DueDeliveries(ctx, m.ID, target); err != nil {
		return now, 0, err
	}
	fired, err := e.sched.Advance(ctx, m.ID, target)
	if err != nil {
		return now, fired, err
	}
	// Webhook sends still due by now (past the batch registered, or
	// scheduled meanwhile), whichever replica made them.
	e.hooks.RunDue(m.ID)
	if now, err = e.clocks.Now(ctx, m.ID); err != nil {
		return now, fired, err
	}
	// What was past the queued batch, or created on another replica
	// while this advance ran.
	n, err := e.sweep(ctx, m, now)
	fired += n
	if err != nil {
		return now, fired, err
	}
	if err := e.hooks.Idle(ctx, m.ID); err != nil {
		return now, fired, fmt.Errorf("wait for deliveries: %w", err)
	}
	return now, fired, nil
}

// lastShown is what the error of an advance too far names: the last
// instant, or on a real clock the 292 years on from the real time that
// its offset holds, when that comes first.
func (e *Engine) lastShown() string {
	last := LastInstant()
	if e.clocks.Mode() == ClockReal {
		real, _ := e.clocks.RealNow()
		if r := real.Add(maxDuration).Truncate(time.Second); r.Before(last) {
			last = r
		}
	}
	return paymock.FormatTime(last)
}

// Reset forgets a merchant's payments, events, schedule and clock.
func (e *Engine) Reset(ctx context.Context, m *paymock.Merchant) error {
	e.sched.Reset(m.ID)
	if err := e.hooks.Reset(ctx, m.ID); err != nil {
		return err
	}
	if err := e.clocks.Reset(ctx, m.ID); err != nil {
		return fmt.Errorf("reset clock: %w", err)
	}
	if err := e.store.Reset(ctx, m.ID); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

// Events lists a merchant's events, newest first, with their deliveries.
func (e *Engine) Events(ctx context.Context, m *paymock.Merchant, offset, limit int) ([]paymock.EventRecord, int, error) {
	return e.hooks.Events(ctx, m.ID, offset, limit)
}

// SendTest sends a signed webhook.test event to one endpoint of m and
// waits for its one attempt (or ctx).
func (e *Engine) SendTest(ctx context.Context, m *paymock.Merchant, ep paymock.WebhookEndpoint) (paymock.EventRecord, error) {
	return e.hooks.SendTest(ctx, m, ep)
}

// Redeliver sends an event again to every endpoint.
func (e *Engine) Redeliver(ctx context.Context, m *paymock.Merchant, eventID string) (paymock.EventRecord, error) {
	return e.hooks.Redeliver(ctx, m.ID, eventID)
}
