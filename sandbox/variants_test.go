// Response variants: each form passes the contract and shows in the answer.

package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// TestVariants_EachFormPassesTheContractAndAppears runs a whole flow
// (create, list, retrieve, complete, webhook) under each variant, with
// the validating client checking every answer against the contract, and
// looks for each form in the raw bytes sent.
func TestVariants_EachFormPassesTheContractAndAppears(t *testing.T) {
	tests := []struct {
		spec string
		want []string // substrings that must appear in some answer or webhook
		not  []string // substrings that must appear nowhere
	}{
		{"default", []string{`"amount":10.50`, `"status":"completed"`, `"payment_link":`}, []string{`"amount":"`, `"succeeded"`}},
		{"amount=string", []string{`"amount":"10.50"`}, []string{`"amount":10.50`}},
		{"status=succeeded", []string{`"status":"succeeded"`}, []string{`"status":"completed"`}},
		{"payment_link=omit", []string{`"next_action":{`}, []string{`"payment_link"`}},
		{"all", []string{`"amount":"10.50"`, `"amount":10.50`, `"status":"succeeded"`, `"status":"completed"`, `"payment_link":`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			rcv := newReceiver(t, nil)
			env := newEnv(t, withVariants(tc.spec, 3), withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
			var seen bytes.Buffer
			raw := func(method, path string, body any) {
				st, _, _ := env.do(method, path, keyA, body)
				if st >= 400 {
					t.Fatalf("%s %s: %d", method, path, st)
				}
			}
			// Capture raw bytes through a second client on the same transport.
			get := func(path string) {
				req, _ := http.NewRequest("GET", env.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+keyA)
				resp, err := env.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				seen.Write(b)
			}
			for range 12 {
				get("/api/v1/payments/" + env.create(keyA, nil)) // stays pending
				id := env.create(keyA, nil)
				raw("POST", "/_sandbox/payments/"+id+"/complete", nil)
				get("/api/v1/payments/" + id)
				get("/api/v1/payments?per_page=3")
			}
			env.advance(keyA, 0)
			for _, d := range rcv.deliveries() {
				seen.Write(d.Body)
			}
			all := seen.String()
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("%s never appeared", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(all, n) {
					t.Errorf("%s appeared", n)
				}
			}
			// The journal names the form each answer used.
			_, body, _ := env.do("GET", "/_sandbox/requests?per_page=100&status=200", keyA, nil)
			forms := map[string]bool{}
			for _, it := range body["items"].([]any) {
				if v, ok := it.(map[string]any)["variant"].(string); ok && strings.HasPrefix(it.(map[string]any)["path"].(string), "/api/") {
					forms[v] = true
				}
			}
			if tc.spec != "all" && (len(forms) != 1 || !forms[tc.spec]) {
				t.Errorf("journal variants %v", forms)
			}
			if tc.spec == "all" && len(forms) < 4 {
				t.Errorf("journal shows only %d forms: %v", len(forms), forms)
			}
		})
	}
}
