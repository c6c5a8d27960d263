// The middleware every request passes: panic recovery and the contract
// check around the handlers.
package mockserver

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// Keys of values a request carries through echo's context.
const (
	keyMerchant = "paymock.merchant"
	keyBody     = "paymock.body"
	keyParams   = "paymock.params"
	keyVariant  = "paymock.variant"
)

// recorder holds a response until it has been checked against the
// contract: a response that breaks it must never reach the client.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) reset() {
	clear(r.header)
	r.status = 0
	r.body.Reset()
}

func (r *recorder) flush(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}

// recoverPanics turns a panic in any handler into a logged 500.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				err = fmt.Errorf("panic: %v", v)
			}
		}()
		return next(c)
	}
}

// contractFor returns the document that governs a path, or nil for paths
// outside every contract (health, the document itself, pages).
func (s *Server) contractFor(path string) *contract {
	switch {
	case strings.HasPrefix(path, "/api/"):
		return s.api
	case path == "/_sandbox/openapi.yaml":
		return nil
	case strings.HasPrefix(path, "/_sandbox/"):
		return s.sandbox
	}
	return nil
}

// checkContract validates the request, runs the handler into a recorder,
// and lets the answer out only if it too satisfies the contract.
func (s *Server) checkContract(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		start := time.Now()
		w := c.Response()
		rec := &recorder{header: make(http.Header)}
		c.SetResponse(rec)
		r := c.Request()
		ct := s.contractFor(r.URL.Path)
		reqID := s.ids.New("req")

		var route *routers.Route
		var params map[string]string
		var m *paymock.Merchant
		refused := false // by the contract check, before any handler ran
		err := func() error {
			if ct == nil {
				return next(c)
			}
			var err error
			if route, params, err = ct.match(r); err != nil {
				refused = true
				return err
			}
			if needsAuth(route) {
				if m, err = authenticate(s.merchants, r.Header.Get("Authorization")); err != nil {
					refused = true
					return authFailure(err)
				}
				s.ensureSeeded(r.Context(), m)
			}
			var body []byte
			if route.Operation.RequestBody != nil {
				if body, err = readBody(r, s.bodyLimit); err != nil {
					refused = true
					return err
				}
			}
			if err := ct.validateRequest(r.Context(), r, route, params, body, m); err != nil {
				refused = true
				return s.withRuleViolations(err, route, m, body)
			}
			c.Set(keyMerchant, m)
			c.Set(keyBody, body)
			c.Set(keyParams, params)
			return next(c)
		}()
		if err != nil {
			rec.reset()
			s.writeError(c, err)
		}
		s.checkResponse(c, rec, ct, route, params)
		rec.header.Set("Request-Id", reqID)
		if ct != nil && s.journal != nil {
			s.journalRequest(c, journalInput{id: reqID, start: start, route: route, merchant: m, status: rec.status,
				err: err, refused: refused, counted: ct == s.api})
		}
		rec.flush(w)
		return nil
	}
}

// withRuleViolations adds, to a request the contract refused, what the
// operation's own rules find in the same body, so that one answer lists
// every problem rather than one pass of them per attempt. A rule violation
// of a field the contract already named is left out.
func (s *Server) withRuleViolations(err error, route *routers.Route, m *paymock.Merchant, body []byte) error {
	rules := s.rules[route.Operation.OperationID]
	de, ok := paymock.AsError(err)
	if rules == nil || !ok || de.Type != paymock.InvalidRequest || m == nil || body == nil {
		return err
	}
	named := make(map[string]bool, len(de.Violations))
	for _, v := range de.Violations {
		named[v.Param] = true
	}
	vs := slices.Clone(de.Violations)
	for _, v := range rules(m, body) {
		if !named[v.Param] {
			vs = append(vs, v)
			named[v.Param] = true
		}
	}
	slices.SortStableFunc(vs, func(a, b paymock.Violation) int { return strings.Compare(a.Param, b.Param) })
	return paymock.Invalid(vs...)
}

// journalInput is what the journal needs of one finished request.
type journalInput struct {
	id       string
	start    time.Time
	route    *routers.Route
	merchant *paymock.Merchant
	status   int
	err      error
	refused  bool
	counted  bool // a service API call, counted in the report
}

// journalRequest records a request in its merchant's journal. A request
// refused before its key was checked is attributed to the key's merchant
// when the key is good; with no good key it belongs to nobody.
func (s *Server) journalRequest(c *echo.Context, in journalInput) {
	r := c.Request()
	m := in.merchant
	if m == nil {
		var err error
		if m, err = authenticate(s.merchants, r.Header.Get("Authorization")); err != nil {
			return
		}
	}
	e := journalEntry{
		ID:         in.id,
		At:         paymock.FormatTime(s.clock.Now(m.ID)),
		Method:     r.Method,
		Path:       r.URL.Path,
		Query:      r.URL.RawQuery,
		Status:     in.status,
		DurationMS: durationMS(time.Since(in.start)),
	}
	if v, ok := c.Get(keyVariant).(string); ok {
		e.Variant = v
	}
	if in.route != nil {
		e.Operation = in.route.Operation.OperationID
	}
	if in.refused && in.err != nil {
		_, de := classify(in.err)
		e.Violations = de.Violations
		if len(e.Violations) == 0 {
			e.Violations = []paymock.Violation{{Param: de.Param, Code: de.Code, Message: de.Message}}
		}
	}
	s.journal.record(m.ID, e, in.refused, in.counted)
}

// checkResponse validates the recorded answer: against its operation when
// the request matched one, against the Error schema for any other JSON
// error. A violation is a bug of ours, answered as a 500.
func (s *Server) checkResponse(c *echo.Context, rec *recorder, ct *contract, route *routers.Route, params map[string]string) {
	r := c.Request()
	var err error
	switch {
	case route != nil:
		err = ct.validateResponse(r.Context(), r, route, params, rec.status, rec.header, rec.body.Bytes())
	case rec.status >= 400 && strings.HasPrefix(rec.header.Get("Content-Type"), "application/json"):
		err = s.api.validateError(rec.body.Bytes())
	}
	if err == nil {
		return
	}
	s.log.ErrorContext(r.Context(), "response violates the contract",
		"method", r.Method, "path", r.URL.Path, "status", rec.status, "violation", err.Error())
	rec.reset()
	rec.header.Set("Content-Type", "application/json")
	rec.WriteHeader(http.StatusInternalServerError)
	rec.body.Write(encodeError(&paymock.Error{Type: paymock.APIError, Code: "response_contract_violation",
		Message: "the server built a response that breaks its own contract; this is a paymock bug"}))
}

func merchantOf(c *echo.Context) *paymock.Merchant {
	m, _ := c.Get(keyMerchant).(*paymock.Merchant)
	return m
}

func pathParam(c *echo.Context, name string) string {
	p, _ := c.Get(keyParams).(map[string]string)
	return p[name]
}
