// A copy of the README's "Use it from Go tests" example, run by the test
// command: keep the two the same.

package checkout_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock/paymocktest"
)

func TestCheckout(t *testing.T) {
	s := paymocktest.New(t) // the whole sandbox in process; fails the test if your requests break the contract
	body := `{"amount": 10.50, "currency": "EUR", "description": "Order 1", "expires_in": 3600, "mcc": 5732,
		"customer": {"email": "jane@example.com", "name": "Jane"}, "metadata": {"order_id": "1"},
		"success_url": "https://shop.example.com/ok", "cancel_url": "https://shop.example.com/no"}`
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/payments", strings.NewReader(body)) // your client here
	req.Header = http.Header{"Authorization": {"Bearer " + s.APIKey}, "Content-Type": {"application/json"}}
	var p struct{ ID string }
	if resp, err := http.DefaultClient.Do(req); err != nil || json.NewDecoder(resp.Body).Decode(&p) != nil {
		t.Fatal("create payment:", err)
	}
	if _, err := s.Complete(t.Context(), p.ID); err != nil { // or s.Fail, s.Expire, s.Advance(ctx, time.Hour)
		t.Fatal(err)
	}
	if d, err := s.Webhooks().Next(t.Context()); err != nil || d.Type != "payment.completed" { // signature verified
		t.Fatalf("webhook %q: %v", d.Type, err)
	}
}
