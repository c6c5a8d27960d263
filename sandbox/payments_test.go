// Creating payments over HTTP: the answer, metadata, card payments and every rule's refusal.

package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/merchants"
)

const keyA, keyB = "sk_test_alice", "sk_test_bob"

func TestCreate_ReturnsFullPendingPayment(t *testing.T) {
	env := newEnv(t)
	body := validCreate()
	body["metadata"] = map[string]any{"z": 1, "a": map[string]any{"nested": []any{1, "two", nil}}, "big": 1.5}
	st, p, _ := env.do("POST", "/api/v1/payments", keyA, body)
	if st != http.StatusCreated {
		t.Fatalf("status %d: %v", st, p)
	}
	checks := map[string]any{
		"status": "pending", "currency": "USD", "amount": 10.5, "description": "Order 1234",
		"success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel",
		"completed_at": nil, "payment_method": nil,
		"created_at": "2026-03-14T15:09:26Z", "updated_at": "2026-03-14T15:09:26Z", "expires_at": "2026-03-14T16:09:26Z",
	}
	for k, want := range checks {
		if got := p[k]; got != want {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	id := p["id"].(string)
	if !strings.HasPrefix(id, "pay_") || len(id) != 4+paymock.IDLength {
		t.Errorf("id %q", id)
	}
	url := p["next_action"].(map[string]any)["url"]
	if url != env.URL+"/checkout/"+id || p["payment_link"] != url {
		t.Errorf("next_action.url %v payment_link %v", url, p["payment_link"])
	}
	cus := p["customer"].(map[string]any)
	if !strings.HasPrefix(cus["id"].(string), "cus_") || cus["email"] != "jane@example.com" || cus["name"] != "Jane Doe" {
		t.Errorf("customer %v", cus)
	}
}

func TestCreate_ReturnsMetadataExactlyAsSent(t *testing.T) {
	env := newEnv(t)
	raw := `{"amount":1,"currency":"EUR","customer":{"email":"a@b.co","name":"A"},"description":"d","expires_in":60,` +
		`"metadata":{"z":1,"a":{"n":[1,"two",null,1.50]},"big":12345678901234567890,"q":"a&b<c>"},` +
		`"success_url":"https://x.example/s","cancel_url":"https://x.example/c","mcc":1}`
	req, _ := http.NewRequest("POST", env.URL+"/api/v1/payments", strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	if _, err := fmt.Fprint(&sb, readAll(t, resp)); err != nil {
		t.Fatal(err)
	}
	want := `"metadata":{"z":1,"a":{"n":[1,"two",null,1.50]},"big":12345678901234567890,"q":"a&b<c>"}`
	if !strings.Contains(sb.String(), want) {
		t.Errorf("metadata not returned as sent:\n%s\nwant %s", sb.String(), want)
	}
}

func TestCreate_CardPaymentGoesTo3DSAndIsMasked(t *testing.T) {
	env := newEnv(t)
	body := withCard(validCreate())
	body["payment_method"].(map[string]any)["billing_details"] = map[string]any{
		"name": "Jane Doe", "address": map[string]any{"line1": "1 Main St", "city": "Springfield", "postal_code": "12345", "country": "US"},
	}
	st, p, _ := env.do("POST", "/api/v1/payments", keyA, body)
	if st != http.StatusCreated {
		t.Fatalf("status %d: %v", st, p)
	}
	id := p["id"].(string)
	if url := p["next_action"].(map[string]any)["url"]; url != env.URL+"/3ds/"+id {
		t.Errorf("next_action.url = %v", url)
	}
	if _, ok := p["payment_link"]; ok {
		t.Errorf("card payment has a payment_link")
	}
	pm := p["payment_method"].(map[string]any)
	card := pm["card"].(map[string]any)
	if card["brand"] != "visa" || card["last4"] != "4242" || card["expiry_month"] != 12.0 || card["expiry_year"] != 2030.0 {
		t.Errorf("card %v", card)
	}
	_, got, _ := env.do("GET", "/api/v1/payments/"+id, keyA, nil)
	for _, where := range []string{fmt.Sprint(p), fmt.Sprint(got), env.logs.String()} {
		if strings.Contains(where, "4242424242424242") || strings.Contains(where, `"123"`) || strings.Contains(where, "cvc") {
			t.Errorf("card number or cvc leaked: %s", where)
		}
	}
}

func TestCreate_RejectsEveryRuleViolation(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name      string
		edit      func(b map[string]any)
		wantParam string
		wantCode  string
	}{
		{"missing amount", func(b map[string]any) { delete(b, "amount") }, "amount", "parameter_missing"},
		{"missing currency", func(b map[string]any) { delete(b, "currency") }, "currency", "parameter_missing"},
		{"missing customer", func(b map[string]any) { delete(b, "customer") }, "customer", "parameter_missing"},
		{"missing customer.email", func(b map[string]any) { delete(b["customer"].(map[string]any), "email") }, "customer.email", "parameter_missing"},
		{"missing customer.name", func(b map[string]any) { delete(b["customer"].(map[string]any), "name") }, "customer.name", "parameter_missing"},
		{"missing description", func(b map[string]any) { delete(b, "description") }, "description", "parameter_missing"},
		{"missing expires_in", func(b map[string]any) { delete(b, "expires_in") }, "expires_in", "parameter_missing"},
		{"missing metadata", func(b map[string]any) { delete(b, "metadata") }, "metadata", "parameter_missing"},
		{"missing success_url", func(b map[string]any) { delete(b, "success_url") }, "success_url", "parameter_missing"},
		{"missing cancel_url", func(b map[string]any) { delete(b, "cancel_url") }, "cancel_url", "parameter_missing"},
		{"unknown field", func(b map[string]any) { b["amout"] = 1 }, "amout", "parameter_unknown"},
		{"unknown nested field", func(b map[string]any) { b["customer"].(map[string]any)["phone"] = "1" }, "customer.phone", "parameter_unknown"},
		{"both mcc and account", func(b map[string]any) { b["account_id"] = paymock.SandboxActiveAccount }, "mcc", "parameter_conflict"},
		{"neither mcc nor account", func(b map[string]any) { delete(b, "mcc") }, "mcc", "parameter_missing"},
		{"mcc too large", func(b map[string]any) { b["mcc"] = 10000 }, "mcc", "parameter_invalid"},
		{"mcc negative", func(b map[string]any) { b["mcc"] = -1 }, "mcc", "parameter_invalid"},
		{"mcc not integer", func(b map[string]any) { b["mcc"] = 12.5 }, "mcc", "parameter_invalid"},
		{"unknown account", func(b map[string]any) { delete(b, "mcc"); b["account_id"] = "acct_nope" }, "account_id", "account_unknown"},
		{"inactive account", func(b map[string]any) { delete(b, "mcc"); b["account_id"] = paymock.SandboxInactiveAccount }, "account_id", "account_inactive"},
		{"unknown currency", func(b map[string]any) { b["currency"] = "JPY" }, "currency", "parameter_invalid"},
		{"lower-case currency", func(b map[string]any) { b["currency"] = "usd" }, "currency", "parameter_invalid"},
		{"zero amount", func(b map[string]any) { b["amount"] = 0 }, "amount", "parameter_invalid"},
		{"negative amount", func(b map[string]any) { b["amount"] = -5 }, "amount", "parameter_invalid"},
		{"three decimals", func(b map[string]any) { b["amount"] = 10.001 }, "amount", "parameter_invalid"},
		{"amount too large", func(b map[string]any) { b["amount"] = 1000000000 }, "amount", "parameter_invalid"},
		{"amount as string", func(b map[string]any) { b["amount"] = "10.50" }, "amount", "parameter_invalid"},
		{"expires_in zero", func(b map[string]any) { b["expires_in"] = 0 }, "expires_in", "parameter_invalid"},
		{"expires_in too long", func(b map[string]any) { b["expires_in"] = 2592001 }, "expires_in", "parameter_invalid"},
		{"expires_in fractional", func(b map[string]any) { b["expires_in"] = 1.5 }, "expires_in", "parameter_invalid"},
		{"relative success_url", func(b map[string]any) { b["success_url"] = "/success" }, "success_url", "parameter_invalid"},
		{"ftp cancel_url", func(b map[string]any) { b["cancel_url"] = "ftp://shop.example.com/c" }, "cancel_url", "parameter_invalid"},
		{"bad email", func(b map[string]any) { b["customer"].(map[string]any)["email"] = "jane.example.com" }, "customer.email", "parameter_invalid"},
		{"email with name", func(b map[string]any) { b["customer"].(map[string]any)["email"] = "Jane <jane@example.com>" }, "customer.email", "parameter_invalid"},
		{"empty name", func(b map[string]any) { b["customer"].(map[string]any)["name"] = "" }, "customer.name", "parameter_missing"},
		{"empty description", func(b map[string]any) { b["description"] = "" }, "description", "parameter_missing"},
		{"metadata array", func(b map[string]any) { b["metadata"] = []any{1} }, "metadata", "parameter_invalid"},
		{"bad Luhn", func(b map[string]any) { card(withCard(b))["number"] = "4242424242424241" }, "payment_method.card.number", "card_number_invalid"},
		{"card number letters", func(b map[string]any) { card(withCard(b))["number"] = "4242abcd42424242" }, "payment_method.card.number", "parameter_invalid"},
		{"month 13", func(b map[string]any) { card(withCard(b))["expiry_month"] = 13 }, "payment_method.card.expiry_month", "parameter_invalid"},
		{"month 0", func(b map[string]any) { card(withCard(b))["expiry_month"] = 0 }, "payment_method.card.expiry_month", "parameter_invalid"},
		{"two-digit year", func(b map[string]any) { card(withCard(b))["expiry_year"] = 30 }, "payment_method.card.expiry_year", "parameter_invalid"},
		{"five-digit year", func(b map[string]any) { card(withCard(b))["expiry_year"] = 10000 }, "payment_method.card.expiry_year", "parameter_invalid"},
		{"expired card", func(b map[string]any) { card(withCard(b))["expiry_year"] = 2026; card(b)["expiry_month"] = 2 }, "payment_method.card.expiry_year", "card_expired"},
		{"short cvc", func(b map[string]any) { card(withCard(b))["cvc"] = "12" }, "payment_method.card.cvc", "parameter_invalid"},
		{"long cvc", func(b map[string]any) { card(withCard(b))["cvc"] = "12345" }, "payment_method.card.cvc", "parameter_invalid"},
		{"missing cvc", func(b map[string]any) { delete(card(withCard(b)), "cvc") }, "payment_method.card.cvc", "parameter_missing"},
		{"non-card type", func(b map[string]any) { withCard(b)["payment_method"].(map[string]any)["type"] = "sepa" }, "payment_method.type", "parameter_invalid"},
		{"bad country", func(b map[string]any) {
			withCard(b)["payment_method"].(map[string]any)["billing_details"] = map[string]any{"address": map[string]any{"country": "usa"}}
		}, "payment_method.billing_details.address.country", "parameter_invalid"},
		// Two capitals, the contract's pattern, but no code ISO 3166-1
		// assigns: the United Kingdom's is GB.
		{"unassigned country UK", func(b map[string]any) {
			withCard(b)["payment_method"].(map[string]any)["billing_details"] = map[string]any{"address": map[string]any{"country": "UK"}}
		}, "payment_method.billing_details.address.country", "parameter_invalid"},
		{"unassigned country ZZ", func(b map[string]any) {
			withCard(b)["payment_method"].(map[string]any)["billing_details"] = map[string]any{"address": map[string]any{"country": "ZZ"}}
		}, "payment_method.billing_details.address.country", "parameter_invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := validCreate()
			tc.edit(b)
			st, body, _ := env.do("POST", "/api/v1/payments", keyA, b)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", st, body)
			}
			e := errorOf(t, body)
			if e["type"] != "invalid_request_error" {
				t.Errorf("type %v", e["type"])
			}
			found := false
			for _, v := range e["errors"].([]any) {
				v := v.(map[string]any)
				if v["param"] == tc.wantParam && v["code"] == tc.wantCode {
					found = true
				}
				if msg := v["message"].(string); strings.Contains(msg, "Schema:") || strings.Contains(msg, "Value:") || msg == "" {
					t.Errorf("unreadable message %q", msg)
				}
			}
			if !found {
				t.Errorf("no violation %s/%s in %v", tc.wantParam, tc.wantCode, e["errors"])
			}
		})
	}
	// Nothing of the rejected requests was stored.
	if _, total, _ := env.store.List(t.Context(), merchantID(t, keyA), 0, 1); total != 0 {
		t.Errorf("%d payments stored after rejected creates", total)
	}
}

