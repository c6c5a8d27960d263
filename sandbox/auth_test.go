// Tests of the bearer key: refused keys and what each merchant sees.

package sandbox

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

func TestAuth_RejectsBadKeys(t *testing.T) {
	configured := newEnv(t, withMerchants(paymock.Merchant{Name: "acme", APIKeys: []string{"sk_acme"}}))
	open := newEnv(t)
	tests := []struct {
		name     string
		env      *testEnv
		header   string
		wantCode string
		// wantMessage is in the message: what to do about it.
		wantMessage string
	}{
		{"missing", configured, "", "api_key_missing", "send it as Authorization: Bearer <API_KEY>"},
		{"basic scheme", configured, "Basic c2tfYWNtZTo=", "api_key_malformed", "must be Bearer followed by a token"},
		{"no token", configured, "Bearer", "api_key_malformed", "no API key after Bearer"},
		{"no token but spaces", configured, "Bearer   ", "api_key_malformed", "no API key after Bearer"},
		{"a space in the key", configured, "Bearer sk acme", "api_key_malformed", "the API key contains a space"},
		{"unknown key", configured, "Bearer sk_other", "api_key_invalid", "not valid"},
		{"prefix of a key", configured, "Bearer sk_acm", "api_key_invalid", "not valid"},
		{"open mode, missing", open, "", "api_key_missing", "Bearer <API_KEY>"},
		{"open mode, a space in the key", open, "Bearer my key", "api_key_malformed", "the API key contains a space"},
		{"open mode, malformed", open, "Bearer {json}", "api_key_malformed", "a character no key has"},
		// Two headers, even both valid: which one a proxy takes differs.
		{"two headers", configured, "Bearer sk_acme\nBearer sk_acme", "api_key_malformed", "send one Authorization header, not 2"},
		{"open mode, two headers", open, "Bearer sk_a\nBearer sk_b", "api_key_malformed", "send one Authorization header, not 2"},
	}
	for _, tc := range tests {
		for _, path := range []string{"/api/v1/payments", "/api/v1/payments/pay_x"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				req, _ := http.NewRequest("GET", tc.env.URL+path, nil)
				if tc.header != "" {
					for _, v := range strings.Split(tc.header, "\n") {
						req.Header.Add("Authorization", v)
					}
				}
				st, body, h := tc.env.send(req)
				if st != http.StatusUnauthorized {
					t.Fatalf("status %d", st)
				}
				if h.Get("WWW-Authenticate") != "Bearer" {
					t.Errorf("WWW-Authenticate %q", h.Get("WWW-Authenticate"))
				}
				e := errorOf(t, body)
				if e["type"] != "authentication_error" || e["code"] != tc.wantCode {
					t.Errorf("error %v", e)
				}
				if msg, _ := e["message"].(string); !strings.Contains(msg, tc.wantMessage) || strings.Contains(msg, "acme") || strings.Contains(msg, "json") {
					t.Errorf("message %q, want one with %q that does not quote the key", msg, tc.wantMessage)
				}
			})
		}
	}
	// A bad key on a bad body is still a 401: auth comes first.
	if st, _, _ := configured.do("POST", "/api/v1/payments", "sk_nope", "{not json"); st != http.StatusUnauthorized {
		t.Errorf("bad key with bad body: status %d", st)
	}
	if strings.Contains(configured.logs.String(), "sk_acme") || strings.Contains(configured.logs.String(), "sk_other") {
		t.Errorf("a key was logged")
	}
	if st, _, _ := configured.do("GET", "/api/v1/payments", "sk_acme", nil); st != http.StatusOK {
		t.Errorf("good key: status %d", st)
	}
}

func TestIsolation_MerchantsSeeOnlyTheirPayments(t *testing.T) {
	env := newEnv(t)
	_, pa, _ := env.do("POST", "/api/v1/payments", keyA, validCreate())
	_, pb, _ := env.do("POST", "/api/v1/payments", keyB, validCreate())
	if st, body, _ := env.do("GET", "/api/v1/payments/"+pa["id"].(string), keyB, nil); st != http.StatusNotFound {
		t.Errorf("B read A's payment: %d %v", st, body)
	}
	st, body, _ := env.do("GET", "/api/v1/payments/"+pa["id"].(string), keyA, nil)
	if st != http.StatusOK || body["id"] != pa["id"] {
		t.Errorf("A reading its own: %d %v", st, body)
	}
	for key, own := range map[string]map[string]any{keyA: pa, keyB: pb} {
		_, list, _ := env.do("GET", "/api/v1/payments", key, nil)
		items := list["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["id"] != own["id"] {
			t.Errorf("%s lists %v", key, items)
		}
	}
}
