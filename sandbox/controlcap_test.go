// The control API at the open-mode merchant cap: a new key's first call
// is refused with the 429 the control document declares.

package sandbox

import (
	"net/http"
	"testing"
)

func TestControlAPI_NewKeyAtTheCapGetsTheDeclared429(t *testing.T) {
	env := newEnv(t, withMaxMerchants(1))
	env.create("sk_test_holder", nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/_sandbox/clock"},
		{"GET", "/_sandbox/faults"},
		{"POST", "/_sandbox/reset"},
	} {
		st, body, _ := env.do(c.method, c.path, "sk_test_one_too_many", nil)
		if st != http.StatusTooManyRequests || errorOf(t, body)["code"] != "merchant_limit" {
			t.Errorf("%s %s with a new key at the cap: %d %v, want 429 merchant_limit", c.method, c.path, st, body)
		}
	}
}