func TestCreate_AnEmptyRequiredStringIsMissing(t *testing.T) {
	// docs/api.md: parameter_missing is "a required field or parameter
	// is absent (or blank)". An empty string is blank whatever rule of the
	// field it breaks (a length, an enum, a pattern, a format), and is
	// named once; white space alone in free text is blank too. An empty
	// optional field is a value, and invalid.
	env := newEnv(t)
	empty := func(path ...string) func(b map[string]any) {
		return func(b map[string]any) {
			m := b
			for _, k := range path[:len(path)-1] {
				m = m[k].(map[string]any)
			}
			m[path[len(path)-1]] = ""
		}
	}
	tests := []struct {
		name  string
		edit  func(b map[string]any)
		param string
		code  string
	}{
		{"currency", empty("currency"), "currency", "parameter_missing"},
		{"description", empty("description"), "description", "parameter_missing"},
		{"blank description", func(b map[string]any) { b["description"] = " \t" }, "description", "parameter_missing"},
		{"customer.email", empty("customer", "email"), "customer.email", "parameter_missing"},
		{"customer.name", empty("customer", "name"), "customer.name", "parameter_missing"},
		{"blank customer.name", func(b map[string]any) { b["customer"].(map[string]any)["name"] = "  " }, "customer.name", "parameter_missing"},
		{"success_url", empty("success_url"), "success_url", "parameter_missing"},
		{"cancel_url", empty("cancel_url"), "cancel_url", "parameter_missing"},
		{"payment_method.type", func(b map[string]any) { withCard(b); empty("payment_method", "type")(b) }, "payment_method.type", "parameter_missing"},
		{"payment_method.card.number", func(b map[string]any) { withCard(b); empty("payment_method", "card", "number")(b) }, "payment_method.card.number", "parameter_missing"},
		{"payment_method.card.cvc", func(b map[string]any) { withCard(b); empty("payment_method", "card", "cvc")(b) }, "payment_method.card.cvc", "parameter_missing"},
		// Optional: present, and empty, which is no value it may take.
		{"account_id (optional)", func(b map[string]any) { delete(b, "mcc"); b["account_id"] = "" }, "account_id", "parameter_invalid"},
		{"billing country (optional)", func(b map[string]any) {
			withCard(b)["payment_method"].(map[string]any)["billing_details"] = map[string]any{"address": map[string]any{"country": ""}}
		}, "payment_method.billing_details.address.country", "parameter_invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := validCreate()
			tc.edit(b)
			st, body, _ := env.do("POST", "/api/v1/payments", keyA, b)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", st, body)
			}
			var mine []map[string]any
			for _, v := range errorOf(t, body)["errors"].([]any) {
				if v := v.(map[string]any); v["param"] == tc.param {
					mine = append(mine, v)
				}
			}
			want := map[string]any{"param": tc.param, "code": tc.code}
			if tc.code == "parameter_missing" {
				want["message"] = tc.param + " is required"
			}
			if len(mine) != 1 || mine[0]["code"] != want["code"] || want["message"] != nil && mine[0]["message"] != want["message"] {
				t.Errorf("violations of %s: %v, want one %v", tc.param, mine, want)
			}
		})
	}
}

