// Tests of webhook endpoints: the read-only configured and default ones,
// and those added, disabled and deleted at run time.

package merchants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// testWebhookSecret is "whsec_" and the base64 of 24 bytes.
const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// endpointMerchants has acme with a configured webhook, globex without,
// and one default endpoint.
func endpointMerchants(t *testing.T) *Registry {
	t.Helper()
	ms, err := newRegistry(Config{
		Merchants: []paymock.Merchant{
			{Name: "acme", APIKeys: []string{"sk_acme"}, Webhooks: []paymock.WebhookEndpoint{{URL: "http://acme.example/hooks", Secret: testWebhookSecret}}},
			{Name: "globex", APIKeys: []string{"sk_globex"}},
		},
		DefaultWebhooks: []paymock.WebhookEndpoint{{URL: "http://default.example/all", Secret: "whsec_Q0xJU0VDUkVUMw=="}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func urls[T any](list []T, url func(T) string) []string {
	var out []string
	for _, e := range list {
		out = append(out, url(e))
	}
	return out
}

func TestRegistry_EndpointsListConfiguredAndDefaultReadOnly(t *testing.T) {
	ms := endpointMerchants(t)
	acme, globex := endpointsOf(t, ms, "acme"), endpointsOf(t, ms, "globex")
	if len(acme) != 1 || acme[0].URL != "http://acme.example/hooks" || acme[0].Source != paymock.EndpointFromConfig || !acme[0].ReadOnly() || acme[0].Secret != testWebhookSecret {
		t.Errorf("acme endpoints = %v, want its configured one, read-only", acme)
	}
	if len(globex) != 1 || globex[0].URL != "http://default.example/all" || globex[0].Source != paymock.EndpointDefault || !globex[0].ReadOnly() {
		t.Errorf("globex endpoints = %v, want the default one, read-only", globex)
	}
	for _, e := range append(acme, globex...) {
		if !strings.HasPrefix(e.ID, "we_") || e.Disabled {
			t.Errorf("endpoint %v: want an enabled we_ id", e)
		}
	}
	m, _ := ms.ByID(context.Background(), "acme")
	if m.Webhooks[0].ID != acme[0].ID {
		t.Errorf("the merchant's webhook carries id %q, want %q", m.Webhooks[0].ID, acme[0].ID)
	}
	if got := ms.Deliverable(context.Background(), "acme"); len(got) != 1 || got[0] != (paymock.WebhookEndpoint{ID: acme[0].ID, URL: acme[0].URL, Secret: testWebhookSecret}) {
		t.Errorf("Deliverable(acme) = %v", got)
	}
	if got := ms.Deliverable(context.Background(), "globex"); len(got) != 1 || got[0].ID != globex[0].ID {
		t.Errorf("Deliverable(globex) = %v", got)
	}

	for _, tc := range []struct{ merchant, id, from string }{{"acme", acme[0].ID, "config file"}, {"globex", globex[0].ID, "--webhook-url"}} {
		for name, change := range map[string]func() error{
			"delete":  func() error { return ms.DeleteEndpoint(context.Background(), tc.merchant, tc.id) },
			"disable": func() error { _, err := ms.DisableEndpoint(context.Background(), tc.merchant, tc.id); return err },
			"enable":  func() error { _, err := ms.EnableEndpoint(context.Background(), tc.merchant, tc.id); return err },
		} {
			err := change()
			e, ok := paymock.AsError(err)
			if !ok || e.Code != "endpoint_read_only" || e.Type != paymock.InvalidRequest || !strings.Contains(e.Message, tc.from) || !strings.Contains(e.Message, tc.id) {
				t.Errorf("%s %s of %s: %v, want endpoint_read_only naming %s", name, tc.id, tc.merchant, err, tc.from)
			}
		}
	}
	if len(ms.Deliverable(context.Background(), "acme")) != 1 || len(ms.Deliverable(context.Background(), "globex")) != 1 {
		t.Error("a refused change changed something")
	}
}

func TestRegistry_AddedEndpointsLifeCycle(t *testing.T) {
	ms := endpointMerchants(t)
	ep, err := ms.AddEndpoint(context.Background(), "globex", "https://globex.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.ID, "we_") || ep.Source != paymock.EndpointAdded || ep.ReadOnly() || ep.Disabled || ep.Created.IsZero() {
		t.Errorf("added endpoint = %v", ep)
	}
	if vs := (paymock.WebhookEndpoint{URL: ep.URL, Secret: ep.Secret}).Validate(); len(vs) != 0 {
		t.Errorf("added endpoint does not validate: %+v", vs)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", ep, ep, ep, ep.LogValue()); strings.Contains(s, ep.Secret) {
		t.Errorf("an endpoint prints its secret: %s", s)
	}
	// Reveal: the secret is there on request.
	got, err := ms.Endpoint(context.Background(), "globex", ep.ID)
	if err != nil || got.Secret != ep.Secret || got.URL != ep.URL {
		t.Errorf("Endpoint = %v, %v", got, err)
	}
	// Defaults keep receiving: an added endpoint is in addition.
	if got := urls(ms.Deliverable(context.Background(), "globex"), func(w paymock.WebhookEndpoint) string { return w.URL }); !slices.Equal(got, []string{"http://default.example/all", "https://globex.example/in"}) {
		t.Errorf("Deliverable = %v", got)
	}

	if got, err := ms.DisableEndpoint(context.Background(), "globex", ep.ID); err != nil || !got.Disabled {
		t.Fatalf("DisableEndpoint = %v, %v", got, err)
	}
	if got := urls(ms.Deliverable(context.Background(), "globex"), func(w paymock.WebhookEndpoint) string { return w.URL }); !slices.Equal(got, []string{"http://default.example/all"}) {
		t.Errorf("Deliverable with the added one disabled = %v", got)
	}
	if list := endpointsOf(t, ms, "globex"); len(list) != 2 || !list[1].Disabled {
		t.Errorf("a disabled endpoint is not listed as such: %v", list)
	}
	if got, err := ms.EnableEndpoint(context.Background(), "globex", ep.ID); err != nil || got.Disabled {
		t.Fatalf("EnableEndpoint = %v, %v", got, err)
	}
	if len(ms.Deliverable(context.Background(), "globex")) != 2 {
		t.Error("an enabled endpoint receives nothing")
	}

	if err := ms.DeleteEndpoint(context.Background(), "globex", ep.ID); err != nil {
		t.Fatal(err)
	}
	if len(endpointsOf(t, ms, "globex")) != 1 || len(ms.Deliverable(context.Background(), "globex")) != 1 {
		t.Error("a deleted endpoint is still there")
	}
	if err := ms.DeleteEndpoint(context.Background(), "globex", ep.ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("deleting twice: %v, want paymock.ErrNotFound", err)
	}
}

func TestRegistry_EndpointsOfAnotherMerchantAreNotFound(t *testing.T) {
	ms := endpointMerchants(t)
	ep, err := ms.AddEndpoint(context.Background(), "acme", "http://acme.example/second")
	if err != nil {
		t.Fatal(err)
	}
	acmeConfigured := endpointsOf(t, ms, "acme")[0].ID
	for _, id := range []string{ep.ID, acmeConfigured, "we_unknown", ""} {
		if _, err := ms.Endpoint(context.Background(), "globex", id); !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("Endpoint(globex, %q) = %v, want paymock.ErrNotFound", id, err)
		}
		if _, err := ms.DisableEndpoint(context.Background(), "globex", id); !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("DisableEndpoint(globex, %q) = %v, want paymock.ErrNotFound", id, err)
		}
		if err := ms.DeleteEndpoint(context.Background(), "globex", id); !errors.Is(err, paymock.ErrNotFound) {
			t.Errorf("DeleteEndpoint(globex, %q) = %v, want paymock.ErrNotFound", id, err)
		}
	}
	if len(ms.Deliverable(context.Background(), "acme")) != 2 {
		t.Error("acme's endpoints changed")
	}
	if _, err := ms.AddEndpoint(context.Background(), "nobody", "http://h.example"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("AddEndpoint of an unknown merchant: %v", err)
	}
	if endpointsOf(t, ms, "nobody") != nil || ms.Deliverable(context.Background(), "nobody") != nil {
		t.Error("an unknown merchant has endpoints")
	}
}

func TestRegistry_AddEndpointRefusesBadURLs(t *testing.T) {
	ms := openMerchants(t, Config{})
	m := mustAuth(t, ms, "sk_hooks")
	for _, u := range []string{"", "/hooks", "ftp://h.example", "http:///x", "https://u:p@h.example"} {
		_, err := ms.AddEndpoint(context.Background(), m.ID, u)
		e, ok := paymock.AsError(err)
		if !ok || e.Type != paymock.InvalidRequest || e.Param != "url" {
			t.Errorf("AddEndpoint(%q) = %v, want an invalid_request_error on url", u, err)
		}
	}
	if len(endpointsOf(t, ms, m.ID)) != 0 {
		t.Error("a refused endpoint was added")
	}
	for range paymock.MaxAddedEndpoints {
		if _, err := ms.AddEndpoint(context.Background(), m.ID, "http://h.example"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ms.AddEndpoint(context.Background(), m.ID, "http://h.example")
	if e, ok := paymock.AsError(err); !ok || e.Code != "endpoint_limit" {
		t.Errorf("endpoint past the limit: %v, want endpoint_limit", err)
	}
}

func TestRegistry_OpenMerchantsGetTheDefaults(t *testing.T) {
	ms := openMerchants(t, Config{DefaultWebhooks: []paymock.WebhookEndpoint{{URL: "http://default.example/all", Secret: testWebhookSecret}}})
	a, b := mustAuth(t, ms, "sk_a"), mustAuth(t, ms, "sk_b")
	da, db := ms.Deliverable(context.Background(), a.ID), ms.Deliverable(context.Background(), b.ID)
	if len(da) != 1 || len(db) != 1 || da[0] != db[0] || da[0].URL != "http://default.example/all" {
		t.Errorf("Deliverable = %v and %v, want the default for both", da, db)
	}
	if _, err := ms.AddEndpoint(context.Background(), a.ID, "http://a.example"); err != nil {
		t.Fatal(err)
	}
	if len(ms.Deliverable(context.Background(), a.ID)) != 2 || len(ms.Deliverable(context.Background(), b.ID)) != 1 {
		t.Error("an endpoint added by one open merchant reaches another")
	}
}

// endpointsOf is Endpoints of a merchant, failing the test on an error
// (which only a shared store can make).
func endpointsOf(t testing.TB, ms *Registry, merchantID string) []paymock.Endpoint {
	t.Helper()
	eps, err := ms.Endpoints(context.Background(), merchantID)
	if err != nil {
		t.Errorf("Endpoints(%q): %v", merchantID, err)
	}
	return eps
}
