// Tests that the service contract leaves open what the spec leaves open
// in answers: the form of ids ("string, unique identifier"; a deployment
// whose ids are UUIDs keeps its contract, and paymock's own form, pay_
// and 24 base62 characters, is a choice verify compares: id.payment,
// id.customer) and the customer's fields beyond id, email and name.

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

func TestServiceContract_TakesExtraCustomerFieldsInAnswersOnly(t *testing.T) {
	// "Fields of the customer resource beyond id, name and email: not
	// shown": a deployment may send more (verify reports them as drift,
	// customer.fields), while a request with more is still refused, so
	// that a client's typo surfaces.
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := docs.Service
	answer := `{"id":"pay_eX4wfP3t53uWYeLytOXuTdQK","amount":10.5,"currency":"USD","status":"pending",` +
		`"customer":{"id":"cus_IwedGhNUwYReemdqbSIibeTf","email":"jane@example.com","name":"Jane Doe","phone":"+353 1 234 5678","address":{"country":"IE"}},` +
		`"description":"Order 1234","metadata":{},"success_url":"https://shop.example.com/success",` +
		`"cancel_url":"https://shop.example.com/cancel","next_action":{"url":"https://pay.example/checkout/1"},` +
		`"payment_method":null,"completed_at":null,"created_at":"2026-11-21T12:00:00Z",` +
		`"updated_at":"2026-11-21T12:00:00Z","expires_at":"2026-11-21T13:00:00Z"}`
	for _, op := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/api/v1/payments", 201},
		{http.MethodGet, "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", 200},
	} {
		r := httptest.NewRequest(op.method, op.path, nil)
		rt, err := d.Match(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.ValidateResponse(context.Background(), r, rt, op.status, http.Header{"Content-Type": {"application/json"}}, []byte(answer)); err != nil {
			t.Errorf("%s %s: a customer with more fields is refused: %v", op.method, op.path, err)
		}
	}
	body := `{"amount":10.5,"currency":"USD","customer":{"email":"jane@example.com","name":"Jane","phone":"1"},` +
		`"description":"d","expires_in":60,"metadata":{},"success_url":"https://a.example/s","cancel_url":"https://a.example/c","mcc":1}`
	r := httptest.NewRequest(http.MethodPost, "/api/v1/payments", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	rt, err := d.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	err = d.ValidateRequest(context.Background(), r, rt, []byte(body), true)
	if err == nil || !strings.Contains(err.Error(), "customer.phone is not a known field") {
		t.Errorf("a create with customer.phone: %v, want customer.phone parameter_unknown", err)
	}
}

func TestServiceContract_CancelURLIsRequiredInCreateAnswersOnly(t *testing.T) {
	// The spec's cancel_url is "Returned in create responses": a create's
	// answer without it breaks the contract; a retrieve, a list or a
	// control API answer may leave it out (verify compares paymock's
	// choice, which always sends it: cancel_url.retrieve_list).
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	payment := `{"id":"pay_eX4wfP3t53uWYeLytOXuTdQK","amount":10.5,"currency":"USD","status":"pending",` +
		`"customer":{"id":"cus_IwedGhNUwYReemdqbSIibeTf","email":"jane@example.com","name":"Jane Doe"},` +
		`"description":"Order 1234","metadata":{},"success_url":"https://shop.example.com/success",` +
		`"next_action":{"url":"https://pay.example/checkout/1"},` +
		`"payment_method":null,"completed_at":null,"created_at":"2026-11-21T12:00:00Z",` +
		`"updated_at":"2026-11-21T12:00:00Z","expires_at":"2026-11-21T13:00:00Z"}`
	list := `{"items":[` + payment + `],"pagination":{"page":1,"per_page":10,"total_pages":1,"total_items":1}}`
	for _, tc := range []struct {
		d            *Document
		method, path string
		status       int
		body         string
		ok           bool
	}{
		{docs.Service, http.MethodPost, "/api/v1/payments", 201, payment, false},
		{docs.Service, http.MethodGet, "/api/v1/payments/pay_eX4wfP3t53uWYeLytOXuTdQK", 200, payment, true},
		{docs.Service, http.MethodGet, "/api/v1/payments", 200, list, true},
		{docs.Sandbox, http.MethodPost, "/_sandbox/payments/pay_eX4wfP3t53uWYeLytOXuTdQK/fail", 200, strings.Replace(payment, `"pending"`, `"failed"`, 1), true},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		rt, err := tc.d.Match(r)
		if err != nil {
			t.Fatal(err)
		}
		err = tc.d.ValidateResponse(context.Background(), r, rt, tc.status, http.Header{"Content-Type": {"application/json"}}, []byte(tc.body))
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s %s without cancel_url: refused: %v", tc.method, tc.path, err)
		case !tc.ok && err == nil:
			t.Errorf("%s %s without cancel_url: passed", tc.method, tc.path)
		case !tc.ok:
			vs := Violations(err)
			if len(vs) != 1 || vs[0].Param != "cancel_url" || vs[0].Code != "parameter_missing" {
				t.Errorf("%s %s without cancel_url: %+v, want one cancel_url parameter_missing", tc.method, tc.path, vs)
			}
		}
	}
}
