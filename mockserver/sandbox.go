// The sandbox control API: outcomes, the merchant's clock, events and
// reset. Handlers decode, call the lifecycle engine and encode.

package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// sandboxOpenAPI handles GET /_sandbox/openapi.yaml: the control API's
// contract.
func (s *Server) sandboxOpenAPI(c *echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", paymock.SandboxOpenAPI)
}

// transition handles POST /_sandbox/payments/{id}/complete, /fail and
// /expire: one outcome call each.
func (s *Server) transition(to paymock.Status) echo.HandlerFunc {
	return func(c *echo.Context) error {
		p, err := s.lifecycle.Transition(c.Request().Context(), merchantOf(c), pathParam(c, "id"), to)
		if err != nil {
			return err
		}
		return s.writePayment(c, http.StatusOK, p)
	}
}

type clockJSON struct {
	Now   string `json:"now"`
	Mode  string `json:"mode"`
	Fired *int   `json:"fired,omitempty"`
}

// getClock handles GET /_sandbox/clock.
func (s *Server) getClock(c *echo.Context) error {
	now, err := s.lifecycle.Now(c.Request().Context(), merchantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, clockJSON{Now: paymock.FormatTime(now), Mode: string(s.lifecycle.ClockMode())})
}

// advanceClock handles POST /_sandbox/clock/advance: everything that
// falls due fires, in order, before the answer.
func (s *Server) advanceClock(c *echo.Context) error {
	var req struct {
		Seconds paymock.Whole `json:"seconds"`
	}
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	m := merchantOf(c)
	now, fired, err := s.lifecycle.Advance(c.Request().Context(), m, time.Duration(req.Seconds)*time.Second)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, clockJSON{Now: paymock.FormatTime(now), Mode: string(s.lifecycle.ClockMode()), Fired: &fired})
}

// listEvents handles GET /_sandbox/events: newest first, with attempts.
func (s *Server) listEvents(c *echo.Context) error {
	pr, err := readPage(c)
	if err != nil {
		return err
	}
	if !s.acquireListPage(c) {
		return nil
	}
	defer s.releaseListPage(c)
	pg := pr.window()
	items, total, err := s.lifecycle.Events(c.Request().Context(), merchantOf(c), pg.Offset, pg.Limit)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	return listJSON(c, items, pr, total)
}

// redeliver handles POST /_sandbox/events/{id}/redeliver. While the
// merchant has as many deliveries pending as a redelivery is allowed on,
// the dispatcher refuses with the 400 delivery_limit to show (a
// *paymock.Error, which the dashboard shows too), answered as it is.
func (s *Server) redeliver(c *echo.Context) error {
	id := pathParam(c, "id")
	rec, err := s.lifecycle.Redeliver(c.Request().Context(), merchantOf(c), id)
	if errors.Is(err, paymock.ErrNotFound) {
		return &paymock.Error{Type: paymock.NotFound, Code: "resource_missing", Message: "no such event: '" + id + "'", Param: "id"}
	}
	if err != nil {
		return fmt.Errorf("redeliver: %w", err)
	}
	return c.JSON(http.StatusAccepted, rec)
}

// reset handles POST /_sandbox/reset: forgets the merchant's payments,
// events, schedule and fault rules (rules from --faults come back with
// fresh counts). The request journal stays, for the report.
func (s *Server) reset(c *echo.Context) error {
	m := merchantOf(c)
	if err := s.lifecycle.Reset(c.Request().Context(), m); err != nil {
		return err
	}
	if s.faults != nil {
		if err := s.faults.Reset(c.Request().Context(), m.ID); err != nil {
			return err
		}
	}
	return c.NoContent(http.StatusNoContent)
}
