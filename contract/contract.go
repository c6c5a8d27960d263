// Package contract loads paymock's two OpenAPI documents (the service
// contract and the sandbox control API's), routes requests to their
// operations, and validates requests and responses against them, turning
// kin-openapi's errors into violations in the user's words. The server,
// the test helpers and client-side checks all go through it, so every
// reader of the documents reads them the same way.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract/internal/prepared"
)

// Document is one OpenAPI document, loaded and compiled once. It is
// immutable after Load and safe for concurrent use.
type Document struct {
	doc    *openapi3.T
	router routers.Router
	// segments routes as router does, faster, when the document's paths
	// allow it (nil otherwise).
	segments    *segmentRouter
	errorSchema *openapi3.Schema
	reqOpts     *openapi3filter.Options
	respOpts    *openapi3filter.Options
	// headOpts check an answer for status, headers and content type only:
	// an XML answer (the report's JUnit form), since kin has no XML decoder
	// and adding one means writing to its process-wide registry; and a
	// HEAD's answer, which has no body.
	headOpts *openapi3filter.Options
	// reqOptsNoBody are reqOpts for a request whose body a compiled
	// check has already found valid: kin checks the rest.
	reqOptsNoBody *openapi3filter.Options
	ops           []Operation
	// checks are the compiled checks of every request and response body
	// schema, and responses the responses declared under an exact status,
	// both read-only after Load.
	checks    map[*openapi3.Schema]*check
	responses map[responseKey]*openapi3.Response
	// jsonChecks are responseCheck's answers for the Content-Type
	// application/json, found once.
	jsonChecks map[responseKey]*check
	// jsonBodies are the same of each operation's request body.
	jsonBodies map[*openapi3.Operation]*check
	// params are the compiled checks of each operation's parameters and
	// security, for the operations the model covers.
	params map[*openapi3.Operation]*opParams
	// payModels are the response checks resolved for the keys of
	// payments the encoder writes by hand (ValidatePaymentResponse).
	payModels map[*check]*paymentModel
	// blankMissing are, for each operation with a JSON request body, the
	// paths of the strings it requires, whose empty values are missing.
	blankMissing map[*openapi3.Operation]map[string]bool

	// prepare, when set, fills the fields above on first use (through
	// ready): a run that never calls the control API never pays for its
	// document.
	once    sync.Once
	prepare func(*Document)
}

// ready fills a lazily loaded document; every exported method calls it
// first.
func (d *Document) ready() {
	if d.prepare != nil {
		d.once.Do(func() { d.prepare(d) })
	}
}

// responseKey is an operation's response under one status.
type responseKey struct {
	op     *openapi3.Operation
	status int
}

// Documents are the two contracts a server serves.
type Documents struct {
	Service *Document // openapi.yaml: the payments service
	Sandbox *Document // sandbox/openapi.yaml: the control API
}

// Embedded returns the documents embedded in the binary, loaded on first
// use and shared by every server of the process: they are as immutable as
// the embedded bytes they come from (paymocktest starts many servers).
func Embedded() (*Documents, error) { return shared() }

// Load loads the document at name in docs, resolving references to the
// other documents in docs, and validates it.
func Load(docs fs.FS, name string) (*Document, error) {
	doc, err := prepared.LoadYAML(docs, name)
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	d := &Document{}
	if err := d.build(doc); err != nil {
		return nil, err
	}
	return d, nil
}

// build compiles a loaded document: its router, validation options and
// body checks.
func (d *Document) build(doc *openapi3.T) error {
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return fmt.Errorf("route contract: %w", err)
	}
	var errorSchema *openapi3.Schema
	if ref := doc.Components.Schemas["Error"]; ref != nil {
		errorSchema = ref.Value
	}
	formats := []openapi3.SchemaValidationOption{
		openapi3.EnableFormatValidation(),
		openapi3.WithStringFormatValidator("email", openapi3.NewCallbackValidator(checkEmail)),
		openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(checkURI)),
	}
	d.doc = doc
	d.router = router
	d.segments = newSegmentRouter(doc)
	d.errorSchema = errorSchema
	d.reqOpts = &openapi3filter.Options{
		MultiError:         true,
		AuthenticationFunc: securityCheck,
		// Handlers apply defaults; kin writing them into the query would
		// hide an empty "page=" that must be refused.
		SkipSettingDefaults:     true,
		SchemaValidationOptions: formats,
	}
	d.respOpts = &openapi3filter.Options{
		MultiError:              true,
		IncludeResponseStatus:   true,
		SchemaValidationOptions: formats,
	}
	d.headOpts = &openapi3filter.Options{
		MultiError:            true,
		IncludeResponseStatus: true,
		ExcludeResponseBody:   true,
	}
	noBody := *d.reqOpts
	noBody.ExcludeRequestBody = true
	d.reqOptsNoBody = &noBody
	d.ops = operations(doc)
	d.blankMissing = map[*openapi3.Operation]map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					d.blankMissing[op] = requiredStrings(mt.Schema.Value)
				}
			}
		}
	}
	d.compileChecks()
	d.compilePaymentModels()
	d.compileParams()
	return nil
}

