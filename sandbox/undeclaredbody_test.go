// Tests that a control-API call which takes no body refuses data sent
// to it, and takes none, blanks or {} as before.

package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestControlAPI_DataSentWhereNoBodyIsTakenIsRefusedAndChangesNothing(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	for _, tc := range []struct {
		name, method, path, contentType, body string
	}{
		{"a reason on fail", "POST", "/_sandbox/payments/" + id + "/fail", "application/json", `{"reason":"declined"}`},
		{"text on complete", "POST", "/_sandbox/payments/" + id + "/complete", "text/plain", "now please"},
		{"an array on expire", "POST", "/_sandbox/payments/" + id + "/expire", "application/json", `[]`},
		{"a form on reset", "POST", "/_sandbox/reset", "application/x-www-form-urlencoded", "all=1"},
		{"a name for a new key", "POST", "/_sandbox/api-keys", "application/json", `{"name":"ci"}`},
		{"a filter on clearing faults", "DELETE", "/_sandbox/faults", "application/json", `{"operation":"createPayment"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := env.request(tc.method, tc.path, keyA, tc.body)
			req.Header.Set("Content-Type", tc.contentType)
			st, body, _ := env.send(req)
			if st != http.StatusBadRequest || errorOf(t, body)["code"] != "body_not_taken" {
				t.Fatalf("%d %v, want 400 body_not_taken", st, body)
			}
		})
	}
	// Nothing above changed anything: the payment is still pending (no
	// reset forgot it) and no key was made.
	if s := env.get(keyA, id)["status"]; s != "pending" {
		t.Errorf("status %v after refused calls", s)
	}
	if _, body, _ := env.do("GET", "/_sandbox/api-keys", keyA, nil); strings.Contains(fmt.Sprint(body), "source:created") {
		t.Errorf("a key was created by a refused call: %v", body)
	}
	// None, blanks and {} are what clients send to such calls: taken.
	for _, body := range []string{"", "  \n", "{}", " { } "} {
		req := env.request("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
		if body != "" {
			req = env.request("POST", "/_sandbox/payments/"+id+"/complete", keyA, body)
		}
		if st, b, _ := env.send(req); st != http.StatusOK && st != http.StatusConflict {
			t.Errorf("complete with body %q: %d %v", body, st, b)
		}
	}
	if s := env.get(keyA, id)["status"]; s != "completed" {
		t.Errorf("status %v after a complete with no body", s)
	}
}
