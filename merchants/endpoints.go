// Webhook endpoints: the configured ones, the server-wide defaults and
// those a merchant adds at run time, and which of them receive events now.

package merchants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymock/paymock"
)

// endpointRecord is a configured or default endpoint; it never changes.
type endpointRecord struct {
	id      string
	url     string
	secret  string
	source  paymock.EndpointSource
	created time.Time
}

// endpoint is the endpoint as a merchant sees it. A default endpoint's
// secret is the operator's, the same for every merchant that gets the
// endpoint: shown whole, any merchant could sign events that every other
// merchant's receiver accepts. It is masked (MaskKey: "whsec_…" and the
// last four characters); deliveries are signed with it whole.
func (e *endpointRecord) endpoint() paymock.Endpoint {
	secret := e.secret
	if e.source == paymock.EndpointDefault {
		secret = paymock.MaskKey(secret)
	}
	return paymock.Endpoint{ID: e.id, URL: e.url, Secret: secret, Source: e.source, Created: e.created}
}

func added(s paymock.StoredEndpoint) paymock.Endpoint {
	return paymock.Endpoint{ID: s.ID, URL: s.URL, Secret: s.Secret, Source: paymock.EndpointAdded,
		Disabled: s.Disabled, Created: s.Created}
}

// fixedEndpoints are a merchant's read-only endpoints: its configured
// ones, or the defaults when it has none.
func (r *Registry) fixedEndpoints(merchantID string) []*endpointRecord {
	if f := r.config[merchantID]; f != nil && len(f.endpoints) > 0 {
		return f.endpoints
	}
	return r.defaults
}

// AddEndpoint adds an endpoint for a merchant, with a secret generated
// from crypto/rand, and returns it (secret included). A bad URL, or one
// whose host the egress policy denies, is a *paymock.Error whose
// violation has param "url"; so is a merchant
// already at paymock.MaxAddedEndpoints (code endpoint_limit). An unknown
// merchant wraps paymock.ErrNotFound. Added endpoints receive the
// merchant's events alongside the configured or default ones.
func (r *Registry) AddEndpoint(ctx context.Context, merchantID, rawURL string) (paymock.Endpoint, error) {
	secret, err := paymock.NewWebhookSecret()
	if err != nil {
		return paymock.Endpoint{}, err
	}
	// The secret is a good one: only the URL can be wrong.
	if vs := (paymock.WebhookEndpoint{URL: rawURL, Secret: secret}).Validate(); len(vs) > 0 {
		return paymock.Endpoint{}, paymock.Invalid(vs...)
	}
	e, err := r.entryOf(ctx, merchantID)
	if err != nil {
		return paymock.Endpoint{}, err
	}
	// Checked again at every connection: this refusal is the clear answer,
	// the dialler's the guarantee.
	if err := r.egress.CheckURL(ctx, rawURL); err != nil {
		return paymock.Endpoint{}, paymock.Invalid(paymock.Violation{Param: "url", Code: "url_denied",
			Message: "url: " + err.Error()})
	}
	s := paymock.StoredEndpoint{MerchantID: merchantID, URL: rawURL, Secret: secret, Created: stamp(r.now())}
	for range 8 {
		if s.ID, err = r.ids.New(ctx, &e.Merchant, endpointIDPrefix); err != nil {
			return paymock.Endpoint{}, fmt.Errorf("add webhook endpoint: %w", err)
		}
		err := r.store.AddEndpoint(ctx, s, paymock.MaxAddedEndpoints)
		switch {
		case err == nil:
			return added(s), nil
		case errors.Is(err, paymock.ErrLimitReached):
			return paymock.Endpoint{}, endpointLimit()
		case !errors.Is(err, paymock.ErrDuplicate):
			return paymock.Endpoint{}, fmt.Errorf("add webhook endpoint: %w", err)
		}
	}
	return paymock.Endpoint{}, fmt.Errorf("add webhook endpoint: no free id after 8 draws")
}

