// The client's side of the contract: checking, as a client would, that an
// answer is one the documents declare.

package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// For returns the document that governs a request path, or nil for paths
// outside both contracts (health, the documents themselves, pages).
func (ds *Documents) For(path string) *Document {
	switch {
	case strings.HasPrefix(path, "/api/"):
		return ds.Service
	case path == "/_sandbox/openapi.yaml":
		return nil
	case strings.HasPrefix(path, "/_sandbox/"):
		return ds.Sandbox
	}
	return nil
}

// CheckAnswer checks an answer the way a strict client would: a request
// to a declared operation must get a declared status with a body of its
// schema; any other request must get an Error object. reqBody is the body
// that was sent (nil for none). Paths outside both documents pass.
func (ds *Documents) CheckAnswer(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	d := ds.For(req.URL.Path)
	if d == nil {
		return nil
	}
	r := req.Clone(context.Background())
	head := r.Method == http.MethodHead
	if head {
		r.Method = http.MethodGet
	}
	rt, err := d.Match(r)
	if err != nil {
		var e struct {
			Error *json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == nil {
			return fmt.Errorf("%s %s: answer is not an error object: %s", req.Method, req.URL.Path, body)
		}
		return d.ValidateError(body)
	}
	if head {
		return nil // no body to check; the GET's answer is checked on its own
	}
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	return d.ValidateResponse(context.Background(), r, rt, status, header, body)
}
