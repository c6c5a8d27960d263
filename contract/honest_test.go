// Tests that the fast path lets no broken answer through: every response
// is still checked in full.

package contract

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidateResponse_RefusesEveryBrokenPayment(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := docs.Service
	r := httptest.NewRequest(http.MethodGet, "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", nil)
	rt, err := d.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"id":"pay_eX4wfP3t53uWYeLytOXuTdQK","amount":10.5,"currency":"USD","status":"pending",` +
		`"customer":{"id":"cus_IwedGhNUwYReemdqbSIibeTf","email":"jane@example.com","name":"Jane Doe"},` +
		`"description":"Order 1234","metadata":{"order_id":"ord_1234"},"success_url":"https://shop.example.com/success",` +
		`"cancel_url":"https://shop.example.com/cancel","next_action":{"url":"http://localhost:8080/checkout/pay_eX4wfP3t53uWYeLytOXuTdQK"},` +
		`"payment_method":null,"completed_at":null,"created_at":"2026-11-21T12:00:00Z",` +
		`"updated_at":"2026-11-21T12:00:00Z","expires_at":"2026-11-21T13:00:00Z"}`
	json := http.Header{"Content-Type": {"application/json"}}
	if err := d.ValidateResponse(context.Background(), r, rt, 200, json, []byte(good)); err != nil {
		t.Fatalf("a valid payment refused: %v", err)
	}
	if !d.responseValid(rt, 200, json, []byte(good)) {
		t.Errorf("a valid payment did not take the compiled check")
	}
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"undeclared status", 299, json, good},
		{"a status declared with another body", 404, json, good},
		{"wrong type", 200, json, strings.Replace(good, `"amount":10.5`, `"amount":true`, 1)},
		{"number where a string is due", 200, json, strings.Replace(good, `"description":"Order 1234"`, `"description":1234`, 1)},
		{"an empty id", 200, json, strings.Replace(good, `"id":"pay_eX4wfP3t53uWYeLytOXuTdQK"`, `"id":""`, 1)},
		{"broken pattern", 200, json, strings.Replace(good, `"created_at":"2026-11-21T12:00:00Z"`, `"created_at":"2026-11-21T12:00:00+00:00"`, 1)},
		{"broken format", 200, json, strings.Replace(good, `"jane@example.com"`, `"jane"`, 1)},
		{"broken date", 200, json, strings.Replace(good, `"2026-11-21T13:00:00Z"`, `"2026-11-21 13:00"`, 1)},
		{"not in the enum", 200, json, strings.Replace(good, `"status":"pending"`, `"status":"paid"`, 1)},
		{"null where not nullable", 200, json, strings.Replace(good, `"metadata":{"order_id":"ord_1234"}`, `"metadata":null`, 1)},
		{"an undeclared field", 200, json, strings.Replace(good, `"currency":"USD"`, `"currency":"USD","fee":1`, 1)},
		{"a required field missing", 200, json, strings.Replace(good, `"description":"Order 1234",`, ``, 1)},
		{"amount out of bounds", 200, json, strings.Replace(good, `"amount":10.5`, `"amount":0`, 1)},
		{"amount string too precise", 200, json, strings.Replace(good, `"amount":10.5`, `"amount":"10.505"`, 1)},
		{"a duplicated key", 200, json, strings.Replace(good, `"currency":"USD"`, `"currency":"USD","currency":"XXX"`, 1)},
		{"not JSON", 200, json, good[:len(good)-1]},
		{"undeclared content type", 200, http.Header{"Content-Type": {"text/plain"}}, good},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := d.ValidateResponse(context.Background(), r, rt, tc.status, tc.header, []byte(tc.body)); err == nil {
				t.Errorf("passed:\n%s", tc.body)
			}
		})
	}
}
