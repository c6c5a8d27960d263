// The payments API: create, list and retrieve. Handlers decode, call the
// domain and encode; the rules live in package paymock.

package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/lifecycle"
)

// createPayment handles POST /api/v1/payments: a new pending payment.
func (s *Server) createPayment(c *echo.Context) error {
	ctx := c.Request().Context()
	m := merchantOf(c)
	var req paymock.CreateRequest
	if !decodeCreate(bodyOf(c), &req) {
		var err error
		if req, err = decodeCreateJSON(c); err != nil {
			return err
		}
	}
	now, err := s.clock.Now(ctx, m.ID)
	if err != nil {
		return err
	}
	v, err := paymock.ValidateCreate(req, m, now)
	if err != nil {
		return err
	}
	draw, err := s.merchantIDs.Draw(ctx, m)
	if err != nil {
		return err
	}
	cusID, err := s.store.CustomerID(ctx, m.ID, req.Customer.Email, func() string { return draw.ID("cus") }, s.maxPayments)
	if errors.Is(err, paymock.ErrLimitReached) {
		return s.paymentLimit()
	}
	if err != nil {
		return fmt.Errorf("customer id: %w", err)
	}
	id := draw.ID("pay")
	customer := paymock.Customer{ID: cusID, Email: req.Customer.Email, Name: req.Customer.Name}
	p := paymock.NewPayment(v, paymock.NewPaymentInput{ID: id, Merchant: m, Customer: customer, PublicURL: s.publicURL, Now: now})
	if req.PaymentMethod != nil && req.PaymentMethod.Card != nil {
		c, _ := lifecycle.CardFor(req.PaymentMethod.Card.Number)
		p.Declines3DS = c.DeclineOn3DS
	}
	if err := s.store.Insert(s.carryJournal(c, http.StatusCreated), p, s.maxPayments); err != nil {
		if errors.Is(err, paymock.ErrLimitReached) {
			return s.paymentLimit()
		}
		return fmt.Errorf("store payment: %w", err)
	}
	trigger := lifecycle.Trigger{}
	if req.PaymentMethod != nil && req.PaymentMethod.Card != nil {
		trigger.CardNumber = req.PaymentMethod.Card.Number
	}
	trigger.MetadataScenario = metadataScenario(req.Metadata)
	s.lifecycle.Created(ctx, m, p, trigger)
	return s.writePayment(c, http.StatusCreated, p)
}

// decodeCreateJSON is decodeBody of a create request, for a body
// decodeCreate does not read: its own request goes to encoding/json and
// so to the heap, not the one createPayment keeps on its stack.
func decodeCreateJSON(c *echo.Context) (paymock.CreateRequest, error) {
	var req paymock.CreateRequest
	err := decodeBody(c, &req)
	return req, err
}

// paymentLimit is the refusal of a create past Config.MaxPayments, shaped
// like the other caps (key_limit, endpoint_limit): the merchant's own
// reset makes room.
func (s *Server) paymentLimit() *paymock.Error {
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "payment_limit",
		Message: fmt.Sprintf("a merchant can hold at most %d payments; POST /_sandbox/reset makes room (it forgets this merchant's payments, events, schedule and clock)", s.maxPayments)}
}

// createRules are the create rules run on a body the contract refused.
// The body is decoded as far as it goes (a field of the wrong type stays
// empty, and the contract has named it already), so the rules see
// everything else.
func (s *Server) createRules(m *paymock.Merchant, body []byte) []paymock.Violation {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil // not an object: the contract has said so
	}
	// Field by field: one field of the wrong type must not stop the
	// decoding of the others.
	var req paymock.CreateRequest
	for k, v := range fields {
		one, err := json.Marshal(map[string]json.RawMessage{k: v})
		if err != nil {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.UseNumber()
		_ = dec.Decode(&req)
	}
	// The contract refused the request already; its clock only dates it.
	now, err := s.clock.Now(context.Background(), m.ID)
	if err != nil {
		return nil
	}
	_, err = paymock.ValidateCreate(req, m, now)
	if de, ok := paymock.AsError(err); ok && de.Type == paymock.InvalidRequest {
		return de.Violations
	}
	return nil
}

// metadataScenario is the string under metadata's "scenario" key, if any.
func metadataScenario(raw json.RawMessage) string {
	if !mayNameScenario(raw) {
		return ""
	}
	var md struct {
		Scenario any `json:"scenario"`
	}
	if json.Unmarshal(raw, &md) != nil {
		return ""
	}
	s, _ := md.Scenario.(string)
	return s
}

// mayNameScenario reports whether raw could hold a "scenario" key as
// encoding/json matches one: escaped, in any case, or with a non-ASCII
// letter that folds to an ASCII one (ſ, K).
func mayNameScenario(raw []byte) bool {
	for i, c := range raw {
		if c == '\\' || c >= 0x80 || i+8 <= len(raw) && bytes.EqualFold(raw[i:i+8], []byte("scenario")) {
			return true
		}
	}
	return false
}

// retrievePayment handles GET /api/v1/payments/{id}.
func (s *Server) retrievePayment(c *echo.Context) error {
	m := merchantOf(c)
	id := pathParam(c, "id")
	p, err := s.store.Get(s.carryJournal(c, http.StatusOK), m.ID, id)
	if errors.Is(err, paymock.ErrNotFound) {
		return paymock.PaymentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("get payment: %w", err)
	}
	return s.writePayment(c, http.StatusOK, p)
}

// Pagination defaults and bounds of the spec.
const (
	defaultPerPage = 10
	maxPerPage     = 100
)