// endpointLimit is the refusal of an endpoint past
// paymock.MaxAddedEndpoints.
func endpointLimit() *paymock.Error {
	return paymock.Invalid(paymock.Violation{Param: "url", Code: "endpoint_limit",
		Message: fmt.Sprintf("a merchant can add at most %d webhook endpoints; delete one first", paymock.MaxAddedEndpoints)})
}

// Endpoints lists a merchant's endpoints: configured ones, then the
// defaults when it has no configured ones, then added ones oldest first.
// The defaults' secret is masked: it is the operator's, not the merchant's.
// An unknown merchant has none. Only a store that cannot be read makes an
// error (wrapping paymock.ErrUnavailable).
func (r *Registry) Endpoints(ctx context.Context, merchantID string) ([]paymock.Endpoint, error) {
	_, err := r.entryOf(ctx, merchantID)
	if errors.Is(err, paymock.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	var out []paymock.Endpoint
	for _, e := range r.fixedEndpoints(merchantID) {
		out = append(out, e.endpoint())
	}
	stored, err := r.store.Endpoints(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	for _, s := range stored {
		out = append(out, added(s))
	}
	return out, nil
}

// Endpoint returns one of a merchant's endpoints as Endpoints shows it;
// another merchant's, or an unknown id, wraps paymock.ErrNotFound.
func (r *Registry) Endpoint(ctx context.Context, merchantID, endpointID string) (paymock.Endpoint, error) {
	f, err := r.fixedEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return paymock.Endpoint{}, err
	}
	if f != nil {
		return f.endpoint(), nil
	}
	stored, err := r.store.Endpoints(ctx, merchantID)
	if err != nil {
		return paymock.Endpoint{}, fmt.Errorf("read webhook endpoint: %w", err)
	}
	for _, s := range stored {
		if s.ID == endpointID {
			return added(s), nil
		}
	}
	return paymock.Endpoint{}, fmt.Errorf("no such webhook endpoint: %w", paymock.ErrNotFound)
}

// Signing returns one of a merchant's endpoints as deliveries to it are
// made, its whole secret included, for a test event; Endpoint masks a
// default endpoint's secret. Another merchant's, or an unknown id, wraps
// paymock.ErrNotFound.
func (r *Registry) Signing(ctx context.Context, merchantID, endpointID string) (paymock.WebhookEndpoint, error) {
	f, err := r.fixedEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return paymock.WebhookEndpoint{}, err
	}
	if f != nil {
		return paymock.WebhookEndpoint{ID: f.id, URL: f.url, Secret: f.secret}, nil
	}
	e, err := r.Endpoint(ctx, merchantID, endpointID)
	if err != nil {
		return paymock.WebhookEndpoint{}, err
	}
	return paymock.WebhookEndpoint{ID: e.ID, URL: e.URL, Secret: e.Secret}, nil
}

// fixedEndpoint finds a configured or default endpoint of a merchant; nil
// when the id is none of them. An unknown merchant wraps
// paymock.ErrNotFound.
func (r *Registry) fixedEndpoint(ctx context.Context, merchantID, endpointID string) (*endpointRecord, error) {
	if _, err := r.entryOf(ctx, merchantID); err != nil {
		return nil, err
	}
	for _, e := range r.fixedEndpoints(merchantID) {
		if e.id == endpointID {
			return e, nil
		}
	}
	return nil, nil
}

// DisableEndpoint stops deliveries to an added endpoint until it is
// enabled again; deliveries already queued are the dispatcher's. A
// read-only endpoint is a *paymock.Error (code endpoint_read_only).
func (r *Registry) DisableEndpoint(ctx context.Context, merchantID, endpointID string) (paymock.Endpoint, error) {
	return r.setDisabled(ctx, merchantID, endpointID, true)
}

// EnableEndpoint undoes DisableEndpoint.
func (r *Registry) EnableEndpoint(ctx context.Context, merchantID, endpointID string) (paymock.Endpoint, error) {
	return r.setDisabled(ctx, merchantID, endpointID, false)
}

