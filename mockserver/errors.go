// Error answers: every failure, from any layer, leaves in the one shape of
// DESIGN.md.

package mockserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

var statusOfType = map[paymock.ErrorType]int{
	paymock.InvalidRequest: http.StatusBadRequest,
	paymock.Authentication: http.StatusUnauthorized,
	paymock.Permission:     http.StatusForbidden,
	paymock.NotFound:       http.StatusNotFound,
	paymock.Conflict:       http.StatusConflict,
	paymock.RateLimit:      http.StatusTooManyRequests,
	paymock.APIError:       http.StatusInternalServerError,
}

// errorBody is the wire form of an error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    paymock.ErrorType   `json:"type"`
	Code    string              `json:"code"`
	Message string              `json:"message"`
	Param   string              `json:"param,omitempty"`
	Errors  []paymock.Violation `json:"errors,omitempty"`
}

// classify turns any error into a status and a domain error. Unknown
// errors are bugs: they become a 500 that says nothing of the internals.
func classify(err error) (int, *paymock.Error) {
	var se *contract.StatusError
	if errors.As(err, &se) {
		return se.Status, se.Err
	}
	if errors.Is(err, paymock.ErrUnavailable) {
		return http.StatusServiceUnavailable, &paymock.Error{Type: paymock.APIError, Code: "store_unavailable",
			Message: "the sandbox's database cannot be reached; try again shortly"}
	}
	if de, ok := paymock.AsError(err); ok {
		if s, ok := statusOfType[de.Type]; ok {
			return s, de
		}
		return http.StatusInternalServerError, de
	}
	switch echo.StatusCode(err) {
	case http.StatusNotFound:
		return http.StatusNotFound, &paymock.Error{Type: paymock.NotFound, Code: "route_not_found", Message: "no such route"}
	case http.StatusMethodNotAllowed:
		return http.StatusMethodNotAllowed, &paymock.Error{Type: paymock.InvalidRequest, Code: "method_not_allowed", Message: "this method is not allowed on this path"}
	case http.StatusRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge, &paymock.Error{Type: paymock.InvalidRequest, Code: "body_too_large", Message: "the request body is too large"}
	}
	return http.StatusInternalServerError, &paymock.Error{Type: paymock.APIError, Code: "internal_error", Message: "an internal error occurred"}
}

// encodeError renders the body of an error answer, within the bounds of
// paymock.Error.Bounded: one refused body of a megabyte must not make an
// answer of several.
func encodeError(e *paymock.Error) []byte {
	e = e.Bounded()
	d := errorDetail{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param, Errors: e.Violations}
	b, err := paymock.EncodeJSON(errorBody{Error: d})
	if err != nil { // cannot happen: only strings
		return []byte(`{"error":{"type":"api_error","code":"internal_error","message":"an internal error occurred"}}`)
	}
	return b
}

// writeError answers err on c; a 401 also names the auth scheme.
func (s *Server) writeError(c *echo.Context, err error) {
	status, de := classify(err)
	if status == http.StatusInternalServerError && de.Code == "internal_error" {
		ctx := c.Request().Context()
		// A client that went away ended its request's context, and the
		// store's work with it: nothing failed, and a client closing
		// its requests early must not fill the operator's log.
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			s.log.DebugContext(ctx, "the client went away before its answer", "method", c.Request().Method, "path", contract.ShortPath(c.Request().URL.Path), "error", err)
		} else {
			s.log.ErrorContext(ctx, "request failed", "method", c.Request().Method, "path", contract.ShortPath(c.Request().URL.Path), "error", err)
		}
	}
	h := c.Response().Header()
	if status == http.StatusMethodNotAllowed && isPagePath(c.Request().URL.Path) {
		h.Set("Allow", "GET, HEAD, POST")
		if err := s.pageMessage(c, status, "Method not allowed",
			"This page is opened with GET and its forms are sent with POST."); err != nil {
			s.log.DebugContext(c.Request().Context(), "writing an error answer failed", "error", err)
		}
		return
	}
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", "Bearer")
	}
	var se *contract.StatusError
	if errors.As(err, &se) {
		if len(se.Allow) > 0 {
			h.Set("Allow", strings.Join(se.Allow, ", "))
		}
		for k, v := range se.Header {
			h[k] = v
		}
	}
	if err := s.jsonBlob(c, status, encodeError(de)); err != nil {
		s.log.DebugContext(c.Request().Context(), "writing an error answer failed", "error", err)
	}
}
