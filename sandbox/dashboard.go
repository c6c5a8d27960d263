// The dashboard's view of the sandbox: thin adapters from the dashboard's
// small interfaces to the merchants, the lifecycle, the webhook journal
// and the request journal, so the pages call the same domain code as the
// control API.

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/merchants"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/webhooks"
)

// dashboardParts are what the dashboard's adapters read.
type dashboardParts struct {
	merchants *merchants.Registry
	engine    *lifecycle.Engine
	hooks     *webhooks.Dispatcher
	server    *mockserver.Server
}

// clockView is the merchant's clock as the dashboard shows it.
type clockView struct{ *lifecycle.Engine }

func (c clockView) Mode() string { return string(c.ClockMode()) }

// eventsView lists a payment's events with their deliveries.
type eventsView struct{ dashboardParts }

func (v eventsView) PaymentEvents(ctx context.Context, m *paymock.Merchant, paymentID string) ([]dashboard.Event, error) {
	recs, _, err := v.engine.Events(ctx, m, 0, 0)
	if err != nil {
		return nil, err
	}
	var out []dashboard.Event
	for i := len(recs) - 1; i >= 0; i-- { // oldest first: a timeline
		r := recs[i]
		if r.PaymentID != paymentID {
			continue
		}
		ev := dashboard.Event{ID: r.ID, Type: r.Type, CreatedAt: r.CreatedAt, PaymentID: r.PaymentID, Payload: r.Payload}
		for _, d := range r.Deliveries {
			ev.Deliveries = append(ev.Deliveries, deliveryView(d))
		}
		out = append(out, ev)
	}
	return out, nil
}

func (v eventsView) Redeliver(ctx context.Context, m *paymock.Merchant, eventID string) error {
	_, err := v.engine.Redeliver(ctx, m, eventID)
	return err
}

func deliveryView(d paymock.DeliveryRecord) dashboard.Delivery {
	out := dashboard.Delivery{Round: d.Round, URL: d.URL, State: string(d.State), Error: d.Error, NextAttemptAt: d.NextAttemptAt}
	for _, a := range d.Attempts {
		v := dashboard.Attempt{Attempt: a.Attempt, At: a.At, StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.DurationMS}
		if f := a.Fault; f != nil {
			v.Fault = "injected by fault rule " + f.RuleID + ": " + f.Effect
		}
		out.Attempts = append(out.Attempts, v)
	}
	return out
}

// keysView is the merchant's API keys.
type keysView struct{ dashboardParts }

func (v keysView) ListKeys(ctx context.Context, m *paymock.Merchant) ([]dashboard.APIKey, error) {
	keys, err := v.merchants.Keys(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.APIKey, len(keys))
	for i, k := range keys {
		out[i] = keyView(k)
	}
	return out, nil
}

func keyView(k paymock.APIKey) dashboard.APIKey {
	return dashboard.APIKey{ID: k.ID, Masked: k.Masked, Source: string(k.Source), Created: k.Created}
}

func (v keysView) CreateKey(ctx context.Context, m *paymock.Merchant) (dashboard.APIKey, string, error) {
	k, err := v.merchants.CreateKey(ctx, m.ID)
	if err != nil {
		return dashboard.APIKey{}, "", err
	}
	return keyView(k.APIKey), k.Key, nil
}

func (v keysView) RevokeKey(ctx context.Context, m *paymock.Merchant, id string) error {
	return v.merchants.RevokeKey(ctx, m.ID, id)
}

// endpointsView is the merchant's webhook endpoints.
type endpointsView struct{ dashboardParts }

func (v endpointsView) ListEndpoints(ctx context.Context, m *paymock.Merchant) ([]dashboard.Endpoint, error) {
	eps, err := v.merchants.Endpoints(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.Endpoint, len(eps))
	for i, e := range eps {
		out[i] = dashboard.Endpoint{ID: e.ID, URL: e.URL, Disabled: e.Disabled, ReadOnly: e.ReadOnly(),
			SharedSecret: e.Source == paymock.EndpointDefault, Created: e.Created}
	}
	return out, nil
}

func (v endpointsView) AddEndpoint(ctx context.Context, m *paymock.Merchant, url string) (dashboard.Endpoint, error) {
	e, err := v.merchants.AddEndpoint(ctx, m.ID, url)
	if err != nil {
		return dashboard.Endpoint{}, err
	}
	return dashboard.Endpoint{ID: e.ID, URL: e.URL, Disabled: e.Disabled, ReadOnly: e.ReadOnly(),
		SharedSecret: e.Source == paymock.EndpointDefault, Created: e.Created}, nil
}