var (
	errNotEmail = errors.New("must be a valid email address")
	errNotURI   = errors.New("must be an absolute URI")
)

func checkEmail(s string) error {
	if !paymock.ValidEmail(s) {
		return errNotEmail
	}
	return nil
}

// Route is a request matched to one operation of a document, with its
// path parameters unescaped.
type Route struct {
	*routers.Route
	Params map[string]string
}

// OperationID is the matched operation's id.
func (rt *Route) OperationID() string { return rt.Operation.OperationID }

// NeedsAuth reports whether the operation requires a bearer key.
func (rt *Route) NeedsAuth() bool {
	sec := rt.Operation.Security
	if sec == nil {
		sec = &rt.Spec.Security
	}
	return len(*sec) > 0
}

// TakesBody reports whether the operation has a request body.
func (rt *Route) TakesBody() bool { return rt.Operation.RequestBody != nil }

// Match finds the operation of a request: a 404 or 405 when the path or
// the method is not in the document.
func (d *Document) Match(r *http.Request) (*Route, error) {
	rt := new(Route)
	if err := d.MatchTo(r, rt); err != nil {
		return nil, err
	}
	return rt, nil
}

// MatchTo is Match into a Route of the caller's, which the server keeps
// in each request's pooled exchange rather than allocating one.
func (d *Document) MatchTo(r *http.Request, rt *Route) error {
	d.ready()
	var route *routers.Route
	var params map[string]string
	var err error
	if d.segments != nil {
		route, params, err = d.segments.FindRoute(r)
	} else {
		route, params, err = d.router.FindRoute(r)
	}
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return &StatusError{Status: http.StatusMethodNotAllowed, Allow: d.allowed(r),
			Err: &paymock.Error{Type: paymock.InvalidRequest, Code: "method_not_allowed", Message: r.Method + " is not allowed on " + ShortPath(r.URL.Path)}}
	case err != nil:
		msg := "no such route: " + r.Method + " " + ShortPath(r.URL.Path)
		if hint := d.suggest(r); hint != "" {
			msg += "; did you mean " + hint + "?"
		}
		return WithStatus(http.StatusNotFound, paymock.NotFound, "route_not_found", msg)
	}
	// Path parameters arrive escaped; validation and handlers want the value.
	for k, v := range params {
		if u, err := url.PathUnescape(v); err == nil {
			params[k] = u
		}
	}
	*rt = Route{Route: route, Params: params}
	return nil
}

// allowed lists the methods the document declares on r's path, for the
// Allow header of a 405.
func (d *Document) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, _, err := d.router.FindRoute(r2); err == nil {
			out = append(out, m)
			if m == http.MethodGet {
				out = append(out, http.MethodHead)
			}
		}
	}
	return out
}

// ShortPath cuts a path for messages and logs: a client may send
// kilobytes of path, and neither an answer nor a log line should echo it.
func ShortPath(p string) string {
	const max = 256
	if len(p) <= max {
		return p
	}
	return p[:max] + "…"
}

// authKey carries whether the bearer check passed into kin's security
// validation.
type authKey struct{}

// ErrUnauthenticated is returned by ValidateRequest for an operation that
// needs a key when none was accepted.
var ErrUnauthenticated = errors.New("the operation needs an API key")

// ValidateRequest checks parameters, body and security of a request,
// listing every violation at once. body is what was read of the request
// (nil for an operation without one); authenticated says whether the
// bearer key was accepted.
func (d *Document) ValidateRequest(ctx context.Context, r *http.Request, rt *Route, body []byte, authenticated bool) error {
	return d.ValidateParsedRequest(ctx, r, rt, JSONBody{Data: body}, authenticated)
}

