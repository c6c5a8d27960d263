// Tests that the compiled fast path of the contract check lets no broken
// answer through the whole request chain.

package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestContract_FastPathStillRefusesBrokenAnswers(t *testing.T) {
	good := func(env *testEnv) paymock.Payment {
		return paymock.Payment{ID: "pay_" + strings.Repeat("x", 24), MerchantID: merchantID(t, keyA), Currency: "USD", Amount: 100,
			Status: paymock.StatusPending, Customer: paymock.Customer{ID: "cus_" + strings.Repeat("y", 24), Email: "a@b.co", Name: "A"},
			Description: "d", SuccessURL: "https://a.example", CancelURL: "https://a.example", CheckoutURL: "https://a.example/c"}
	}
	tests := []struct {
		name  string
		spoil func(*paymock.Payment)
		log   string
	}{
		{"empty customer id", func(p *paymock.Payment) { p.Customer.ID = "" }, "customer"},
		{"broken format", func(p *paymock.Payment) { p.Customer.Email = "not an address" }, "email"},
		{"broken uri", func(p *paymock.Payment) { p.SuccessURL = "no scheme" }, "success_url"},
		{"wrong type", func(p *paymock.Payment) { p.Metadata = []byte(`["not","an","object"]`) }, "metadata"},
		// Each of these is written by hand and checked from its values
		// (contract.ValidatePaymentResponse) before the bytes are.
		{"amount out of bounds", func(p *paymock.Payment) { p.Amount = 0 }, "amount"},
		{"broken checkout uri", func(p *paymock.Payment) { p.CheckoutURL = "no scheme" }, "next_action"},
		{"broken date", func(p *paymock.Payment) { p.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "expires_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, expectingViolations())
			p := good(env)
			tc.spoil(&p)
			if err := env.store.Insert(t.Context(), p, -1); err != nil {
				if tc.name == "broken date" {
					// A store that encodes with encoding/json (PostgreSQL's)
					// refuses a year past 9999 itself, so no such payment
					// can be stored there to answer with.
					t.Skipf("this store refuses the payment: %v", err)
				}
				t.Fatal(err)
			}
			st, body, _ := env.do("GET", "/api/v1/payments/"+p.ID, keyA, nil)
			if st != http.StatusInternalServerError {
				t.Fatalf("status %d: %v", st, body)
			}
			if e := errorOf(t, body); e["code"] != "response_contract_violation" {
				t.Errorf("error %v", e)
			}
			if !strings.Contains(env.logs.String(), tc.log) {
				t.Errorf("violation of %s not logged: %s", tc.log, env.logs.String())
			}
		})
	}
}
