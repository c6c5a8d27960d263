// Replays exchanges recorded against paymock through libopenapi-validator
// and reports, as JSON, every violation it finds and what it thinks of
// both documents.

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// exchange is one request and its answer, as the interop test recorded
// them on the wire.
type exchange struct {
	Doc            string              `json:"doc"`
	Method         string              `json:"method"`
	Target         string              `json:"target"` // path and query
	RequestHeader  map[string][]string `json:"request_header"`
	RequestBody    []byte              `json:"request_body"`
	Status         int                 `json:"status"`
	ResponseHeader map[string][]string `json:"response_header"`
	ResponseBody   []byte              `json:"response_body"`
}

// finding is one violation, flattened for the test to read and print.
type finding struct {
	Type    string   `json:"type"` // libopenapi-validator's ValidationType
	SubType string   `json:"sub_type"`
	Message string   `json:"message"`
	Reason  string   `json:"reason"`
	Schema  []string `json:"schema,omitempty"` // each schema failure: location: reason
}

type docReport struct {
	Name string `json:"name"`
	// Model holds the errors of building the v3 model; Document those of
	// validating the document against the OpenAPI 3.0 schema.
	Model    []string  `json:"model"`
	Document []finding `json:"document"`
}

type exchangeReport struct {
	Request  []finding `json:"request"`
	Response []finding `json:"response"`
}

type report struct {
	Documents []docReport      `json:"documents"`
	Exchanges []exchangeReport `json:"exchanges"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "libopenapi:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("libopenapi", flag.ContinueOnError)
	root := fs.String("root", "", "the paymock checkout whose documents are read")
	traffic := fs.String("traffic", "", "a JSON file of recorded exchanges")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var exchanges []exchange
	data, err := os.ReadFile(*traffic)
	if err != nil {
		return fmt.Errorf("read traffic: %w", err)
	}
	if err := json.Unmarshal(data, &exchanges); err != nil {
		return fmt.Errorf("decode traffic: %w", err)
	}

	var rep report
	validators := map[string]validator.Validator{}
	for _, name := range []string{"openapi.yaml", "sandbox/openapi.yaml"} {
		v, dr, err := load(filepath.Join(*root, filepath.FromSlash(name)))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		dr.Name = name
		rep.Documents = append(rep.Documents, dr)
		validators[name] = v
	}
	for i, ex := range exchanges {
		v := validators[ex.Doc]
		if v == nil {
			return fmt.Errorf("exchange %d: no document %q", i, ex.Doc)
		}
		req, err := ex.request()
		if err != nil {
			return fmt.Errorf("exchange %d: %w", i, err)
		}
		var er exchangeReport
		_, errs := v.ValidateHttpRequestSync(req)
		er.Request = flatten(errs)
		// A fresh request: the one above had its body read.
		req, _ = ex.request()
		_, errs = v.ValidateHttpResponse(req, ex.response(req))
		er.Response = flatten(errs)
		rep.Exchanges = append(rep.Exchanges, er)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// load builds a document's model and a validator that checks formats, as
// paymock's own validation does.
func load(path string) (validator.Validator, docReport, error) {
	var dr docReport
	spec, err := os.ReadFile(path)
	if err != nil {
		return nil, dr, fmt.Errorf("read: %w", err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, dr, fmt.Errorf("parse: %w", err)
	}
	if _, err := doc.BuildV3Model(); err != nil {
		// The model is still built when libopenapi reports errors; they
		// are findings, not a reason to stop.
		for _, e := range unwrapAll(err) {
			dr.Model = append(dr.Model, e.Error())
		}
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions(), config.WithContentAssertions())
	if len(errs) > 0 {
		return nil, dr, fmt.Errorf("validator: %v", errs)
	}
	_, derrs := v.ValidateDocument()
	dr.Document = flatten(derrs)
	return v, dr, nil
}

// unwrapAll lists the errors joined in err.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func flatten(errs []*verrors.ValidationError) []finding {
	out := []finding{}
	for _, e := range errs {
		f := finding{Type: e.ValidationType, SubType: e.ValidationSubType, Message: e.Message, Reason: e.Reason}
		for _, s := range e.SchemaValidationErrors {
			where := s.FieldPath
			if where == "" {
				where = s.KeywordLocation
			}
			f.Schema = append(f.Schema, where+": "+s.Reason)
		}
		out = append(out, f)
	}
	return out
}

// request rebuilds the recorded request, addressed as paymock's document
// serves it (servers: /), so that the validator matches its path alone.
func (ex exchange) request() (*http.Request, error) {
	var body io.Reader = http.NoBody
	if ex.RequestBody != nil {
		body = bytes.NewReader(ex.RequestBody)
	}
	req, err := http.NewRequest(ex.Method, "http://paymock.test"+ex.Target, body)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	for k, vs := range ex.RequestHeader {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return req, nil
}

func (ex exchange) response(req *http.Request) *http.Response {
	h := http.Header{}
	for k, vs := range ex.ResponseHeader {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return &http.Response{
		StatusCode:    ex.Status,
		Status:        fmt.Sprintf("%d %s", ex.Status, strings.TrimSpace(http.StatusText(ex.Status))),
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(ex.ResponseBody)),
		ContentLength: int64(len(ex.ResponseBody)),
		Request:       req,
	}
}