// ValidateParsedRequest is ValidateRequest of a body ReadParsedJSONBody
// read: its parse, when it kept one, is checked rather than its bytes
// parsed again. The parse is the caller's to release.
func (d *Document) ValidateParsedRequest(ctx context.Context, r *http.Request, rt *Route, jb JSONBody, authenticated bool) error {
	d.ready()
	body := jb.Data
	bodyValid := body != nil && d.bodyValid(rt, r.Header.Get("Content-Type"), body, jb.plain)
	if (bodyValid || body == nil && rt.Operation.RequestBody == nil) && d.paramsValid(r, rt, authenticated) {
		return nil // kin would find nothing: compiled checks said so of every part
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	ctx = context.WithValue(ctx, authKey{}, authenticated)
	opts := d.reqOpts
	if bodyValid {
		// kin would find nothing in the body: it checks the rest alone,
		// and its answer is the same as if it had read the body too.
		opts = d.reqOptsNoBody
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: rt.Params, Route: rt.Route, Options: opts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		var secErr *openapi3filter.SecurityRequirementsError
		if errors.As(err, &secErr) {
			return ErrUnauthenticated
		}
		blanks := map[string]bool{}
		vs := violationsAt(err, "", blanks)
		blankAsMissing(vs, blanks, d.blankMissing[rt.Operation])
		return paymock.Invalid(tidy(vs)...)
	}
	return nil
}

// securityCheck is kin's AuthenticationFunc. The bearer key was resolved
// before the body was read (so a bad key is a 401 whatever the body); here
// kin confirms that every operation needing security got a merchant.
func securityCheck(ctx context.Context, _ *openapi3filter.AuthenticationInput) error {
	if ok, _ := ctx.Value(authKey{}).(bool); !ok {
		return ErrUnauthenticated
	}
	return nil
}

// ValidateResponse checks what a handler answered against the operation.
func (d *Document) ValidateResponse(ctx context.Context, r *http.Request, rt *Route, status int, header http.Header, body []byte) error {
	d.ready()
	opts := d.respOpts
	if mt, _, _ := mediaType(header.Get("Content-Type")); mt == "application/xml" {
		declared := false
		if ref := rt.Operation.Responses.Status(status); ref != nil && ref.Value != nil {
			_, declared = ref.Value.Content["application/xml"]
		}
		if !declared {
			return fmt.Errorf("status %d declares no application/xml content", status)
		}
		opts = d.headOpts
	} else if r.Method != http.MethodHead && d.responseValid(rt, status, header, body) {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: rt.Params, Route: rt.Route, Options: opts},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	}
	return openapi3filter.ValidateResponse(ctx, in)
}

// ValidateResponseHeaders checks an answer's status and headers against
// the operation, leaving its body out: the answer to a HEAD, which asks
// for the GET's answer without its body (RFC 9110 9.3.2). r is the GET
// the route was matched for.
func (d *Document) ValidateResponseHeaders(ctx context.Context, r *http.Request, rt *Route, status int, header http.Header) error {
	d.ready()
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: rt.Params, Route: rt.Route, Options: d.headOpts},
		Status:                 status,
		Header:                 header,
		Body:                   http.NoBody,
		Options:                d.headOpts,
	}
	return openapi3filter.ValidateResponse(ctx, in)
}

// ValidateError checks an error answer given outside any operation (an
// unknown route, say) against the Error schema.
func (d *Document) ValidateError(body []byte) error {
	d.ready()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	return d.errorSchema.VisitJSON(v, openapi3.MultiErrors())
}

// Operation is one operation of a document and its declared statuses.
type Operation struct {
	ID, Method, Path string
	Statuses         []int
}

// Operations lists the document's operations in order of paths (sorted)
// and methods, with their numeric response statuses.
func (d *Document) Operations() []Operation {
	d.ready()
	return d.ops
}

func operations(doc *openapi3.T) []Operation {
	var out []Operation
	paths := doc.Paths.InMatchingOrder()
	slices.Sort(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		methods := make([]string, 0)
		for m := range item.Operations() {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		for _, m := range methods {
			op := item.GetOperation(m)
			o := Operation{ID: op.OperationID, Method: m, Path: p}
			for code := range op.Responses.Map() {
				if n, err := strconv.Atoi(code); err == nil {
					o.Statuses = append(o.Statuses, n)
				}
			}
			slices.Sort(o.Statuses)
			out = append(out, o)
		}
	}
	return out
}
