// The contract check: every request is validated against the OpenAPI
// document before a handler sees it, and every response before the client
// does.
package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/paymock/paymock"
)

// contract is one OpenAPI document, loaded and compiled once at start.
type contract struct {
	doc         *openapi3.T
	router      routers.Router
	errorSchema *openapi3.Schema
	reqOpts     *openapi3filter.Options
	respOpts    *openapi3filter.Options
	// xmlOpts check an XML answer (the report's JUnit form) for status,
	// headers and content type only: kin has no XML decoder, and adding one
	// means writing to its process-wide registry.
	xmlOpts *openapi3filter.Options
}

// loadContract loads the document at path in docs, resolving references
// to the other documents in docs.
func loadContract(docs fs.FS, name string) (*contract, error) {
	data, err := fs.ReadFile(docs, name)
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		return fs.ReadFile(docs, path.Clean(strings.TrimPrefix(u.Path, "/")))
	}
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: name})
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate contract: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route contract: %w", err)
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
	return &contract{
		doc:         doc,
		router:      router,
		errorSchema: errorSchema,
		reqOpts: &openapi3filter.Options{
			MultiError:         true,
			AuthenticationFunc: securityCheck,
			// Handlers apply defaults; kin writing them into the query would
			// hide an empty "page=" that must be refused.
			SkipSettingDefaults:     true,
			SchemaValidationOptions: formats,
		},
		respOpts: &openapi3filter.Options{
			MultiError:              true,
			IncludeResponseStatus:   true,
			SchemaValidationOptions: formats,
		},
		xmlOpts: &openapi3filter.Options{
			MultiError:            true,
			IncludeResponseStatus: true,
			ExcludeResponseBody:   true,
		},
	}, nil
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

func checkURI(s string) error {
	if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
		return errNotURI
	}
	return nil
}

// match finds the operation of a request: a 404 or 405 when the path or the
// method is not in the document.
func (ct *contract) match(r *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := ct.router.FindRoute(r)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return nil, nil, withStatus(http.StatusMethodNotAllowed, paymock.InvalidRequest, "method_not_allowed",
			r.Method+" is not allowed on "+r.URL.Path)
	case err != nil:
		return nil, nil, withStatus(http.StatusNotFound, paymock.NotFound, "route_not_found", "no such route: "+r.Method+" "+r.URL.Path)
	}
	// Path parameters arrive escaped; validation and handlers want the value.
	for k, v := range params {
		if u, err := url.PathUnescape(v); err == nil {
			params[k] = u
		}
	}
	return route, params, nil
}

// readBody reads the body of an operation that takes one, once, under the
// limit, and checks that it is JSON at all before schema validation.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, withStatus(http.StatusBadRequest, paymock.InvalidRequest, "body_unreadable", "the request body could not be read")
	}
	if int64(len(data)) > limit {
		return nil, withStatus(http.StatusRequestEntityTooLarge, paymock.InvalidRequest, "body_too_large",
			fmt.Sprintf("the request body is larger than %d bytes", limit))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, paymock.Invalid(paymock.Violation{Code: "body_missing", Message: "a JSON request body is required"})
	}
	ct := r.Header.Get("Content-Type")
	mt, _, perr := mime.ParseMediaType(ct)
	if perr != nil || mt != "application/json" {
		return nil, withStatus(http.StatusUnsupportedMediaType, paymock.InvalidRequest, "unsupported_media_type",
			"the request body must be sent with Content-Type: application/json")
	}
	if !json.Valid(data) {
		var v any
		msg := "the request body is not valid JSON"
		var se *json.SyntaxError
		if err := json.Unmarshal(data, &v); errors.As(err, &se) {
			msg = fmt.Sprintf("the request body is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return nil, paymock.Invalid(paymock.Violation{Code: "invalid_json", Message: msg})
	}
	return data, nil
}

// authKey carries the merchant resolved by the bearer check into kin's
// security validation.
type authKey struct{}

// validateRequest checks parameters, body and security of a request whose
// merchant was already resolved (nil for an operation without security),
// listing every violation at once.
func (ct *contract) validateRequest(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte, m *paymock.Merchant) error {
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	ctx = context.WithValue(ctx, authKey{}, m)
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: ct.reqOpts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		var secErr *openapi3filter.SecurityRequirementsError
		if errors.As(err, &secErr) {
			return authFailure(nil)
		}
		return paymock.Invalid(violations(err)...)
	}
	return nil
}

