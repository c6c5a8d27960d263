// The request chain: small named steps every request passes, outermost
// first. Each step does one thing to the exchange and hands on.

package mockserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/contract"
)

// keyExchange is where a request's exchange lives in echo's context.
const keyExchange = "paymock.exchange"

// exchange is what the chain learns about one request as it passes the
// steps, and what the handler and the journal read back.
type exchange struct {
	id     string
	start  time.Time
	method string // as sent: HEAD is served as GET
	rec    *recorder
	w      http.ResponseWriter // the server's writer, which rec holds the answer for
	doc    *contract.Document  // nil outside both contracts
	route  *contract.Route     // &matched once the request matched an operation
	// matched is the route of route, held here so that a match allocates
	// no Route of its own; it goes back to the pool with the exchange.
	matched contract.Route
	// merchant is the bearer key's merchant, resolved once per request;
	// authErr is why there is none.
	merchant *paymock.Merchant
	caller   *paymock.Merchant // the key's merchant, even where none was needed
	// visit holds caller until record has sent the answer: the merchant
	// is not evicted or forgotten while its request is under way (a body
	// still coming, a delay fault), nor before its journal entry is in.
	visit   Visit
	authErr error
	// body is what readBody read, with the parse of a plain body, which
	// validateRequest checks and releases.
	body    contract.JSONBody
	variant string // the wire form of the answer, once written
	// enc is the wire form drawn for the answer (encChosen), which a
	// journal entry carried by a store call names before it is written.
	enc       paymock.Encoding
	encChosen bool
	at        string // the journal entry's time, once formed
	// carry is the journal entry offered to the request's store call
	// (journalcarry.go).
	carry carrier
	err   error // the error answered, if any
	// refusal is what the contract found in a request answered otherwise:
	// a path id it refuses is answered as not found (badPathID), and the
	// journal still says why the request broke the contract.
	refusal error
	refused bool   // by a check of the chain, before any handler ran
	fault   string // the id of the fault rule that shaped the answer
	faultBy string // how that rule was asked for, and what it does
	reset   bool   // a fault asked for the connection to be dropped
	// faultRefused says the answer is the refusal of a malformed fault
	// header: an answer about the sandbox's instrument, which no
	// operation declares, checked as any error outside one is.
	faultRefused bool
	// wire is the payment a handler answered, when the encoder wrote it
	// by hand into wireBody: the response check reads its values rather
	// than the bytes, as long as the answer still holds those bytes.
	wire     paymock.WirePayment
	wireBody []byte
}

// requestID is the request's id, drawn once the request is done, when its
// merchant is known: a merchant's request ids are drawn like its payment
// ids (from its own stream in a seeded run, so runs repeat exactly and no
// merchant can compute another's). A request of no merchant, or one whose
// merchant's stream cannot be read, takes one of the server's own.
func (s *Server) requestID(ctx context.Context, x *exchange) string {
	if x.id != "" {
		return x.id
	}
	if x.caller != nil {
		if id, err := s.merchantIDs.New(ctx, x.caller, "req"); err == nil {
			x.id = id
			return id
		}
	}
	x.id = s.requestIDs.New("req")
	return x.id
}

// newExchange is a blank exchange, from the pool: its recorder's header
// map and body buffer are reused. An exchange goes back to the pool when
// record has sent its answer; net/http has copied the headers (at
// WriteHeader) and the body (at Write) by then, and nothing of the
// exchange outlives the request.
func (s *Server) newExchange() *exchange {
	x, _ := s.exchanges.Get().(*exchange)
	if x == nil {
		x = &exchange{rec: &recorder{header: make(http.Header), answers: s.answers}}
		x.rec.x = x
		return x
	}
	rec := x.rec
	rec.reset()
	if rec.body.Cap() > maxPooledBody {
		rec.body = bytes.Buffer{} // one large answer should not stay in memory
	}
	*x = exchange{rec: rec}
	return x
}

// maxPooledBody is the largest answer buffer kept for reuse.
const maxPooledBody = 64 << 10

// exchangeOf is the request's exchange: its recorder's, while the
// recorder is the context's response (every step after record, a dozen
// lookups a request, each of them a lock and a map read through c.Get).
func exchangeOf(c *echo.Context) *exchange {
	if rec, ok := c.Response().(*recorder); ok {
		return rec.x
	}
	x, _ := c.Get(keyExchange).(*exchange)
	return x
}

// merchantOf is the authenticated merchant of a request that needed one.
func merchantOf(c *echo.Context) *paymock.Merchant { return exchangeOf(c).merchant }

// pathParam is a path parameter of the matched operation, unescaped.
func pathParam(c *echo.Context, name string) string { return exchangeOf(c).route.Params[name] }

// bodyOf is the request body the chain read and validated.
func bodyOf(c *echo.Context) []byte { return exchangeOf(c).body.Data }

// chain is the request chain, outermost first.
func (s *Server) chain() []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{
		s.record,
		s.journalStep,
		s.checkResponse,
		s.answerErrors,
		s.identify,
		s.matchRoute,
		s.requireAuth,
		s.injectFaults,
		s.readBody,
		s.validateRequest,
		s.recoverPanics,
	}
}

