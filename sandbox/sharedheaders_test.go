// Tests that a JSON answer's Content-Type value is one slice shared by
// every answer, made once rather than for each, and never changed.

package sandbox

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// inProcess serves requests through a handler with a recorder, keeping
// the last one: its header map is the very map the handler wrote.
type inProcess struct {
	h    http.Handler
	last *httptest.ResponseRecorder
}

func (p *inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	p.last = httptest.NewRecorder()
	p.h.ServeHTTP(p.last, r)
	return p.last.Result(), nil
}

func TestAnswers_ShareOneJSONContentTypeValue(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	body, err := json.Marshal(validCreate())
	if err != nil {
		t.Fatal(err)
	}
	in := &inProcess{h: env.sb.Handler()}
	// Every answer is checked against the contract on the way back.
	client := &http.Client{Transport: checking(t, in, envConfig{})}
	var shared *string
	for _, c := range []struct {
		name, method, path, key string
		body                    []byte
		status                  int
	}{
		{"create", "POST", "/api/v1/payments", keyA, body, http.StatusCreated},
		{"retrieve", "GET", "/api/v1/payments/" + id, keyA, nil, http.StatusOK},
		{"list", "GET", "/api/v1/payments?per_page=2", keyA, nil, http.StatusOK},
		{"unknown payment", "GET", "/api/v1/payments/pay_000000000000000000000000", keyA, nil, http.StatusNotFound},
		{"no key", "GET", "/api/v1/payments/" + id, "", nil, http.StatusUnauthorized},
		{"create again", "POST", "/api/v1/payments", keyA, body, http.StatusCreated},
	} {
		req, err := http.NewRequest(c.method, "http://paymock.test"+c.path, bytes.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q, want %d application/json", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), c.status)
		}
		v := in.last.Header()["Content-Type"]
		if len(v) != 1 {
			t.Fatalf("%s: Content-Type %q", c.name, v)
		}
		if shared == nil {
			shared = &v[0]
		} else if &v[0] != shared {
			t.Errorf("%s: the Content-Type value was made for this answer, not shared", c.name)
		}
		if *shared != "application/json" {
			t.Fatalf("after %s, the shared Content-Type value is %q", c.name, *shared)
		}
	}
}
