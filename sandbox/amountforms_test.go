// Tests that both wire forms of the amount, over HTTP, hold exactly the
// same amounts: in answers (the server's own check and the client's) and
// in create requests.

package sandbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// answeredAmounts are stored amounts at every edge of the bounds, and
// amounts drawn over every magnitude.
func answeredAmounts() []paymock.Amount {
	out := []paymock.Amount{0, -1, -100, 1, 9, 10, 99, 100, 101, 1050, paymock.MaxAmount - 1, paymock.MaxAmount,
		paymock.MaxAmount + 1, 10 * paymock.MaxAmount}
	rnd := rand.New(rand.NewPCG(7, 11))
	for range 40 {
		cents := paymock.Amount(rnd.Int64N(2 * int64(paymock.MaxAmount)))
		out = append(out, cents/paymock.Amount(int64(1)<<rnd.IntN(37)))
	}
	return out
}

func TestAmountForms_AnswersHoldTheSameAmounts(t *testing.T) {
	amounts := answeredAmounts()
	verdicts := map[string][]bool{}
	for _, form := range []string{"amount=number", "amount=string"} {
		t.Run(form, func(t *testing.T) {
			// Amounts out of bounds make the server refuse its own answer
			// (500 response_contract_violation); every answer still goes
			// through the client's check of the contract.
			env := newEnv(t, expectingViolations(), withVariants(form, 1))
			mid := merchantID(t, keyA)
			for i, a := range amounts {
				p := paymock.Payment{ID: fmt.Sprintf("pay_amount%018d", i), MerchantID: mid, Currency: "USD", Amount: a,
					Status: paymock.StatusPending, Customer: paymock.Customer{ID: "cus_" + strings.Repeat("y", 24), Email: "a@b.co", Name: "A"},
					Description: "d", Metadata: json.RawMessage(`{}`), SuccessURL: "https://a.example", CancelURL: "https://a.example",
					CheckoutURL: "https://a.example/c", CreatedAt: testStart, UpdatedAt: testStart, ExpiresAt: testStart.Add(60e9)}
				if err := env.store.Insert(t.Context(), p, -1); err != nil {
					t.Fatal(err)
				}
				st, body, _ := env.do("GET", "/api/v1/payments/"+p.ID, keyA, nil)
				switch st {
				case http.StatusOK:
					_, isString := body["amount"].(string)
					if isString != (form == "amount=string") {
						t.Errorf("amount %s answered as %T under %s", a, body["amount"], form)
					}
				case http.StatusInternalServerError:
					if e := errorOf(t, body); e["code"] != "response_contract_violation" {
						t.Errorf("amount %s: error %v", a, e)
					}
				default:
					t.Fatalf("amount %s: status %d: %v", a, st, body)
				}
				valid := st == http.StatusOK
				if want := a >= 1 && a <= paymock.MaxAmount; valid != want {
					t.Errorf("amount %s under %s: answered=%v, want %v", a, form, valid, want)
				}
				verdicts[form] = append(verdicts[form], valid)
			}
		})
	}
	for i, a := range amounts {
		if n, s := verdicts["amount=number"], verdicts["amount=string"]; i < len(n) && i < len(s) && n[i] != s[i] {
			t.Errorf("amount %s: answered as a number %v, as a string %v", a, n[i], s[i])
		}
	}
}

func TestCreate_RefusesAZeroAmountInEitherForm(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name, amount, message string
	}{
		{"number zero", `0`, "amount must be at least 0.01"},
		{"number zero with decimals", `0.00`, "amount must be at least 0.01"},
		{"number zero with an exponent", `0e2`, "amount must be at least 0.01"},
		{"number negative zero", `-0.0`, "amount must be at least 0.01"},
		{"number below a cent", `0.001`, "amount must be at least 0.01"},
		// A request's amount is a number only (DESIGN.md): the decimal
		// string is an answer's form, refused here whatever it holds.
		{"string zero with decimals", `"0.00"`, "amount must be a number"},
		{"string zero", `"0"`, "amount must be a number"},
		{"string amount", `"10.50"`, "amount must be a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := validCreate()
			b["amount"] = json.RawMessage(tc.amount)
			st, body, _ := env.do("POST", "/api/v1/payments", keyA, b)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", st, body)
			}
			e := errorOf(t, body)
			if e["type"] != "invalid_request_error" || e["code"] != "parameter_invalid" || e["param"] != "amount" || e["message"] != tc.message {
				t.Errorf("error %v, want invalid_request_error parameter_invalid on amount: %q", e, tc.message)
			}
			if errs, _ := e["errors"].([]any); len(errs) != 1 {
				t.Errorf("violations %v, want only the amount's", e["errors"])
			}
		})
	}
	if _, total, _ := env.store.List(t.Context(), merchantID(t, keyA), 0, 1); total != 0 {
		t.Errorf("%d payments stored after refused creates", total)
	}
}