// record holds the answer in a recorder until every later step is done
// with it: a response that breaks the contract must never reach the
// client. It gives the request its id, and serves HEAD as a GET without
// the body.
func (s *Server) record(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		w := c.Response()
		r := c.Request()
		x := s.newExchange()
		defer func() {
			x.rec.release() // written, or dropped with the connection
			if x.visit != nil {
				x.visit.End()
			}
			s.exchanges.Put(x)
		}()
		x.start, x.method, x.w = time.Now(), r.Method, w
		if r.Method == http.MethodHead {
			r.Method = http.MethodGet
		}
		c.Set(keyExchange, x)
		c.SetResponse(x.rec)
		if err := next(c); err != nil {
			s.writeError(c, err) // only a step that is not a contract step gets here
		}
		// net/http reads the method of the request it shares with us when
		// the answer is written: as a GET with no body sent, its
		// Content-Length would be a lie, and the connection dropped.
		r.Method = x.method
		if x.reset {
			resetConnection(w)
			return nil
		}
		x.rec.header.Set("Request-Id", s.requestID(r.Context(), x))
		// No answer is to be sniffed into another type, and none cached:
		// every one is of a merchant's own state, behind its key.
		x.rec.header["X-Content-Type-Options"] = s.nosniff
		if _, ok := x.rec.header["Cache-Control"]; !ok {
			x.rec.header["Cache-Control"] = s.noStore
		}
		x.rec.flush(w, x.method == http.MethodHead)
		return nil
	}
}

// journalStep records the finished exchange in its merchant's journal.
func (s *Server) journalStep(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		err := next(c)
		x := exchangeOf(c)
		if x.doc == nil {
			return err
		}
		op := ""
		if x.route != nil {
			op = x.route.OperationID()
		}
		s.observer.Request(op, x.rec.status, time.Since(x.start))
		if x.refused && x.rec.status == http.StatusBadRequest {
			s.observer.ContractViolation("request")
		}
		if s.journal != nil {
			s.journalRequest(c, x)
		}
		return err
	}
}

// answerErrors writes the error answer of any failed step or handler into
// the recorder, in the one error shape.
func (s *Server) answerErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		err := next(c)
		x := exchangeOf(c)
		// An answer the bound refused is answered so, unless something else
		// was answered instead (a fault's error, after the call it let run).
		if x.rec.refused != nil && (err == nil || errors.Is(err, x.rec.refused)) {
			err = s.answerRefused(c, x)
		}
		if err != nil {
			x.err = err
			x.rec.reset()
			s.writeError(c, err)
		}
		return nil
	}
}

// identify resolves the bearer key's merchant once per request, without
// refusing anything yet: a request to an unknown route is still the key's
// merchant's call in its journal.
func (s *Server) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.doc = s.contractFor(c.Request().URL.Path); x.doc != nil {
			x.caller, x.visit, x.authErr = authenticate(c.Request().Context(), s.merchants, c.Request().Header["Authorization"])
		}
		return next(c)
	}
}

// contractFor returns the document that governs a path, or nil for paths
// outside every contract (health, the documents themselves, pages).
func (s *Server) contractFor(path string) *contract.Document {
	switch {
	case strings.HasPrefix(path, "/api/"):
		return s.docs.Service
	case path == "/_sandbox/openapi.yaml":
		return nil
	case strings.HasPrefix(path, "/_sandbox/"):
		return s.docs.Sandbox
	}
	return nil
}

// matchRoute finds the request's operation: 404 or 405 when the document
// has none.
func (s *Server) matchRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.doc == nil {
			return next(c)
		}
		if err := x.doc.MatchTo(c.Request(), &x.matched); err != nil {
			x.refused = true
			return err
		}
		x.route = &x.matched
		return next(c)
	}
}

// requireAuth refuses an operation that needs a key when the key was not
// accepted, and preloads the merchant's fake payments on first use.
func (s *Server) requireAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.route == nil || !x.route.NeedsAuth() {
			return next(c)
		}
		if x.authErr != nil {
			x.refused = true
			return authFailure(x.authErr)
		}
		x.merchant = x.caller
		s.ensureSeeded(c.Request().Context(), x.merchant)
		return next(c)
	}
}

// readBody reads the body of an operation that takes one, under the limit.
func (s *Server) readBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.route == nil {
			return next(c)
		}
		if !x.route.TakesBody() {
			// A GET's body has no meaning (RFC 9110) and is left alone;
			// data sent to a POST or DELETE that takes none is refused.
			if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
				if err := contract.RefuseBody(c.Request(), s.bodyLimit); err != nil {
					x.refused = true
					return err
				}
			}
			return next(c)
		}
		// What encoding/json would take silently (a duplicated key, bytes
		// that are not UTF-8) is refused too: a client bug the sandbox
		// must show.
		jb, err := contract.ReadParsedJSONBody(c.Request(), s.bodyLimit)
		if err != nil {
			x.refused = true
			return err
		}
		x.body = jb
		return next(c)
	}
}

