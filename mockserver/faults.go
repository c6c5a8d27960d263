// Failure on purpose: the request chain's fault step, and the control
// API of fault rules. The rules themselves live in package faults.

package mockserver

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/faults"
)

// Faults is the rule book the fault step and the control API consult
// (implemented by *faults.Set). Its rules may live in a database every
// replica shares: each method can then fail, with an error wrapping
// paymock.ErrUnavailable when the database cannot be reached (answered 503
// store_unavailable).
type Faults interface {
	MatchAPI(ctx context.Context, merchantID, operation string) (faults.Rule, bool, error)
	Add(ctx context.Context, merchantID string, r faults.Rule) (faults.Rule, error)
	List(ctx context.Context, merchantID string) ([]faults.Rule, error)
	Delete(ctx context.Context, merchantID, id string) error
	Clear(ctx context.Context, merchantID string) error
	Reset(ctx context.Context, merchantID string) error
}

// injectFaults shapes a service API call by the fault asked for: the
// Paymock-Fault header first, then the merchant's rules. A call no fault
// matches goes on untouched.
func (s *Server) injectFaults(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		x := exchangeOf(c)
		if x.merchant == nil || x.doc != s.docs.Service || s.faults == nil {
			return next(c)
		}
		r := c.Request()
		var rule faults.Rule
		if h := r.Header.Get(faults.Header); h != "" {
			var err error
			if rule, err = faults.ParseHeader(h); err != nil {
				// Answered 400 naming the header, and not carried out; but
				// the header is the tests' instrument, not the service's
				// contract: journalled as the header's answer, never as a
				// violation, so a gate never fails because a fault was
				// asked for, even badly.
				x.fault, x.faultRefused = faults.HeaderRuleID, true
				x.faultBy = faults.Header + " header: refused as malformed, nothing injected: " + strconv.Quote(h)
				return err
			}
		} else {
			matched, ok, err := s.faults.MatchAPI(r.Context(), x.merchant.ID, x.route.OperationID())
			if err != nil {
				return err // the rules' store is down: the call is not carried out
			}
			if !ok {
				return next(c)
			}
			rule = matched
		}
		x.fault, x.faultBy = rule.ID, injectedBy(rule)
		s.observer.InjectedFault("api")
		if rule.When == faults.WhenAfter {
			// The call is carried out; only its answer is lost.
			_ = next(c)
		}
		if err := sleep(r.Context(), rule.Delay()); err != nil {
			x.reset = true // the client went away while held
			return nil
		}
		if rule.Delay() > 0 && rule.When != faults.WhenAfter {
			s.restartBodyRead(x)
		}
		if rule.Reset {
			x.reset = true
			return nil
		}
		if e := rule.APIError(); e != nil {
			se := &contract.StatusError{Status: rule.Status, Err: e}
			if rule.Status == http.StatusTooManyRequests {
				se.Header = http.Header{"Retry-After": {strconv.Itoa(rule.RetryAfter)}}
			}
			return se
		}
		if rule.When == faults.WhenAfter {
			return nil // a delay alone: the answer, late
		}
		return next(c)
	}
}

// restartBodyRead gives the body of a request held by a delay the whole
// read bound again, from now: the delay is the server's, and must not use
// up the client's time to send (with Expect: 100-continue, it sends only
// once the body is asked for, after the delay).
func (s *Server) restartBodyRead(x *exchange) {
	if s.readWithin <= 0 || x.w == nil {
		return
	}
	_ = http.NewResponseController(x.w).SetReadDeadline(time.Now().Add(s.readWithin))
}

// sleep waits d, or until ctx is done: a held request costs its goroutine
// and nothing more.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resetConnection closes the client's connection with no answer, as a
// TCP reset where the transport allows it, the way a load balancer or a
// crashed upstream drops a call.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2 and others: abort the stream
	}
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok { // a *net.TCPConn, or connlimit's hold of one
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// faultsJSON is the answer listing a merchant's rules.
type faultsJSON struct {
	Items []faults.Rule `json:"items"`
}

// addFault handles POST /_sandbox/faults.
func (s *Server) addFault(c *echo.Context) error {
	var in faults.Rule
	if err := decodeFaultRule(bodyOf(c), &in); err != nil {
		return err
	}
	r, err := s.faults.Add(c.Request().Context(), merchantOf(c).ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// listFaults handles GET /_sandbox/faults.
func (s *Server) listFaults(c *echo.Context) error {
	items, err := s.faults.List(c.Request().Context(), merchantOf(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, faultsJSON{Items: items})
}

// deleteFault handles DELETE /_sandbox/faults/{id}.
func (s *Server) deleteFault(c *echo.Context) error {
	if err := s.faults.Delete(c.Request().Context(), merchantOf(c).ID, pathParam(c, "id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// clearFaults handles DELETE /_sandbox/faults: no fault is left.
func (s *Server) clearFaults(c *echo.Context) error {
	if err := s.faults.Clear(c.Request().Context(), merchantOf(c).ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// notFoundIfMissing maps a domain ErrNotFound to the 404 of an id.
func notFoundIfMissing(err error, what, id string) error {
	if errors.Is(err, paymock.ErrNotFound) {
		return &paymock.Error{Type: paymock.NotFound, Code: "resource_missing", Message: "no such " + what + ": '" + contract.ShortPath(id) + "'", Param: "id"}
	}
	return err
}

// injectedBy says how an API fault was asked for and what it does, in
// the Paymock-Fault header's words, for the journal and the dashboard:
// "Paymock-Fault header: status=503", "control API rule flt_…:
// status=429; retry_after=3", "faults file faults.yaml:3: delay=1500ms;
// when=after".
func injectedBy(r faults.Rule) string {
	how := "fault rule " + r.ID // a rule of a shared store keeps no source
	switch r.Source {
	case faults.HeaderRuleID:
		how = faults.Header + " header"
	case "api":
		how = "control API rule " + r.ID
	case "":
	default:
		how = "faults file " + r.Source
	}
	var what []string
	if r.Status != 0 {
		what = append(what, "status="+strconv.Itoa(r.Status))
	}
	if r.Status == http.StatusTooManyRequests && r.RetryAfter > 0 {
		what = append(what, "retry_after="+strconv.Itoa(r.RetryAfter))
	}
	if r.DelayMS > 0 {
		what = append(what, "delay="+strconv.Itoa(r.DelayMS)+"ms")
	}
	if r.Reset {
		what = append(what, "reset")
	}
	if r.When == faults.WhenAfter {
		what = append(what, "when=after")
	}
	return how + ": " + strings.Join(what, "; ")
}

// decodeFaultRule decodes a rule's body. Its counts and codes are Go
// ints, and JSON's 503.0 is the same number as 503, so it is read as one.
func decodeFaultRule(body []byte, r *faults.Rule) error {
	return decodeJSON(wholeFields(body, "status", "retry_after", "delay_ms", "times", "duplicate", "timestamp_skew_s", "window_ms"), r)
}