func card(b map[string]any) map[string]any {
	return b["payment_method"].(map[string]any)["card"].(map[string]any)
}

func merchantID(t *testing.T, key string) string {
	t.Helper()
	ms, err := merchants.New(t.Context(), merchants.Config{Store: memory.NewMerchants()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func TestCreate_ListsAllViolationsAtOnce(t *testing.T) {
	env := newEnv(t)
	b := validCreate()
	b["currency"] = "JPY"
	b["expires_in"] = 0
	b["customer"].(map[string]any)["email"] = "nope"
	b["extra"] = true
	st, body, _ := env.do("POST", "/api/v1/payments", keyA, b)
	if st != http.StatusBadRequest {
		t.Fatalf("status %d", st)
	}
	e := errorOf(t, body)
	var params []string
	for _, v := range e["errors"].([]any) {
		params = append(params, v.(map[string]any)["param"].(string))
	}
	if got, want := strings.Join(params, ","), "currency,customer.email,expires_in,extra"; got != want {
		t.Errorf("params %s, want %s", got, want)
	}
	if e["param"] != "currency" || e["code"] != "parameter_invalid" || !strings.HasPrefix(e["message"].(string), "currency") {
		t.Errorf("top-level error does not describe the first violation: %v", e)
	}
}

func TestCreate_AcceptsBoundaryValues(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name string
		edit func(b map[string]any)
	}{
		{"smallest amount", func(b map[string]any) { b["amount"] = 0.01 }},
		{"largest amount", func(b map[string]any) { b["amount"] = 999999999.99 }},
		{"integer amount", func(b map[string]any) { b["amount"] = 7 }},
		{"expires_in 1", func(b map[string]any) { b["expires_in"] = 1 }},
		{"expires_in 30 days", func(b map[string]any) { b["expires_in"] = 2592000 }},
		{"mcc 0", func(b map[string]any) { b["mcc"] = 0 }},
		{"mcc 9999", func(b map[string]any) { b["mcc"] = 9999 }},
		{"active account", func(b map[string]any) { delete(b, "mcc"); b["account_id"] = paymock.SandboxActiveAccount }},
		{"each currency EUR", func(b map[string]any) { b["currency"] = "EUR" }},
		{"each currency GBP", func(b map[string]any) { b["currency"] = "GBP" }},
		{"each currency CAD", func(b map[string]any) { b["currency"] = "CAD" }},
		{"http URL", func(b map[string]any) { b["success_url"] = "http://localhost:3000/ok?order=1" }},
		{"empty metadata", func(b map[string]any) { b["metadata"] = map[string]any{} }},
		{"card expiring this month", func(b map[string]any) { card(withCard(b))["expiry_year"] = 2026; card(b)["expiry_month"] = 3 }},
		{"card expiring in 2101", func(b map[string]any) { card(withCard(b))["expiry_year"] = 2101 }},
		{"card expiring in 9999, the last four-digit year", func(b map[string]any) { card(withCard(b))["expiry_year"] = 9999 }},
		{"four-digit cvc amex", func(b map[string]any) { card(withCard(b))["number"] = "378282246310005"; card(b)["cvc"] = "1234" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := validCreate()
			tc.edit(b)
			if st, body, _ := env.do("POST", "/api/v1/payments", keyA, b); st != http.StatusCreated {
				t.Fatalf("status %d: %v", st, body)
			}
		})
	}
}

func TestCreate_CustomerIDIsStablePerMerchantAndEmail(t *testing.T) {
	env := newEnv(t)
	cusID := func(key, email string) string {
		b := validCreate()
		b["customer"].(map[string]any)["email"] = email
		_, p, _ := env.do("POST", "/api/v1/payments", key, b)
		return p["customer"].(map[string]any)["id"].(string)
	}
	first := cusID(keyA, "jane@example.com")
	if again := cusID(keyA, "Jane@Example.com"); again != first {
		t.Errorf("same email, different customer: %s %s", first, again)
	}
	if other := cusID(keyA, "john@example.com"); other == first {
		t.Errorf("different emails share customer %s", first)
	}
	if otherMerchant := cusID(keyB, "jane@example.com"); otherMerchant == first {
		t.Errorf("two merchants share customer %s", first)
	}
}

func TestCreate_RequiresPCIApprovalForCards(t *testing.T) {
	env := newEnv(t, withMerchants(
		paymock.Merchant{Name: "acme", APIKeys: []string{"sk_acme"}, PCIApproved: false,
			Accounts: []paymock.Account{{ID: "acct_acme_main", Active: true}, {ID: "acct_acme_old", Active: false}}},
		paymock.Merchant{Name: "bigco", APIKeys: []string{"sk_bigco"}, PCIApproved: true},
	))
	st, body, _ := env.do("POST", "/api/v1/payments", "sk_acme", withCard(validCreate()))
	if st != http.StatusForbidden || errorOf(t, body)["type"] != "permission_error" {
		t.Fatalf("status %d: %v", st, body)
	}
	if st, body, _ := env.do("POST", "/api/v1/payments", "sk_bigco", withCard(validCreate())); st != http.StatusCreated {
		t.Fatalf("PCI merchant: status %d: %v", st, body)
	}
	b := validCreate()
	delete(b, "mcc")
	b["account_id"] = "acct_acme_main"
	if st, body, _ := env.do("POST", "/api/v1/payments", "sk_acme", b); st != http.StatusCreated {
		t.Fatalf("own active account: status %d: %v", st, body)
	}
	b["account_id"] = "acct_acme_old"
	if st, _, _ := env.do("POST", "/api/v1/payments", "sk_acme", b); st != http.StatusBadRequest {
		t.Errorf("own inactive account: status %d", st)
	}
	b["account_id"] = paymock.SandboxActiveAccount // not acme's in configured mode
	if st, _, _ := env.do("POST", "/api/v1/payments", "sk_acme", b); st != http.StatusBadRequest {
		t.Errorf("someone else's account: status %d", st)
	}
}

func TestCreate_ListsContractAndRuleViolationsInOneAnswer(t *testing.T) {
	env := newEnv(t)
	b := withCard(validCreate())
	b["currency"] = "JPY"                   // the contract: enum
	b["amount"] = 10.001                    // a rule: two decimals
	b["account_id"] = "acct_sandbox_active" // a rule: both mcc and account_id
	card(b)["number"] = "4242424242424241"  // a rule: Luhn
	st, body, _ := env.do("POST", "/api/v1/payments", keyA, b)
	if st != http.StatusBadRequest {
		t.Fatalf("status %d", st)
	}
	var got []string
	for _, v := range errorOf(t, body)["errors"].([]any) {
		v := v.(map[string]any)
		got = append(got, v["param"].(string)+":"+v["code"].(string))
	}
	want := "amount:parameter_invalid,currency:parameter_invalid,mcc:parameter_conflict,payment_method.card.number:card_number_invalid"
	if strings.Join(got, ",") != want {
		t.Errorf("violations\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
}

func TestCreate_RefusesBytesThatAreNotWhatTheyClaim(t *testing.T) {
	env := newEnv(t)
	valid, _ := json.Marshal(validCreate())
	tests := []struct {
		name, body, param, code string
	}{
		{"duplicated key", strings.Replace(string(valid), `"currency":"USD"`, `"currency":"USD","currency":"EUR"`, 1), "currency", "duplicate_key"},
		{"duplicated nested key", strings.Replace(string(valid), `"order_id":"ord_1234"`, `"order_id":"a","order_id":"b"`, 1), "metadata.order_id", "duplicate_key"},
		{"invalid UTF-8 in metadata", strings.Replace(string(valid), `"ord_1234"`, "\"ord_\xff\xfe\"", 1), "metadata.order_id", "invalid_utf8"},
		{"lone surrogate escape", strings.Replace(string(valid), `"ord_1234"`, `"ord_\ud800"`, 1), "metadata.order_id", "invalid_utf8"},
	}
	for _, tc := range tests {
		st, body, _ := env.do("POST", "/api/v1/payments", keyA, []byte(tc.body))
		if st != http.StatusBadRequest {
			t.Errorf("%s: %d %v", tc.name, st, body)
			continue
		}
		e := errorOf(t, body)
		if e["param"] != tc.param || e["code"] != tc.code {
			t.Errorf("%s: %v", tc.name, e)
		}
	}
	if _, list, _ := env.do("GET", "/api/v1/payments", keyA, nil); list["pagination"].(map[string]any)["total_items"] != 0.0 {
		t.Errorf("a refused body was stored: %v", list)
	}
}