type pagination struct {
	Page       int64 `json:"page"`
	PerPage    int64 `json:"per_page"`
	TotalPages int64 `json:"total_pages"`
	TotalItems int64 `json:"total_items"`
}

// pageRequest is a list call's page and per_page, read from the query.
type pageRequest struct {
	page, perPage int64
}

// readPage reads page and per_page with their defaults. The contract check
// has bounded both; what it lets through as absent ("page=") is refused
// here.
func readPage(c *echo.Context) (pageRequest, error) {
	page, err := queryInt(c, "page", 1)
	if err != nil {
		return pageRequest{}, err
	}
	perPage, err := queryInt(c, "per_page", defaultPerPage)
	if err != nil {
		return pageRequest{}, err
	}
	return pageRequest{page: page, perPage: perPage}, nil
}

// window is the store's offset and limit of the page.
func (pr pageRequest) window() paymock.Page { return paymock.PageOf(pr.page, pr.perPage) }

// of is the pagination object of the page out of total items.
func (pr pageRequest) pagination(total int) pagination {
	return pagination{Page: pr.page, PerPage: pr.perPage, TotalItems: int64(total), TotalPages: paymock.TotalPages(total, pr.perPage)}
}

// listJSON answers a list envelope of already-encodable items.
func listJSON(c *echo.Context, items any, pr pageRequest, total int) error {
	return c.JSON(http.StatusOK, map[string]any{"items": items, "pagination": pr.pagination(total)})
}

// listPayments handles GET /api/v1/payments: newest first, paged.
func (s *Server) listPayments(c *echo.Context) error {
	m := merchantOf(c)
	pr, err := readPage(c)
	if err != nil {
		return err
	}
	if !s.acquireListPage(c) {
		return nil
	}
	defer s.releaseListPage(c)
	pg := pr.window()
	items, total, err := s.store.List(s.carryJournal(c, http.StatusOK), m.ID, pg.Offset, pg.Limit)
	if err != nil {
		return fmt.Errorf("list payments: %w", err)
	}
	// Written into the answer payment by payment, not into a buffer of
	// its own copied there: a page of the largest payments is 2.9 MB, and
	// the answer counts against the bound of large answers as it grows
	// (answers.go), so a page that would pass it stops being built.
	enc := s.encoding(c)
	w := exchangeOf(c).rec
	if w.header.Get(echo.HeaderContentType) == "" {
		w.header[echo.HeaderContentType] = s.jsonType
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(`{"items":[`)); err != nil {
		return fmt.Errorf("write the page: %w", err)
	}
	for i, p := range items {
		b, err := p.Encode(enc)
		if err != nil {
			return fmt.Errorf("encode payment: %w", err)
		}
		items[i] = paymock.Payment{} // written: its memory may go while the rest is
		if i > 0 {
			if _, err := w.Write([]byte{','}); err != nil {
				return fmt.Errorf("write the page: %w", err)
			}
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("write the page: %w", err)
		}
	}
	b, err := json.Marshal(pr.pagination(total))
	if err != nil {
		return fmt.Errorf("encode pagination: %w", err)
	}
	if _, err := w.Write(append(append([]byte(`],"pagination":`), b...), '}')); err != nil {
		return fmt.Errorf("write the page: %w", err)
	}
	return nil
}

// queryInt reads an integer query parameter. kin-openapi lets "page="
// through as absent; an empty value is not an integer, so it is refused.
// kin-openapi checks only the first of a repeated parameter, so
// "per_page=5&per_page=500" would be answered as per_page 5: a client
// that appends to a URL that has the parameter already is told instead.
func queryInt(c *echo.Context, name string, def int64) (int64, error) {
	vs, present := c.QueryParams()[name]
	if !present {
		return def, nil
	}
	if len(vs) > 1 {
		return 0, paymock.Invalid(paymock.Violation{Param: name, Code: "parameter_invalid",
			Message: fmt.Sprintf("%s must be given once, not %d times", name, len(vs))})
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil {
		return 0, paymock.Invalid(paymock.Violation{Param: name, Code: "parameter_invalid", Message: name + " must be an integer"})
	}
	return n, nil
}

// encoding picks the wire form of this response and notes it for the
// journal.
func (s *Server) encoding(c *echo.Context) paymock.Encoding {
	x := exchangeOf(c)
	enc := s.drawnEncoding(x)
	x.variant = enc.String()
	return enc
}

// drawnEncoding is the wire form of the request's answer, drawn once.
func (s *Server) drawnEncoding(x *exchange) paymock.Encoding {
	if !x.encChosen {
		x.enc, x.encChosen = s.variants.Next(), true
	}
	return x.enc
}

// writePayment answers one payment. When the encoder wrote it by hand,
// the exchange keeps the values it wrote, for the response check.
func (s *Server) writePayment(c *echo.Context, status int, p paymock.Payment) error {
	b, w, plain, err := p.EncodePlain(s.encoding(c))
	if err != nil {
		return fmt.Errorf("encode payment: %w", err)
	}
	if plain {
		x := exchangeOf(c)
		x.wire, x.wireBody = w, b
	}
	return s.jsonBlob(c, status, b)
}

// jsonBlob answers b as c.JSONBlob does, with the Content-Type's value
// shared by every answer rather than a slice made for each by Header.Set.
func (s *Server) jsonBlob(c *echo.Context, status int, b []byte) error {
	if h := c.Response().Header(); h.Get(echo.HeaderContentType) == "" {
		h[echo.HeaderContentType] = s.jsonType
	}
	return c.JSONBlob(status, b)
}