// validateRequest checks the request against its operation, and adds the
// operation's own rules' findings to a refused body so that one answer
// names every problem.
func (s *Server) validateRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.route == nil {
			return next(c)
		}
		r := c.Request()
		err := x.doc.ValidateParsedRequest(r.Context(), r, x.route, x.body, x.merchant != nil)
		x.body.Release()
		if err == contract.ErrUnauthenticated {
			x.refused = true
			return authFailure(errNoKey)
		}
		if err != nil {
			x.refused = true
			if notFound := s.badPathID(x, err); notFound != nil {
				x.refusal = err
				return notFound
			}
			return s.withRuleViolations(err, x)
		}
		return next(c)
	}
}

// badPathID turns a refused path id into the 404 of an unknown id: any id
// that is not one of the merchant's is simply not found, whatever its
// length or bytes.
func (s *Server) badPathID(x *exchange, err error) error {
	de, ok := paymock.AsError(err)
	if !ok || len(de.Violations) == 0 {
		return nil
	}
	for _, v := range de.Violations {
		if v.Param != "id" {
			return nil
		}
	}
	if strings.HasPrefix(x.route.Path, "/_sandbox/events") {
		return &paymock.Error{Type: paymock.NotFound, Code: "resource_missing", Message: "no such event", Param: "id"}
	}
	return paymock.PaymentNotFound(contract.ShortPath(x.route.Params["id"]))
}

// withRuleViolations adds, to a request the contract refused, what the
// operation's own rules find in the same body. A rule violation of a
// field the contract already named is left out.
func (s *Server) withRuleViolations(err error, x *exchange) error {
	rules := s.rules[x.route.OperationID()]
	de, ok := paymock.AsError(err)
	if rules == nil || !ok || de.Type != paymock.InvalidRequest || x.merchant == nil || x.body.Data == nil {
		return err
	}
	named := make(map[string]bool, len(de.Violations))
	for _, v := range de.Violations {
		named[v.Param] = true
	}
	vs := slices.Clone(de.Violations)
	for _, v := range rules(x.merchant, x.body.Data) {
		if !named[v.Param] {
			vs = append(vs, v)
			named[v.Param] = true
		}
	}
	slices.SortStableFunc(vs, func(a, b paymock.Violation) int { return strings.Compare(a.Param, b.Param) })
	return paymock.Invalid(vs...)
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

// checkResponse validates the recorded answer: against its operation when
// the request matched one, against the Error schema for any other JSON
// error. A violation is a bug of ours, answered as a 500.
func (s *Server) checkResponse(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		err := next(c)
		x := exchangeOf(c)
		if x.doc == nil || x.reset {
			return err
		}
		r, rec := c.Request(), x.rec
		var verr error
		switch {
		case x.faultRefused:
			verr = s.docs.Service.ValidateError(rec.body.Bytes())
		case x.route != nil && x.wireBody != nil && bytes.Equal(rec.body.Bytes(), x.wireBody):
			verr = x.doc.ValidatePaymentResponse(r.Context(), r, x.route, rec.status, rec.header, rec.body.Bytes(), &x.wire)
		case x.route != nil:
			verr = x.doc.ValidateResponse(r.Context(), r, x.route, rec.status, rec.header, rec.body.Bytes())
		case rec.status >= 400 && strings.HasPrefix(rec.header.Get("Content-Type"), "application/json"):
			verr = s.docs.Service.ValidateError(rec.body.Bytes())
		}
		if verr == nil {
			return err
		}
		s.observer.ContractViolation("response")
		s.log.ErrorContext(r.Context(), "response violates the contract",
			"method", x.method, "path", contract.ShortPath(r.URL.Path), "status", rec.status, "violation", verr.Error())
		rec.reset()
		rec.header.Set("Content-Type", "application/json")
		rec.WriteHeader(http.StatusInternalServerError)
		rec.body.Write(encodeError(&paymock.Error{Type: paymock.APIError, Code: "response_contract_violation",
			Message: "the server built a response that breaks its own contract; this is a paymock bug"}))
		return err
	}
}

// recorder holds a response until it has been checked against the
// contract.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	x      *exchange // the exchange it records, for exchangeOf
	// answers bounds the large answers held at once; held is what this
	// one counts against it, under the merchant key, and refused the 503
	// it got instead (answers.go).
	answers *connlimit.Answers
	held    int
	key     string
	refused error
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
	if r.refused != nil {
		return 0, r.refused
	}
	if need := r.body.Len() + len(b); need > r.body.Cap() && r.counted(need) {
		if err := r.grow(need); err != nil {
			return 0, err
		}
	}
	return r.body.Write(b)
}

// reset empties the answer, keeping its memory (counted, if it was), for
// the one that replaces it.
func (r *recorder) reset() {
	clear(r.header)
	r.status = 0
	r.body.Reset()
	r.refused = nil
}

// flush sends the held answer; a HEAD gets the headers, with the length
// the GET's body would have, and no body.
func (r *recorder) flush(w http.ResponseWriter, head bool) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if head {
		h.Set("Content-Length", fmt.Sprint(r.body.Len()))
		w.WriteHeader(r.status)
		return
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
