// Tests of webhook endpoints: validation, the read-only configured and
// default ones, and those added, disabled and deleted at run time.

package paymock

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testWebhookSecret is "whsec_" and the base64 of 24 bytes.
const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestWebhookEndpoint_Validate(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, tc := range []struct {
		name       string
		ep         WebhookEndpoint
		wantParams []string // of every violation; none means valid
		wantInMsg  string   // in the first message
	}{
		{"http", WebhookEndpoint{URL: "http://localhost:9000/hooks", Secret: testWebhookSecret}, nil, ""},
		{"https with port and query", WebhookEndpoint{URL: "https://h.example:8443/in?x=1", Secret: testWebhookSecret}, nil, ""},
		{"ip host", WebhookEndpoint{URL: "http://127.0.0.1/h", Secret: testWebhookSecret}, nil, ""},
		{"short secret", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(1)}, nil, ""},
		{"64-byte secret", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(64)}, nil, ""},
		{"missing url", WebhookEndpoint{Secret: testWebhookSecret}, []string{"url"}, "url is required"},
		{"relative url", WebhookEndpoint{URL: "/hooks", Secret: testWebhookSecret}, []string{"url"}, `url "/hooks" is not an absolute http:// or https:// URL`},
		{"no scheme", WebhookEndpoint{URL: "h.example/hooks", Secret: testWebhookSecret}, []string{"url"}, "absolute"},
		{"ftp", WebhookEndpoint{URL: "ftp://h.example/x", Secret: testWebhookSecret}, []string{"url"}, "absolute"},
		{"mailto", WebhookEndpoint{URL: "mailto:x@y", Secret: testWebhookSecret}, []string{"url"}, "mailto"},
		{"no host", WebhookEndpoint{URL: "http:///x", Secret: testWebhookSecret}, []string{"url"}, "no host"},
		{"port only", WebhookEndpoint{URL: "http://:80/x", Secret: testWebhookSecret}, []string{"url"}, "no host"},
		{"not a URL", WebhookEndpoint{URL: "http://h.example/%zz", Secret: testWebhookSecret}, []string{"url"}, "not a URL"},
		{"user info", WebhookEndpoint{URL: "https://user:pa55word@h.example/x", Secret: testWebhookSecret}, []string{"url"}, "user name or password"},
		{"too long", WebhookEndpoint{URL: "http://h.example/" + strings.Repeat("x", 2048), Secret: testWebhookSecret}, []string{"url"}, "longer than 2048"},
		{"missing secret", WebhookEndpoint{URL: "http://h.example"}, []string{"secret"}, "secret is required"},
		{"secret without prefix", WebhookEndpoint{URL: "http://h.example", Secret: "c2VjcmV0"}, []string{"secret"}, "whsec_"},
		{"secret not base64", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_k3y!"}, []string{"secret"}, "base64"},
		{"secret empty after prefix", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_"}, []string{"secret"}, "non-empty"},
		{"secret too long", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(65)}, []string{"secret"}, "at most 64"},
		{"both wrong", WebhookEndpoint{URL: "hooks", Secret: "abc"}, []string{"url", "secret"}, `"hooks"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := tc.ep.Validate()
			var params []string
			for _, v := range vs {
				params = append(params, v.Param)
				if strings.Contains(v.Message, "k3y") || strings.Contains(v.Message, "pa55word") || strings.Contains(v.Message, "MfKQ9") {
					t.Errorf("message %q repeats a secret", v.Message)
				}
			}
			if !slices.Equal(params, tc.wantParams) {
				t.Fatalf("Validate() = %+v, want violations of %v", vs, tc.wantParams)
			}
			if len(vs) > 0 && !strings.Contains(vs[0].Message, tc.wantInMsg) {
				t.Errorf("message %q does not mention %q", vs[0].Message, tc.wantInMsg)
			}
		})
	}
}

func TestWebhookEndpoint_ValidateCutsALongURLInItsMessage(t *testing.T) {
	vs := WebhookEndpoint{URL: "ftp://h.example/" + strings.Repeat("é", 900), Secret: testWebhookSecret}.Validate()
	if len(vs) != 1 || len(vs[0].Message) > 300 || !strings.Contains(vs[0].Message, "…") {
		t.Errorf("Validate() = %+v, want one short message", vs)
	}
}

func TestNewWebhookSecret(t *testing.T) {
	a, err := NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewWebhookSecret()
	if a == b {
		t.Error("two secrets are the same")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 24 {
		t.Errorf("secret %q: want whsec_ and base64 of 24 bytes", a)
	}
	if vs := (WebhookEndpoint{URL: "http://h.example", Secret: a}).Validate(); len(vs) != 0 {
		t.Errorf("a generated secret does not validate: %+v", vs)
	}
}

// endpointMerchants has acme with a configured webhook, globex without,
// and one default endpoint.
func endpointMerchants(t *testing.T) *Merchants {
	t.Helper()
	ms, err := NewMerchantsFromConfig(MerchantsConfig{
		Merchants: []Merchant{
			{Name: "acme", APIKeys: []string{"sk_acme"}, Webhooks: []WebhookEndpoint{{URL: "http://acme.example/hooks", Secret: testWebhookSecret}}},
			{Name: "globex", APIKeys: []string{"sk_globex"}},
		},
		DefaultWebhooks: []WebhookEndpoint{{URL: "http://default.example/all", Secret: "whsec_Q0xJU0VDUkVUMw=="}},
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

func TestMerchants_EndpointsListConfiguredAndDefaultReadOnly(t *testing.T) {
	ms := endpointMerchants(t)
	acme, globex := endpointsOf(t, ms, "acme"), endpointsOf(t, ms, "globex")
	if len(acme) != 1 || acme[0].URL != "http://acme.example/hooks" || acme[0].Source != EndpointFromConfig || !acme[0].ReadOnly() || acme[0].Secret != testWebhookSecret {
		t.Errorf("acme endpoints = %v, want its configured one, read-only", acme)
	}
	if len(globex) != 1 || globex[0].URL != "http://default.example/all" || globex[0].Source != EndpointDefault || !globex[0].ReadOnly() {
		t.Errorf("globex endpoints = %v, want the default one, read-only", globex)
	}
	for _, e := range append(acme, globex...) {
		if !strings.HasPrefix(e.ID, "we_") || e.Disabled {
			t.Errorf("endpoint %v: want an enabled we_ id", e)
		}
	}
	m, _ := ms.ByID("acme")
	if m.Webhooks[0].ID != acme[0].ID {
		t.Errorf("the merchant's webhook carries id %q, want %q", m.Webhooks[0].ID, acme[0].ID)
	}
	if got := ms.Deliverable("acme"); len(got) != 1 || got[0] != (WebhookEndpoint{ID: acme[0].ID, URL: acme[0].URL, Secret: testWebhookSecret}) {
		t.Errorf("Deliverable(acme) = %v", got)
	}
	if got := ms.Deliverable("globex"); len(got) != 1 || got[0].ID != globex[0].ID {
		t.Errorf("Deliverable(globex) = %v", got)
	}

	for _, tc := range []struct{ merchant, id, from string }{{"acme", acme[0].ID, "config file"}, {"globex", globex[0].ID, "--webhook-url"}} {
		for name, change := range map[string]func() error{
			"delete":  func() error { return ms.DeleteEndpoint(tc.merchant, tc.id) },
			"disable": func() error { _, err := ms.DisableEndpoint(tc.merchant, tc.id); return err },
			"enable":  func() error { _, err := ms.EnableEndpoint(tc.merchant, tc.id); return err },
		} {
			err := change()
			e, ok := AsError(err)
			if !ok || e.Code != "endpoint_read_only" || e.Type != InvalidRequest || !strings.Contains(e.Message, tc.from) || !strings.Contains(e.Message, tc.id) {
				t.Errorf("%s %s of %s: %v, want endpoint_read_only naming %s", name, tc.id, tc.merchant, err, tc.from)
			}
		}
	}
	if len(ms.Deliverable("acme")) != 1 || len(ms.Deliverable("globex")) != 1 {
		t.Error("a refused change changed something")
	}
}

func TestMerchants_AddedEndpointsLifeCycle(t *testing.T) {
	ms := endpointMerchants(t)
	ep, err := ms.AddEndpoint("globex", "https://globex.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.ID, "we_") || ep.Source != EndpointAdded || ep.ReadOnly() || ep.Disabled || ep.Created.IsZero() {
		t.Errorf("added endpoint = %v", ep)
	}
	if vs := (WebhookEndpoint{URL: ep.URL, Secret: ep.Secret}).Validate(); len(vs) != 0 {
		t.Errorf("added endpoint does not validate: %+v", vs)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", ep, ep, ep, ep.LogValue()); strings.Contains(s, ep.Secret) {
		t.Errorf("an endpoint prints its secret: %s", s)
	}
	// Reveal: the secret is there on request.
	got, err := ms.Endpoint("globex", ep.ID)
	if err != nil || got.Secret != ep.Secret || got.URL != ep.URL {
		t.Errorf("Endpoint = %v, %v", got, err)
	}
	// Defaults keep receiving: an added endpoint is in addition.
	if got := urls(ms.Deliverable("globex"), func(w WebhookEndpoint) string { return w.URL }); !slices.Equal(got, []string{"http://default.example/all", "https://globex.example/in"}) {
		t.Errorf("Deliverable = %v", got)
	}

	if got, err := ms.DisableEndpoint("globex", ep.ID); err != nil || !got.Disabled {
		t.Fatalf("DisableEndpoint = %v, %v", got, err)
	}
	if got := urls(ms.Deliverable("globex"), func(w WebhookEndpoint) string { return w.URL }); !slices.Equal(got, []string{"http://default.example/all"}) {
		t.Errorf("Deliverable with the added one disabled = %v", got)
	}
	if list := endpointsOf(t, ms, "globex"); len(list) != 2 || !list[1].Disabled {
		t.Errorf("a disabled endpoint is not listed as such: %v", list)
	}
	if got, err := ms.EnableEndpoint("globex", ep.ID); err != nil || got.Disabled {
		t.Fatalf("EnableEndpoint = %v, %v", got, err)
	}
	if len(ms.Deliverable("globex")) != 2 {
		t.Error("an enabled endpoint receives nothing")
	}

	if err := ms.DeleteEndpoint("globex", ep.ID); err != nil {
		t.Fatal(err)
	}
	if len(endpointsOf(t, ms, "globex")) != 1 || len(ms.Deliverable("globex")) != 1 {
		t.Error("a deleted endpoint is still there")
	}
	if err := ms.DeleteEndpoint("globex", ep.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}
}

func TestMerchants_EndpointsOfAnotherMerchantAreNotFound(t *testing.T) {
	ms := endpointMerchants(t)
	ep, err := ms.AddEndpoint("acme", "http://acme.example/second")
	if err != nil {
		t.Fatal(err)
	}
	acmeConfigured := endpointsOf(t, ms, "acme")[0].ID
	for _, id := range []string{ep.ID, acmeConfigured, "we_unknown", ""} {
		if _, err := ms.Endpoint("globex", id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Endpoint(globex, %q) = %v, want ErrNotFound", id, err)
		}
		if _, err := ms.DisableEndpoint("globex", id); !errors.Is(err, ErrNotFound) {
			t.Errorf("DisableEndpoint(globex, %q) = %v, want ErrNotFound", id, err)
		}
		if err := ms.DeleteEndpoint("globex", id); !errors.Is(err, ErrNotFound) {
			t.Errorf("DeleteEndpoint(globex, %q) = %v, want ErrNotFound", id, err)
		}
	}
	if len(ms.Deliverable("acme")) != 2 {
		t.Error("acme's endpoints changed")
	}
	if _, err := ms.AddEndpoint("nobody", "http://h.example"); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddEndpoint of an unknown merchant: %v", err)
	}
	if endpointsOf(t, ms, "nobody") != nil || ms.Deliverable("nobody") != nil {
		t.Error("an unknown merchant has endpoints")
	}
}

func TestMerchants_AddEndpointRefusesBadURLs(t *testing.T) {
	ms := openMerchants(t, MerchantsConfig{})
	m := mustAuth(t, ms, "sk_hooks")
	for _, u := range []string{"", "/hooks", "ftp://h.example", "http:///x", "https://u:p@h.example"} {
		_, err := ms.AddEndpoint(m.ID, u)
		e, ok := AsError(err)
		if !ok || e.Type != InvalidRequest || e.Param != "url" {
			t.Errorf("AddEndpoint(%q) = %v, want an invalid_request_error on url", u, err)
		}
	}
	if len(endpointsOf(t, ms, m.ID)) != 0 {
		t.Error("a refused endpoint was added")
	}
	for range MaxAddedEndpoints {
		if _, err := ms.AddEndpoint(m.ID, "http://h.example"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ms.AddEndpoint(m.ID, "http://h.example")
	if e, ok := AsError(err); !ok || e.Code != "endpoint_limit" {
		t.Errorf("endpoint past the limit: %v, want endpoint_limit", err)
	}
}

func TestMerchants_OpenMerchantsGetTheDefaults(t *testing.T) {
	ms := openMerchants(t, MerchantsConfig{DefaultWebhooks: []WebhookEndpoint{{URL: "http://default.example/all", Secret: testWebhookSecret}}})
	a, b := mustAuth(t, ms, "sk_a"), mustAuth(t, ms, "sk_b")
	da, db := ms.Deliverable(a.ID), ms.Deliverable(b.ID)
	if len(da) != 1 || len(db) != 1 || da[0] != db[0] || da[0].URL != "http://default.example/all" {
		t.Errorf("Deliverable = %v and %v, want the default for both", da, db)
	}
	if _, err := ms.AddEndpoint(a.ID, "http://a.example"); err != nil {
		t.Fatal(err)
	}
	if len(ms.Deliverable(a.ID)) != 2 || len(ms.Deliverable(b.ID)) != 1 {
		t.Error("an endpoint added by one open merchant reaches another")
	}
}

// endpointsOf is Endpoints of a merchant, failing the test on an error
// (which only a shared store can make).
func endpointsOf(t testing.TB, ms *Merchants, merchantID string) []Endpoint {
	t.Helper()
	eps, err := ms.Endpoints(merchantID)
	if err != nil {
		t.Errorf("Endpoints(%q): %v", merchantID, err)
	}
	return eps
}