func (v endpointsView) EndpointSecret(ctx context.Context, m *paymock.Merchant, id string) (string, error) {
	e, err := v.merchants.Endpoint(ctx, m.ID, id)
	return e.Secret, err
}

func (v endpointsView) SetEndpointDisabled(ctx context.Context, m *paymock.Merchant, id string, disabled bool) error {
	var err error
	if disabled {
		_, err = v.merchants.DisableEndpoint(ctx, m.ID, id)
	} else {
		_, err = v.merchants.EnableEndpoint(ctx, m.ID, id)
	}
	return err
}

func (v endpointsView) DeleteEndpoint(ctx context.Context, m *paymock.Merchant, id string) error {
	return v.merchants.DeleteEndpoint(ctx, m.ID, id)
}

// SendTest sends a signed webhook.test event and waits a little for its
// attempt, so the page shows it delivered or failed rather than pending.
func (v endpointsView) SendTest(ctx context.Context, m *paymock.Merchant, id string) (string, error) {
	e, err := v.merchants.Signing(ctx, m.ID, id)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rec, err := v.hooks.SendTest(ctx, m, e)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return "", err
	}
	return rec.ID, nil
}

func (v endpointsView) EndpointDeliveries(ctx context.Context, m *paymock.Merchant, id string, limit int) ([]dashboard.EndpointDelivery, error) {
	if _, err := v.merchants.Endpoint(ctx, m.ID, id); err != nil {
		return nil, err
	}
	recs, _, err := v.hooks.EndpointDeliveries(ctx, m.ID, id, 0, limit)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.EndpointDelivery, len(recs))
	for i, r := range recs {
		out[i] = dashboard.EndpointDelivery{EventID: r.EventID, EventType: r.EventType, PaymentID: r.PaymentID, Delivery: deliveryView(r.DeliveryRecord)}
	}
	return out, nil
}

// journalView is the request journal and the report.
type journalView struct{ dashboardParts }

func (v journalView) Requests(ctx context.Context, m *paymock.Merchant, onlyViolations bool, offset, limit int) ([]dashboard.Request, int, error) {
	items, total, err := v.server.Requests(ctx, m.ID, onlyViolations, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]dashboard.Request, len(items))
	for i, e := range items {
		out[i] = dashboard.Request{ID: e.ID, At: e.At, Method: e.Method, Path: e.Path, Query: e.Query, Operation: e.Operation,
			Status: e.Status, DurationMS: e.DurationMS, Variant: e.Variant, Violations: e.Violations, InjectedBy: e.InjectedBy}
	}
	return out, total, nil
}

func (v journalView) Report(ctx context.Context, m *paymock.Merchant) (dashboard.Report, error) {
	r, err := v.server.Report(ctx, m.ID)
	if err != nil {
		return dashboard.Report{}, err
	}
	out := dashboard.Report{Calls: r.Calls, ViolatingCalls: r.ViolatingCalls, UnmatchedCalls: r.UnmatchedCalls,
		Coverage: dashboard.ReportCoverage(r.Coverage)}
	for _, o := range r.Operations {
		op := dashboard.ReportOperation{OperationID: o.OperationID, Method: o.Method, Path: o.Path, Calls: o.Calls, ViolatingCalls: o.ViolatingCalls,
			UnlistedViolations: o.UnlistedViolations}
		for _, st := range o.Statuses {
			op.Statuses = append(op.Statuses, dashboard.ReportStatus(st))
		}
		for _, vi := range o.Violations {
			op.Violations = append(op.Violations, dashboard.ReportViolation{Param: vi.Param, Code: vi.Code, Message: vi.Message, Count: vi.Count})
		}
		out.Operations = append(out.Operations, op)
	}
	return out, nil
}

// mountDashboard builds the developer section over the sandbox's parts
// and serves it at dashboard.Prefix.
func mountDashboard(p dashboardParts, store paymock.Store, publicURL string, logger *slog.Logger) error {
	d, err := dashboard.New(dashboard.Config{
		Auth:          p.merchants,
		Payments:      store,
		Lifecycle:     p.engine,
		Clock:         clockView{p.engine},
		Events:        eventsView{p},
		Keys:          keysView{p},
		Endpoints:     endpointsView{p},
		Journal:       journalView{p},
		PublicURL:     publicURL,
		StylesheetURL: p.server.StylesheetURL(),
		Logger:        logger,
	})
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	p.server.Mount(dashboard.Prefix, d)
	return nil
}