func needsAuth(route *routers.Route) bool {
	sec := route.Operation.Security
	if sec == nil {
		sec = &route.Spec.Security
	}
	return len(*sec) > 0
}

// validateResponse checks what a handler answered against the operation.
func (ct *contract) validateResponse(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) error {
	opts := ct.respOpts
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt == "application/xml" {
		declared := false
		if ref := route.Operation.Responses.Status(status); ref != nil && ref.Value != nil {
			_, declared = ref.Value.Content["application/xml"]
		}
		if !declared {
			return fmt.Errorf("status %d declares no application/xml content", status)
		}
		opts = ct.xmlOpts
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	}
	return openapi3filter.ValidateResponse(ctx, in)
}

// validateError checks an error answer given outside any operation (an
// unknown route, say) against the Error schema.
func (ct *contract) validateError(body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	return ct.errorSchema.VisitJSON(v, openapi3.MultiErrors())
}

// violations turns kin-openapi's errors into dotted-path violations with
// readable messages, never its "Schema:/Value:" dumps. They are sorted by
// param so the same request always gets the same answer.
func violations(err error) []paymock.Violation {
	var out []paymock.Violation
	var walk func(err error, param string)
	walk = func(err error, param string) {
		// A type switch, not errors.As: a RequestError unwraps to its
		// inner errors, and its Parameter must not be skipped.
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner, param)
			}
		case *openapi3filter.RequestError:
			p := param
			if e.Parameter != nil {
				p = e.Parameter.Name
			}
			switch {
			case e.Err == nil:
				out = append(out, paymock.Violation{Param: p, Code: "parameter_invalid", Message: strings.TrimSpace(p + " " + e.Reason)})
			case errors.Is(e.Err, openapi3filter.ErrInvalidRequired):
				out = append(out, paymock.Violation{Param: p, Code: "parameter_missing", Message: p + " is required"})
			default:
				walk(e.Err, p)
			}
		case *openapi3.SchemaError:
			out = append(out, schemaViolation(e, param))
		case *openapi3filter.ParseError:
			out = append(out, paymock.Violation{Param: param, Code: "parameter_invalid", Message: param + " " + parseReason(e)})
		default:
			if next := errors.Unwrap(err); next != nil {
				walk(next, param)
				return
			}
			out = append(out, paymock.Violation{Param: param, Code: "parameter_invalid", Message: strings.TrimSpace(param + " is invalid")})
		}
	}
	walk(err, "")
	slices.SortStableFunc(out, func(a, b paymock.Violation) int { return strings.Compare(a.Param, b.Param) })
	return out
}

// unsupported finds the name kin gives an unknown property in its reason.
var unsupported = regexp.MustCompile(`^property "(.*)" is unsupported$`)

func parseReason(pe *openapi3filter.ParseError) string {
	var inner *openapi3filter.ParseError
	if errors.As(pe.Cause, &inner) && inner != pe {
		return parseReason(inner)
	}
	switch {
	case strings.Contains(pe.Reason, "integer"):
		return "must be an integer"
	case strings.Contains(pe.Reason, "number"):
		return "must be a number"
	case strings.Contains(pe.Reason, "boolean"):
		return "must be a boolean"
	}
	return "is not a valid value"
}

