// Tests that the service contract fixes no form of the service's ids: the
// spec says only "string, unique identifier", and a deployment whose ids
// are UUIDs keeps its contract. paymock's own form (pay_ and 24 base62
// characters) is a choice verify compares (id.payment, id.customer).

package contract

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServiceContract_TakesAnyNonEmptyIDInAnswers(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := docs.Service
	const uuid, cusUUID = "3f2c8a9e-5b1d-4c7a-9e0f-2a6b8c4d1e7f", "b7e4c1d2-0a9f-4e3b-8c6d-5f1a2b3c4d5e"
	good := `{"id":"pay_eX4wfP3t53uWYeLytOXuTdQK","amount":10.5,"currency":"USD","status":"pending",` +
		`"customer":{"id":"cus_IwedGhNUwYReemdqbSIibeTf","email":"jane@example.com","name":"Jane Doe"},` +
		`"description":"Order 1234","metadata":{"order_id":"ord_1234"},"success_url":"https://shop.example.com/success",` +
		`"cancel_url":"https://shop.example.com/cancel","next_action":{"url":"https://pay.example/checkout/1"},` +
		`"payment_method":null,"completed_at":null,"created_at":"2026-11-21T12:00:00Z",` +
		`"updated_at":"2026-11-21T12:00:00Z","expires_at":"2026-11-21T13:00:00Z"}`
	withIDs := func(pay, cus string) string {
		b := strings.Replace(good, `"id":"pay_eX4wfP3t53uWYeLytOXuTdQK"`, `"id":"`+pay+`"`, 1)
		return strings.Replace(b, `"id":"cus_IwedGhNUwYReemdqbSIibeTf"`, `"id":"`+cus+`"`, 1)
	}
	ops := []struct {
		method, path string
		status       int
		list         bool
	}{
		{http.MethodPost, "/api/v1/payments", 201, false},
		{http.MethodGet, "/api/v1/payments/" + uuid, 200, false},
		{http.MethodGet, "/api/v1/payments", 200, true},
	}
	tests := []struct {
		name     string
		pay, cus string
		ok       bool
	}{
		{"paymock's own form", "pay_eX4wfP3t53uWYeLytOXuTdQK", "cus_IwedGhNUwYReemdqbSIibeTf", true},
		{"UUIDs", uuid, cusUUID, true},
		{"a short id of another prefix", "p_1", "c_1", true},
		{"digits", "1234567", "89", true},
		{"an empty payment id", "", "cus_IwedGhNUwYReemdqbSIibeTf", false},
		{"an empty customer id", "pay_eX4wfP3t53uWYeLytOXuTdQK", "", false},
	}
	for _, op := range ops {
		r := httptest.NewRequest(op.method, op.path, nil)
		rt, err := d.Match(r)
		if err != nil {
			t.Fatalf("%s %s: %v", op.method, op.path, err)
		}
		for _, tc := range tests {
			body := withIDs(tc.pay, tc.cus)
			if op.list {
				body = `{"items":[` + body + `],"pagination":{"page":1,"per_page":10,"total_pages":1,"total_items":1}}`
			}
			err := d.ValidateResponse(context.Background(), r, rt, op.status, http.Header{"Content-Type": {"application/json"}}, []byte(body))
			if tc.ok && err != nil {
				t.Errorf("%s %s, %s: refused: %v", op.method, op.path, tc.name, err)
			}
			if !tc.ok && err == nil {
				t.Errorf("%s %s, %s: passed", op.method, op.path, tc.name)
			}
		}
	}
}

func TestServiceContract_RetrieveTakesAUUIDPathID(t *testing.T) {
	// A proxy in front of a deployment with UUID ids must pass its
	// clients' retrieves on, not refuse them as the client's violation.
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := docs.Service
	r := httptest.NewRequest(http.MethodGet, "/api/v1/payments/3f2c8a9e-5b1d-4c7a-9e0f-2a6b8c4d1e7f", nil)
	rt, err := d.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ValidateRequest(context.Background(), r, rt, nil, true); err != nil {
		t.Errorf("a retrieve of a UUID is refused: %v", err)
	}
}
