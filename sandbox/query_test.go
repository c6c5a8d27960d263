// Query parameters a list cannot take as given.

package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

func TestList_RefusesAParameterGivenTwice(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		path, query, param string
	}{
		{"/api/v1/payments", "page=1&page=2", "page"},
		{"/api/v1/payments", "page=1&page=0", "page"},
		{"/api/v1/payments", "per_page=5&per_page=500", "per_page"},
		{"/api/v1/payments", "page=1&per_page=5&page=1", "page"},
		{"/_sandbox/events", "page=1&page=2", "page"},
		{"/_sandbox/requests", "per_page=1&per_page=2", "per_page"},
	}
	for _, tt := range tests {
		t.Run(tt.path+"?"+tt.query, func(t *testing.T) {
			st, body, _ := env.do("GET", tt.path+"?"+tt.query, keyA, nil)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", st, body)
			}
			e := errorOf(t, body)
			if e["param"] != tt.param || e["code"] != "parameter_invalid" {
				t.Errorf("param %v code %v, want %s parameter_invalid", e["param"], e["code"], tt.param)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, "given once") {
				t.Errorf("message %q does not say the parameter is to be given once", msg)
			}
		})
	}
	// Once each, the same parameters are fine.
	for _, p := range []string{"/api/v1/payments?page=1&per_page=5", "/_sandbox/events?page=1", "/_sandbox/requests?per_page=2"} {
		if st, body, _ := env.do("GET", p, keyA, nil); st != http.StatusOK {
			t.Errorf("GET %s: %d %v", p, st, body)
		}
	}
}
