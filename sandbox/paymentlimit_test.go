// The per-merchant cap on stored payments (--max-payments): one tenant of
// a shared sandbox cannot fill the machine with payments.

package sandbox

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// totalItems is the merchant's payment count as its list reports it.
func (e *testEnv) totalItems(key string) float64 {
	e.t.Helper()
	st, list, _ := e.do("GET", "/api/v1/payments", key, nil)
	if st != http.StatusOK {
		e.t.Fatalf("list: %d %v", st, list)
	}
	return list["pagination"].(map[string]any)["total_items"].(float64)
}

// fill creates payments for key until it holds n.
func (e *testEnv) fill(key string, n int) {
	e.t.Helper()
	for range n {
		e.create(key, nil)
	}
}

// refusedAtCap checks that a create of key is refused as the cap of max
// payments, and that the refusal stored nothing.
func (e *testEnv) refusedAtCap(key string, max int) {
	e.t.Helper()
	st, body, _ := e.do("POST", "/api/v1/payments", key, validCreate())
	if st != http.StatusBadRequest {
		e.t.Fatalf("create past the cap: %d %v, want 400", st, body)
	}
	er := errorOf(e.t, body)
	if er["type"] != "invalid_request_error" || er["code"] != "payment_limit" {
		e.t.Errorf("create past the cap: %v, want invalid_request_error payment_limit", er)
	}
	msg, _ := er["message"].(string)
	for _, want := range []string{"at most " + itoa(max) + " payments", "POST /_sandbox/reset"} {
		if !strings.Contains(msg, want) {
			e.t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if n := e.totalItems(key); n != float64(max) {
		e.t.Errorf("%v payments after a refused create, want %d", n, max)
	}
}

func TestPaymentLimit_CreatesPastTheCapAreRefused(t *testing.T) {
	const max = 3
	tests := []struct {
		name string
		// then runs once the merchant keyA holds max payments and a
		// create of it has been refused.
		then func(t *testing.T, env *testEnv)
	}{
		{"and the cap holds on a second try", func(t *testing.T, env *testEnv) {
			env.refusedAtCap(keyA, max)
		}},
		{"and other merchants are unaffected", func(t *testing.T, env *testEnv) {
			env.fill(keyB, max)
			env.refusedAtCap(keyB, max)
			if n := env.totalItems(keyA); n != max {
				t.Errorf("a's %v payments changed with b's creates, want %d", n, max)
			}
		}},
		{"and a reset frees room", func(t *testing.T, env *testEnv) {
			if st, body, _ := env.do("POST", "/_sandbox/reset", keyA, nil); st != http.StatusNoContent {
				t.Fatalf("reset: %d %v", st, body)
			}
			env.fill(keyA, max)
			env.refusedAtCap(keyA, max)
		}},
		{"and so is one for a new customer", func(t *testing.T, env *testEnv) {
			st, body, _ := env.do("POST", "/api/v1/payments", keyA, func() map[string]any {
				b := validCreate()
				b["customer"].(map[string]any)["email"] = "someone.new@example.com"
				return b
			}())
			if st != http.StatusBadRequest || errorOf(t, body)["code"] != "payment_limit" {
				t.Errorf("create for a new customer past the cap: %d %v, want 400 payment_limit", st, body)
			}
		}},
		{"and payments moved to their outcome still count", func(t *testing.T, env *testEnv) {
			_, list, _ := env.do("GET", "/api/v1/payments", keyA, nil)
			id := list["items"].([]any)[0].(map[string]any)["id"].(string)
			if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
				t.Fatalf("complete: %d %v", st, body)
			}
			env.refusedAtCap(keyA, max)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, withMaxPayments(max))
			env.fill(keyA, max)
			env.refusedAtCap(keyA, max)
			tt.then(t, env)
		})
	}
}

func TestPaymentLimit_ForgettingAnIdleMerchantFreesItsRoom(t *testing.T) {
	if os.Getenv("PAYMOCK_TEST_STORE") == "postgres" {
		// A shared store keeps a forgotten merchant's payments for the
		// other replicas (paymock.Backend.Release): only a reset frees them.
		t.Skip("on PostgreSQL the idle TTL forgets no payment")
	}
	const max = 2
	env := newEnv(t, withMaxPayments(max))
	idle := "sk_test_idle_at_cap"
	for range max {
		id := env.create(idle, nil)
		env.do("POST", "/_sandbox/payments/"+id+"/complete", idle, nil) // no work pending
	}
	env.refusedAtCap(idle, max)
	if gone := env.sb.ForgetIdle(time.Now().Add(DefaultMerchantIdleTTL + time.Minute)); len(gone) != 1 {
		t.Fatalf("forgot %v, want the idle merchant", gone)
	}
	env.fill(idle, max)
	env.refusedAtCap(idle, max)
}
