// A second reading of the contract, from the YAML on disk with
// kin-openapi alone, for tests that check the server's own reading.

package contracttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// independent checks answers against the documents as a client generator
// would read them: the YAML files, routed and validated by kin-openapi
// with none of the contract package's prepared forms or compiled checks.
// A server that checks its answers with the contract package cannot then
// pass a test through a mistake of that package.
type independent struct {
	service routers.Router // openapi.yaml
	sandbox routers.Router // sandbox/openapi.yaml
}

var (
	readingsMu sync.Mutex
	// readings are loaded once per repository root and test binary: the
	// documents do not change while the tests run.
	readings = map[string]*independent{}
)

// Independent is a Checker over the contract files under root (the
// repository's top folder: openapi.yaml and sandbox/openapi.yaml), read
// with kin-openapi alone. A document that does not load fails the test.
func Independent(t testing.TB, root string) Checker {
	t.Helper()
	root = filepath.Clean(root)
	readingsMu.Lock()
	defer readingsMu.Unlock()
	if r, ok := readings[root]; ok {
		return r
	}
	r := &independent{}
	for name, router := range map[string]*routers.Router{"openapi.yaml": &r.service, "sandbox/openapi.yaml": &r.sandbox} {
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = true
		doc, err := loader.LoadFromFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if *router, err = gorillamux.NewRouter(doc); err != nil {
			t.Fatal(err)
		}
	}
	readings[root] = r
	return r
}

// CheckAnswer checks an answer to an API or control API call: a declared
// operation's answer against its responses, any other's as an Error
// object. Other paths (pages, health, the documents) pass.
func (r *independent) CheckAnswer(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	var router routers.Router
	switch {
	case strings.HasPrefix(req.URL.Path, "/api/"):
		router = r.service
	case strings.HasPrefix(req.URL.Path, "/_sandbox/") && req.URL.Path != "/_sandbox/openapi.yaml":
		router = r.sandbox
	default:
		return nil
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		// Unknown routes and methods: the answer must still be an Error.
		var e map[string]any
		if json.Unmarshal(body, &e) != nil || e["error"] == nil {
			return fmt.Errorf("answer is not an error object: %s", body)
		}
		return nil
	}
	sent := req.Clone(context.Background())
	sent.Body = io.NopCloser(bytes.NewReader(reqBody))
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.EnableFormatValidation()},
		// kin decodes no XML; tests of XML answers parse them themselves.
		ExcludeResponseBody: strings.HasPrefix(header.Get("Content-Type"), "application/xml")}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: sent, PathParams: params, Route: route, Options: opts},
		Status:                 status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("response validation: %w", err)
	}
	return nil
}
