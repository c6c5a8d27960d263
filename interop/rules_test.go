// The rules openapi.yaml states agree with what the server enforces, so a
// tool that validates with the schema alone refuses what paymock refuses
// and passes what it accepts; and a refusal reads in the user's words.

package interop

import (
	"strings"
	"testing"
)

func TestRules_SchemaAndServerAgreeOnRedirectURLs(t *testing.T) {
	srv := startServer(t)
	doc := loadDoc(t, "openapi.yaml")
	schema := doc.Components.Schemas["RedirectURL"].Value
	tests := []struct {
		url    string
		accept bool
	}{
		{"https://shop.example.com/success?order=1#top", true},
		{"http://localhost:3000/ok", true},
		{"HTTP://SHOP.EXAMPLE.COM", true},
		{"http://[::1]:8080/ok", true},
		{"http://127.0.0.1", true},
		{"HTtP://", false},                       // no host
		{"https://:443/x", false},                // a port without a host
		{"http://user@shop.example.com/", false}, // user info
		{"http://user:pw@shop.example.com/", false},
		{"ftp://shop.example.com/", false},
		{"/success", false},
		{"shop.example.com/success", false},
		{"https:///path", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			schemaOK := schema.VisitJSON(tc.url, schemaOptions(true)...) == nil
			if schemaOK != tc.accept {
				t.Errorf("the schema accepts it: %v, want %v", schemaOK, tc.accept)
			}
			c := do(t, "POST", srv.URL+"/api/v1/payments", token(t), createBody(map[string]any{"success_url": tc.url}))
			if (c.status == 201) != tc.accept {
				t.Errorf("the server answers %d, want acceptance %v: %s", c.status, tc.accept, c.body)
			}
		})
	}
}

func TestRules_RefusalsNameFieldsInTheUsersWords(t *testing.T) {
	srv := startServer(t)
	tests := []struct {
		name string
		body map[string]any
		// want are param: message pairs that must all be in the answer.
		want []string
	}{
		{"both mcc and account_id, and an unknown field",
			createBody(map[string]any{"account_id": "acct_sandbox_active", "colour": "red"}),
			[]string{"mcc: give exactly one of mcc or account_id, not both", "colour: colour is not a known field"}},
		{"neither mcc nor account_id, and a bad currency",
			createBody(map[string]any{"mcc": nil, "currency": "JPY"}),
			[]string{"mcc: one of mcc or account_id is required", "currency: currency must be one of USD, EUR, GBP, CAD"}},
		{"neither, and no customer",
			createBody(map[string]any{"mcc": nil, "customer": nil, "expires_in": 9999999}),
			[]string{"mcc: one of mcc or account_id is required", "customer: customer is required", "expires_in: expires_in must be at most 2592000"}},
		{"a URL without a host",
			createBody(map[string]any{"cancel_url": "HTtP://"}),
			[]string{"cancel_url: cancel_url must be an absolute http or https URL with a host"}},
		{"card fields out of their bounds",
			createBody(map[string]any{"payment_method": map[string]any{"type": "card", "card": map[string]any{
				"number": "4242 4242", "expiry_month": 13, "expiry_year": 1486, "cvc": "12"}}}),
			[]string{
				"payment_method.card.number: payment_method.card.number must be 12 to 19 digits",
				"payment_method.card.expiry_month: payment_method.card.expiry_month must be at most 12",
				"payment_method.card.expiry_year: payment_method.card.expiry_year must be at least 2000",
				"payment_method.card.cvc: payment_method.card.cvc must be 3 or 4 digits",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := do(t, "POST", srv.URL+"/api/v1/payments", token(t), tc.body)
			if c.status != 400 {
				t.Fatalf("status %d, want 400: %s", c.status, c.body)
			}
			e := decode[struct {
				Error struct {
					Errors []struct{ Param, Code, Message string }
				}
			}](t, c)
			got := map[string]bool{}
			for _, v := range e.Error.Errors {
				got[v.Param+": "+v.Message] = true
				if strings.Contains(v.Message, "oneOf") || strings.Contains(v.Message, "pattern") || strings.Contains(v.Message, "^") || v.Param == "" {
					t.Errorf("violation not in the user's words: %+v", v)
				}
			}
			for _, w := range tc.want {
				if !got[w] {
					t.Errorf("no violation %q in %s", w, c.body)
				}
			}
		})
	}
}
