// The developer section over the control API: API keys and webhook
// endpoints made at run time. The dashboard calls the same domain code.

package mockserver

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// Developers holds the keys and webhook endpoints merchants make at run
// time (implemented by *merchants.Registry). Any method may fail with an
// error wrapping paymock.ErrUnavailable when its store cannot be reached:
// a 503.
type Developers interface {
	CreateKey(ctx context.Context, merchantID string) (paymock.NewKey, error)
	Keys(ctx context.Context, merchantID string) ([]paymock.APIKey, error)
	RevokeKey(ctx context.Context, merchantID, keyID string) error
	AddEndpoint(ctx context.Context, merchantID, url string) (paymock.Endpoint, error)
	Endpoints(ctx context.Context, merchantID string) ([]paymock.Endpoint, error)
	Endpoint(ctx context.Context, merchantID, endpointID string) (paymock.Endpoint, error)
	DeleteEndpoint(ctx context.Context, merchantID, endpointID string) error
	// Signing is an endpoint with its whole secret, which Endpoint masks
	// when it is the operator's: what a test event is signed with.
	Signing(ctx context.Context, merchantID, endpointID string) (paymock.WebhookEndpoint, error)
}

// apiKeyJSON is an API key as the control API shows it: masked, except
// in the answer that creates it.
type apiKeyJSON struct {
	ID        string `json:"id"`
	Key       string `json:"key,omitempty"`
	Masked    string `json:"masked"`
	Source    string `json:"source"`
	CreatedAt string `json:"created_at"`
}

func keyJSON(k paymock.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, Masked: k.Masked, Source: string(k.Source), CreatedAt: formatTime(k.Created)}
}

// formatTime is a timestamp on the wire, or "" for none.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return paymock.FormatTime(t)
}

// listAPIKeys handles GET /_sandbox/api-keys.
func (s *Server) listAPIKeys(c *echo.Context) error {
	keys, err := s.developers.Keys(c.Request().Context(), merchantOf(c).ID)
	if err != nil {
		return err
	}
	items := make([]apiKeyJSON, len(keys))
	for i, k := range keys {
		items[i] = keyJSON(k)
	}
	return c.JSON(http.StatusOK, map[string]any{"items": items})
}

// createAPIKey handles POST /_sandbox/api-keys: the key is in this answer
// and never again.
func (s *Server) createAPIKey(c *echo.Context) error {
	k, err := s.developers.CreateKey(c.Request().Context(), merchantOf(c).ID)
	if err != nil {
		return err
	}
	out := keyJSON(k.APIKey)
	out.Key = k.Key
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, out)
}

// revokeAPIKey handles DELETE /_sandbox/api-keys/{id}: the key is refused
// from now on.
func (s *Server) revokeAPIKey(c *echo.Context) error {
	id := pathParam(c, "id")
	if err := s.developers.RevokeKey(c.Request().Context(), merchantOf(c).ID, id); err != nil {
		return notFoundIfMissing(err, "api key", id)
	}
	return c.NoContent(http.StatusNoContent)
}

// endpointJSON is a webhook endpoint as the control API shows it.
type endpointJSON struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Secret    string `json:"secret"`
	Source    string `json:"source"`
	Disabled  bool   `json:"disabled"`
	ReadOnly  bool   `json:"read_only"`
	CreatedAt string `json:"created_at"`
}

func toEndpointJSON(e paymock.Endpoint) endpointJSON {
	return endpointJSON{ID: e.ID, URL: e.URL, Secret: e.Secret, Source: string(e.Source), Disabled: e.Disabled,
		ReadOnly: e.ReadOnly(), CreatedAt: formatTime(e.Created)}
}

// listWebhookEndpoints handles GET /_sandbox/webhook-endpoints: the
// merchant's endpoints, configured ones read-only.
func (s *Server) listWebhookEndpoints(c *echo.Context) error {
	eps, err := s.developers.Endpoints(c.Request().Context(), merchantOf(c).ID)
	if err != nil {
		return err
	}
	items := make([]endpointJSON, len(eps))
	for i, e := range eps {
		items[i] = toEndpointJSON(e)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"items": items})
}

// addWebhookEndpoint handles POST /_sandbox/webhook-endpoints: a new
// endpoint with a generated secret.
func (s *Server) addWebhookEndpoint(c *echo.Context) error {
	var req struct {
		URL string `json:"url"`
	}
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	e, err := s.developers.AddEndpoint(c.Request().Context(), merchantOf(c).ID, req.URL)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, toEndpointJSON(e))
}

// deleteWebhookEndpoint handles DELETE /_sandbox/webhook-endpoints/{id}.
func (s *Server) deleteWebhookEndpoint(c *echo.Context) error {
	id := pathParam(c, "id")
	if err := s.developers.DeleteEndpoint(c.Request().Context(), merchantOf(c).ID, id); err != nil {
		return notFoundIfMissing(err, "webhook endpoint", id)
	}
	return c.NoContent(http.StatusNoContent)
}

// sendTestEvent handles POST /_sandbox/webhook-endpoints/{id}/test: a
// signed webhook.test event to that endpoint alone.
func (s *Server) sendTestEvent(c *echo.Context) error {
	m, id := merchantOf(c), pathParam(c, "id")
	ep, err := s.developers.Signing(c.Request().Context(), m.ID, id)
	if err != nil {
		return notFoundIfMissing(err, "webhook endpoint", id)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	rec, err := s.lifecycle.SendTest(ctx, m, ep)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, rec)
}
