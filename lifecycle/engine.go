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

// IDGenerator makes prefixed ids.
type IDGenerator interface {
	New(prefix string) string
}

// Config is what an Engine is built from.
type Config struct {
	Logger    *slog.Logger
	Store     paymock.Store
	Clocks    *Clocks
	Scheduler *Scheduler
	IDs       IDGenerator
	Webhooks  *webhooks.Dispatcher
	Scenarios *Scenarios // from --scenarios; nil for built-ins and test cards only
	// Variants picks the wire form of the payment in each event body.
	Variants *paymock.Variants
}

// Engine moves payments from pending to their outcome. Every transition,
// whatever triggers it, goes through Transition: one store update, one
// event.
type Engine struct {
	log       *slog.Logger
	store     paymock.Store
	clocks    *Clocks
	sched     *Scheduler
	ids       IDGenerator
	hooks     *webhooks.Dispatcher
	scenarios *Scenarios
	variants  *paymock.Variants
}

// NewEngine returns the engine of cfg.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Clocks == nil || cfg.Scheduler == nil || cfg.IDs == nil || cfg.Webhooks == nil {
		return nil, errors.New("lifecycle: Store, Clocks, Scheduler, IDs and Webhooks are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Engine{log: cfg.Logger, store: cfg.Store, clocks: cfg.Clocks, sched: cfg.Scheduler, ids: cfg.IDs,
		hooks: cfg.Webhooks, scenarios: cfg.Scenarios, variants: cfg.Variants}, nil
}

// Now is the merchant's current time.
func (e *Engine) Now(m *paymock.Merchant) time.Time { return e.clocks.Now(m.ID) }

// ClockMode is the mode of every merchant's clock.
func (e *Engine) ClockMode() ClockMode { return e.clocks.Mode() }

// Created schedules what happens to a new payment by itself: its expiry
// and the steps of the scenario it triggers, if any.
func (e *Engine) Created(ctx context.Context, m *paymock.Merchant, p paymock.Payment, t Trigger) {
	id := p.ID
	e.sched.At(m.ID, p.ExpiresAt, func() { e.fire(m, id, paymock.StatusExpired, "expiry") })
	sc, ok := e.scenarios.Select(p, t)
	if !ok {
		if t.MetadataScenario != "" {
			e.log.WarnContext(ctx, "metadata.scenario names no scenario; the payment waits for an outcome",
				"merchant", m.ID, "payment", id, "scenario", t.MetadataScenario)
		}
		return
	}
	e.log.DebugContext(ctx, "scenario selected", "merchant", m.ID, "payment", id, "scenario", sc.Name, "source", sc.Source)
	for _, st := range sc.Steps {
		e.sched.At(m.ID, p.CreatedAt.Add(st.After), func() { e.fire(m, id, st.Do, "scenario "+sc.Name) })
	}
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
	now := e.clocks.Now(m.ID)
	typ, err := paymock.EventTypeFor(to)
	if err != nil {
		return paymock.Payment{}, err
	}
	p, err := e.store.Update(ctx, m.ID, id, func(p *paymock.Payment) error { return p.Transition(to, now) })
	if errors.Is(err, paymock.ErrNotFound) {
		return paymock.Payment{}, paymock.PaymentNotFound(id)
	}
	if err != nil {
		return p, err
	}
	ev, err := paymock.NewEvent(e.ids.New("evt"), typ, p, now, e.variants.Next())
	if err != nil {
		return p, fmt.Errorf("event for %s: %w", id, err)
	}
	if err := e.hooks.Publish(ctx, m, ev); err != nil {
		// The transition stands; the event is recorded as undelivered.
		e.log.WarnContext(ctx, "event not queued for delivery", "merchant", m.ID, "event", ev.ID, "error", err)
	}
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
	if p.Overdue(e.clocks.Now(m.ID)) && to != paymock.StatusExpired {
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
// caused to be attempted, so the caller sees their outcome.
func (e *Engine) Advance(ctx context.Context, m *paymock.Merchant, d time.Duration) (time.Time, int, error) {
	// Deliveries already under way settle first, so the retries they
	// schedule are due from their own attempt and fire in this advance.
	if err := e.hooks.Idle(ctx, m.ID); err != nil {
		return e.clocks.Now(m.ID), 0, fmt.Errorf("wait for deliveries: %w", err)
	}
	now, fired := e.sched.Advance(m.ID, d)
	if err := e.hooks.Idle(ctx, m.ID); err != nil {
		return now, fired, fmt.Errorf("wait for deliveries: %w", err)
	}
	return now, fired, nil
}

// Reset forgets a merchant's payments, events, schedule and clock.
func (e *Engine) Reset(ctx context.Context, m *paymock.Merchant) error {
	e.sched.Reset(m.ID)
	e.hooks.Reset(m.ID)
	e.clocks.Reset(m.ID)
	if err := e.store.Reset(ctx, m.ID); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

// Events lists a merchant's events, newest first, with their deliveries.
func (e *Engine) Events(m *paymock.Merchant, offset, limit int) ([]webhooks.EventRecord, int) {
	return e.hooks.Events(m.ID, offset, limit)
}

// SendTest sends a signed webhook.test event to one endpoint of m and
// waits for its one attempt (or ctx).
func (e *Engine) SendTest(ctx context.Context, m *paymock.Merchant, ep paymock.WebhookEndpoint) (webhooks.EventRecord, error) {
	return e.hooks.SendTest(ctx, m, ep)
}

// Redeliver sends an event again to every endpoint.
func (e *Engine) Redeliver(ctx context.Context, m *paymock.Merchant, eventID string) (webhooks.EventRecord, error) {
	return e.hooks.Redeliver(ctx, m.ID, eventID)
}