func (r *Registry) setDisabled(ctx context.Context, merchantID, endpointID string, disabled bool) (paymock.Endpoint, error) {
	f, err := r.fixedEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return paymock.Endpoint{}, err
	}
	if f != nil {
		verb := "disabled"
		if !disabled {
			verb = "enabled"
		}
		return paymock.Endpoint{}, readOnly(f, verb)
	}
	s, ok, err := r.store.SetEndpointDisabled(ctx, merchantID, endpointID, disabled)
	if err != nil {
		return paymock.Endpoint{}, fmt.Errorf("change webhook endpoint: %w", err)
	}
	if !ok {
		return paymock.Endpoint{}, fmt.Errorf("no such webhook endpoint: %w", paymock.ErrNotFound)
	}
	return added(s), nil
}

// DeleteEndpoint removes an added endpoint. A read-only endpoint is a
// *paymock.Error (code endpoint_read_only); an unknown id wraps
// paymock.ErrNotFound.
func (r *Registry) DeleteEndpoint(ctx context.Context, merchantID, endpointID string) error {
	f, err := r.fixedEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return err
	}
	if f != nil {
		return readOnly(f, "deleted")
	}
	ok, err := r.store.DeleteEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if !ok {
		return fmt.Errorf("no such webhook endpoint: %w", paymock.ErrNotFound)
	}
	return nil
}

func readOnly(e *endpointRecord, verb string) *paymock.Error {
	where := "the config file"
	if e.source == paymock.EndpointDefault {
		where = "--webhook-url"
	}
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "endpoint_read_only", Param: "id",
		Message: fmt.Sprintf("webhook endpoint %s comes from %s and cannot be %s here; change the configuration and restart instead", e.id, where, verb)}
}

// Deliverable returns the endpoints a merchant's events go to now: the
// enabled ones of Endpoints, each with its ID, in that order. An unknown
// merchant has none. The added ones are read from the store at each call,
// so that one added, disabled or deleted on any replica counts at once.
// When the store cannot be read, the added endpoints read at the
// merchant's last event stand in, so that an event fired in a brief
// outage still reaches them.
func (r *Registry) Deliverable(ctx context.Context, merchantID string) []paymock.WebhookEndpoint {
	if _, err := r.entryOf(ctx, merchantID); err != nil {
		if !errors.Is(err, paymock.ErrNotFound) {
			r.log.Warn("webhook endpoints not read: the event goes to none", "merchant", merchantID, "error", err)
		}
		return nil
	}
	var out []paymock.WebhookEndpoint
	for _, e := range r.fixedEndpoints(merchantID) {
		out = append(out, paymock.WebhookEndpoint{ID: e.id, URL: e.url, Secret: e.secret})
	}
	stored, err := r.store.Endpoints(ctx, merchantID)
	if err != nil {
		r.mu.RLock()
		last := r.lastAdded[merchantID]
		r.mu.RUnlock()
		r.log.Warn("added webhook endpoints not read: the event goes to those read at the last event",
			"merchant", merchantID, "endpoints", len(last), "error", err)
		return append(out, last...)
	}
	var enabled []paymock.WebhookEndpoint
	for _, s := range stored {
		if !s.Disabled {
			enabled = append(enabled, paymock.WebhookEndpoint{ID: s.ID, URL: s.URL, Secret: s.Secret})
		}
	}
	r.rememberAdded(merchantID, enabled)
	return append(out, enabled...)
}

// rememberAdded keeps the enabled added endpoints just read, for
// Deliverable to fall back on; it writes only when they changed, and only
// for a merchant still held (one forgotten meanwhile stays forgotten).
func (r *Registry) rememberAdded(merchantID string, enabled []paymock.WebhookEndpoint) {
	r.mu.RLock()
	same := slices.Equal(r.lastAdded[merchantID], enabled)
	r.mu.RUnlock()
	if same {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.byID[merchantID] == nil:
	case len(enabled) == 0:
		delete(r.lastAdded, merchantID)
	default:
		r.lastAdded[merchantID] = enabled
	}
}