// schemaViolation words one schema failure for a person; base is the
// parameter the schema belongs to ("" for a body).
func schemaViolation(se *openapi3.SchemaError, base string) paymock.Violation {
	path := se.JSONPointer()
	field := se.SchemaField
	if m := unsupported.FindStringSubmatch(se.Reason); m != nil {
		path, field = append(path, m[1]), "additionalProperties"
	}
	if base != "" {
		path = append([]string{base}, path...)
	}
	param := strings.Join(path, ".")
	name := param
	if name == "" {
		name = "the request body"
	}
	s := se.Schema
	v := paymock.Violation{Param: param, Code: "parameter_invalid"}
	switch field {
	case "required":
		v.Code, v.Message = "parameter_missing", name+" is required"
	case "additionalProperties":
		v.Code, v.Message = "parameter_unknown", name+" is not a known field"
	case "type":
		v.Message = name + " must be " + article(s.Type.Slice())
		if s.Nullable {
			v.Message += " or null"
		}
	case "enum":
		v.Message = name + " must be one of " + joinEnum(s.Enum)
	case "nullable":
		v.Message = name + " must not be null"
		if s.Type != nil && len(s.Type.Slice()) > 0 {
			v.Message += ": it must be " + article(s.Type.Slice())
		}
	case "exclusiveMinimum":
		v.Message = fmt.Sprintf("%s must be greater than %v", name, num(s.Min))
	case "exclusiveMaximum":
		v.Message = fmt.Sprintf("%s must be less than %v", name, num(s.Max))
	case "minimum":
		if b := s.ExclusiveMin.Bool; b != nil && *b {
			v.Message = fmt.Sprintf("%s must be greater than %v", name, num(s.Min))
		} else {
			v.Message = fmt.Sprintf("%s must be at least %v", name, num(s.Min))
		}
	case "maximum":
		if b := s.ExclusiveMax.Bool; b != nil && *b {
			v.Message = fmt.Sprintf("%s must be less than %v", name, num(s.Max))
		} else {
			v.Message = fmt.Sprintf("%s must be at most %v", name, num(s.Max))
		}
	case "minLength":
		if s.MinLength == 1 {
			v.Message = name + " must not be empty"
		} else {
			v.Message = fmt.Sprintf("%s must be at least %d characters", name, s.MinLength)
		}
	case "maxLength":
		v.Message = fmt.Sprintf("%s must be at most %d characters", name, *s.MaxLength)
	case "pattern":
		v.Message = fmt.Sprintf("%s must match the pattern %s", name, s.Pattern)
	case "format":
		v.Message = name + " " + formatReason(s.Format)
	case "maxItems":
		v.Message = fmt.Sprintf("%s must have at most %d items", name, *s.MaxItems)
	default:
		// kin's Reason never holds the value (so no card data), only the rule.
		v.Message = name + ": " + se.Reason
	}
	return v
}

func formatReason(format string) string {
	switch format {
	case "email":
		return errNotEmail.Error()
	case "uri":
		return errNotURI.Error()
	case "date-time":
		return "must be a date-time"
	}
	return "must be in the " + format + " format"
}

func article(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "object", "array":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

func joinEnum(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// num writes a bound as people write numbers: 2147483647, not 2.147483647e+09.
func num(p *float64) string {
	if p == nil {
		return "0"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// authFailure is the 401 for a failed bearer check.
func authFailure(err error) error {
	switch {
	case errors.Is(err, errNoKey):
		return &paymock.Error{Type: paymock.Authentication, Code: "api_key_missing",
			Message: "no API key given: send it as Authorization: Bearer <API_KEY>"}
	case errors.Is(err, paymock.ErrMalformedKey):
		return &paymock.Error{Type: paymock.Authentication, Code: "api_key_malformed",
			Message: "the Authorization header must be Bearer followed by a token"}
	}
	return &paymock.Error{Type: paymock.Authentication, Code: "api_key_invalid", Message: "the API key is not valid"}
}

var errNoKey = errors.New("no api key")

// securityCheck is kin's AuthenticationFunc. The bearer key was resolved
// before the body was read (so a bad key is a 401 whatever the body); here
// kin confirms that every operation needing security got a merchant.
func securityCheck(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	if m, _ := ctx.Value(authKey{}).(*paymock.Merchant); m == nil {
		return errNoKey
	}
	return nil
}

// authenticate resolves the merchant of an Authorization header.
func authenticate(ms Authenticator, header string) (*paymock.Merchant, error) {
	if header == "" {
		return nil, errNoKey
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, paymock.ErrMalformedKey
	}
	return ms.Authenticate(strings.TrimSpace(token))
}
