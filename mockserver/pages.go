// Hosted pages: where next_action.url and payment_link send the customer.
//
// A payment has exactly one page: the checkout page when it was created
// without a card, the 3DS page when it was created with one. The page is
// reached by the payment id alone (ids are unguessable; the customer has no
// API key). GET only shows; every state change is a POSTed form that goes
// through the lifecycle engine, exactly like the sandbox control API, and
// is answered with a 303 to the merchant's success_url or cancel_url, or,
// refused on a payment already final, to the page itself: no page is a
// POST's answer but an error's, so no reload posts a form again.
//
// Pages are HTML, rendered from embedded templates, with embedded CSS and
// no JavaScript; nothing is loaded from anywhere else. Their errors are
// HTML pages too, never the JSON errors of the API.

package mockserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/backreload"
	"github.com/paymock/paymock/lifecycle"
)

// Page paths besides the two page kinds' own (paymock.CheckoutPath and
// paymock.ThreeDSPath).
const (
	pageCSSPath = "/assets/page.css"
	// maxPageForm bounds a page's form post; the real one is ~100 bytes.
	maxPageForm = 16 << 10
)

// pageKind is one of the two hosted pages.
type pageKind string

const (
	checkoutPage pageKind = "checkout"
	threeDSPage  pageKind = "3ds"
)

func (k pageKind) path() string { return paymock.PagePath(k == threeDSPage) }

// shows reports whether p is a payment whose page is of kind k.
func (k pageKind) shows(p paymock.Payment) bool {
	return paymock.PagePath(p.PaymentMethod != nil) == k.path()
}

// pageAction is one button of a page: what it does to the payment and
// where it sends the customer.
type pageAction struct {
	to      paymock.Status // "" leaves the payment as it is
	success bool           // true: success_url; false: cancel_url
}

// actionFor is the effect of a button on a payment. The 3DS-declined test
// card turns approve into a decline.
func actionFor(k pageKind, action string, p paymock.Payment) (pageAction, bool) {
	switch k {
	case checkoutPage:
		switch action {
		case "pay":
			return pageAction{to: paymock.StatusCompleted, success: true}, true
		case "cancel":
			return pageAction{}, true
		case "fail":
			return pageAction{to: paymock.StatusFailed}, true
		}
	case threeDSPage:
		switch action {
		case "approve":
			if p.Declines3DS {
				return pageAction{to: paymock.StatusFailed}, true
			}
			return pageAction{to: paymock.StatusCompleted, success: true}, true
		case "decline":
			return pageAction{to: paymock.StatusFailed}, true
		}
	}
	return pageAction{}, false
}

// pageState is what the pages keep per server, made once in New: the
// key of their form tokens (random per server start), the stylesheet and
// its versioned URL, and the cross-site check. The templates are parsed on
// the first page any server renders (sharedPageTemplates): a run that
// shows no page never pays for them.
type pageState struct {
	key         []byte
	css         []byte
	cssURL      string // carries a digest of the CSS, so a browser never mixes versions
	crossOrigin *http.CrossOriginProtection
}

// pageAssets are the pages' stylesheet and its versioned URL: made from
// embedded files, as immutable as they are, so read once per process and
// shared by every server (paymocktest starts many).
type pageAssets struct {
	css    []byte
	cssURL string
}

var sharedPageAssets = sync.OnceValues(func() (*pageAssets, error) {
	css, err := fs.ReadFile(pageFiles, "templates/page.css")
	if err != nil {
		return nil, fmt.Errorf("page stylesheet: %w", err)
	}
	sum := sha256.Sum256(css)
	return &pageAssets{css: css, cssURL: pageCSSPath + "?v=" + hex.EncodeToString(sum[:6])}, nil
})

// sharedPageTemplates are the parsed page templates, parsed on the first
// page rendered in the process and shared like the assets. The files are
// embedded, so only a broken build fails here, and
// TestPageTemplates_ParseEveryPage fails on it first.
var sharedPageTemplates = sync.OnceValues(parsePageTemplates)

func newPageState() (*pageState, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails: crypto/rand crashes the program instead
	a, err := sharedPageAssets()
	if err != nil {
		return nil, err
	}
	return &pageState{
		key:    key,
		css:    a.css,
		cssURL: a.cssURL,
		// Rejects form posts a browser says come from another site: by
		// Sec-Fetch-Site, or by an Origin that is not the request's Host.
		crossOrigin: http.NewCrossOriginProtection(),
	}, nil
}

// token is the form token of a payment's page: an HMAC of the page kind
// and the payment id under the server's key. Only a page this server
// rendered carries it, and another site cannot read the page, so a form
// built there cannot post. A restart changes the key: an old form is
// refused and the customer reloads.
func (ps *pageState) token(k pageKind, id string) string {
	mac := hmac.New(sha256.New, ps.key)
	mac.Write([]byte("paymock page token\x00" + string(k) + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validToken compares a posted token with the expected one in constant time.
func (ps *pageState) validToken(k pageKind, id, got string) bool {
	return hmac.Equal([]byte(ps.token(k, id)), []byte(got))
}

//go:embed templates
var pageFiles embed.FS

// parsePageTemplates builds one template per page: the layout with the
// page's own content block.
func parsePageTemplates() (map[string]*template.Template, error) {
	layout, err := template.New("layout.html").ParseFS(pageFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("page layout: %w", err)
	}
	out := make(map[string]*template.Template)
	for _, name := range []string{"checkout", "threeds", "status", "message", "redirect"} {
		t, err := layout.Clone()
		if err == nil {
			t, err = t.ParseFS(pageFiles, "templates/"+name+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// pageHeaders are sent with every page answer. The CSP allows the page's
// own stylesheet and nothing else; form-action is open because the form's
// 303 goes to the merchant's URLs, wherever they are.
var pageHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action *; base-uri 'none'; frame-ancestors 'none'",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
}

// pageView is everything a page template shows.
type pageView struct {
	Title    string
	CSS      string
	Merchant string
	Initial  string // the merchant's initial, its stand-in logo
	ID       string
	// The payment.
	Description   string
	Amount        string
	Currency      string
	CustomerName  string
	CustomerEmail string
	// Pending payments: the form and the time left.
	Action      string // the form's action URL
	Token       string
	ExpiresIn   string
	ExpiresAt   string // wire form, for <time datetime>
	ExpiresText string // for a person
	Frozen      bool   // the merchant's clock is frozen
	Card        *cardView
	Declines3DS bool
	// Final payments: the outcome.
	Status     string // completed, failed, expired
	StatusText string
	When       string
	Refused    bool // a post on a final payment: nothing was changed
	// ReturnURL is where the page's link takes the customer back to the
	// shop: where the page's own action would have sent them.
	ReturnURL string
	// Error pages, and the 303 answer's body: its heading and link text.
	Code    int
	Heading string
	Message string
	// The 303 answer's body: where its link leads.
	Location string
}

type cardView struct {
	Brand  string
	Last4  string
	Expiry string
}

// pageShow handles GET /checkout/{id} and GET /3ds/{id}: the form while the payment is pending, its
// outcome once it is final. It never changes anything.
func (s *Server) pageShow(k pageKind) echo.HandlerFunc {
	return func(c *echo.Context) error {
		ctx := c.Request().Context()
		p, m, ok := s.pagePayment(ctx, k, c.Param("id"))
		if !ok {
			return s.pageNotFound(c)
		}
		now, err := s.lifecycle.Now(ctx, m)
		if err != nil {
			return err
		}
		if p.Status == paymock.StatusPending && !p.Overdue(now) {
			return s.renderPage(c, http.StatusOK, pageTemplateOf(k), s.pendingView(k, p, m, now))
		}
		// refusedParam is set only by pageRefused's redirect; on a final
		// payment it can only repeat what is true, so a hand-typed one does
		// no harm.
		refused := c.Request().URL.Query().Has(refusedParam)
		return s.renderPage(c, http.StatusOK, "status", s.statusView(p, m, now, refused))
	}
}

func pageTemplateOf(k pageKind) string {
	if k == threeDSPage {
		return "threeds"
	}
	return "checkout"
}

// pageAct handles POST /checkout/{id} and POST /3ds/{id}, a page's form: checks that the post comes from the page,
// moves the payment through the lifecycle engine and sends the customer
// on to the merchant.
func (s *Server) pageAct(k pageKind) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		ctx := r.Context()
		p, m, ok := s.pagePayment(ctx, k, c.Param("id"))
		if !ok {
			return s.pageNotFound(c)
		}
		if err := s.sameOrigin(r); err != nil {
			s.log.InfoContext(ctx, "page post refused: cross-origin", "payment", p.ID, "reason", err.Error())
			return s.pageMessage(c, http.StatusForbidden, "Request refused",
				"This form was sent from another site, so nothing was changed. Open the payment page itself and try again.")
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, maxPageForm)
		if err := r.ParseForm(); err != nil {
			return s.pageMessage(c, http.StatusBadRequest, "Request refused", "The form could not be read, so nothing was changed.")
		}
		if !s.pages.validToken(k, p.ID, r.PostForm.Get("token")) {
			s.log.InfoContext(ctx, "page post refused: bad token", "payment", p.ID)
			return s.pageMessage(c, http.StatusForbidden, "Request refused",
				"This form is out of date or did not come from this page, so nothing was changed. Reload the page and try again.")
		}
		name := r.PostForm.Get("action")
		act, ok := actionFor(k, name, p)
		if !ok {
			return s.pageMessage(c, http.StatusBadRequest, "Unknown action",
				"This page has no such action, so nothing was changed. Go back to the page and choose one of its buttons.")
		}
		if p.Status.Final() {
			return s.pageRefused(c, k, p.ID)
		}
		if _, err := s.lifecycle.Act(ctx, m, p.ID, act.to); err != nil {
			return s.pageTransitionFailed(c, k, m, p.ID, name, err)
		}
		s.log.DebugContext(ctx, "page action", "merchant", m.ID, "payment", p.ID, "page", string(k), "action", name, "to", act.to)
		if act.success {
			return s.pageRedirect(c, p.SuccessURL)
		}
		return s.pageRedirect(c, p.CancelURL)
	}
}

// pageTransitionFailed answers a refused transition: a payment that turned
// out to be final already (a race with another tab, the scheduler or the
// control API) is refused as pageRefused says; one forgotten meanwhile (a
// reset) is 404.
func (s *Server) pageTransitionFailed(c *echo.Context, k pageKind, m *paymock.Merchant, id, action string, err error) error {
	ctx := c.Request().Context()
	if de, ok := paymock.AsError(err); ok {
		switch de.Type {
		case paymock.Conflict:
			return s.pageRefused(c, k, id)
		case paymock.NotFound:
			return s.pageNotFound(c)
		}
	}
	s.log.ErrorContext(ctx, "page action failed", "merchant", m.ID, "payment", id, "action", action, "error", err)
	return s.pageMessage(c, http.StatusInternalServerError, "Something went wrong",
		"paymock could not record this action. This is a paymock bug; the server log has the details.")
}

// sameOrigin refuses a post that a browser marks as cross-site, or whose
// Origin is neither the request's host nor the public URL's origin.
func (s *Server) sameOrigin(r *http.Request) error {
	err := s.pages.crossOrigin.Check(r)
	if err == nil {
		return nil
	}
	if o := r.Header.Get("Origin"); o != "" && o == originOf(s.publicURL) {
		return nil
	}
	return err
}

// originOf is the scheme://host[:port] of an absolute URL.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// pagePayment finds the payment of a page. Unknown ids, ids of the other
// page kind and payments whose merchant is gone are all "not found".
func (s *Server) pagePayment(ctx context.Context, k pageKind, id string) (paymock.Payment, *paymock.Merchant, bool) {
	p, err := s.store.Locate(ctx, id)
	if err != nil {
		if !errors.Is(err, paymock.ErrNotFound) {
			s.log.ErrorContext(ctx, "locate payment for a page", "payment", id, "error", err)
		}
		return paymock.Payment{}, nil, false
	}
	if !k.shows(p) {
		return paymock.Payment{}, nil, false
	}
	m, ok := s.merchants.ByID(ctx, p.MerchantID)
	if !ok {
		return paymock.Payment{}, nil, false
	}
	return p, m, true
}

func (s *Server) baseView(title string) pageView {
	return pageView{Title: title, CSS: s.pages.cssURL}
}

func (s *Server) paymentView(title string, p paymock.Payment, m *paymock.Merchant) pageView {
	v := s.baseView(title)
	v.Merchant = m.Name
	v.Initial = initial(m.Name)
	v.ID = p.ID
	v.Description = p.Description
	v.Amount = formatMoney(p.Amount, p.Currency)
	v.Currency = string(p.Currency)
	v.CustomerName = p.Customer.Name
	v.CustomerEmail = p.Customer.Email
	if pm := p.PaymentMethod; pm != nil {
		v.Card = &cardView{Brand: brandName(pm.Card.Brand), Last4: pm.Card.Last4,
			Expiry: twoDigits(pm.Card.ExpiryMonth) + "/" + twoDigits(pm.Card.ExpiryYear%100)}
	}
	return v
}

func (s *Server) pendingView(k pageKind, p paymock.Payment, m *paymock.Merchant, now time.Time) pageView {
	title := "Checkout"
	if k == threeDSPage {
		title = "Confirm your payment"
	}
	v := s.paymentView(title, p, m)
	v.Action = k.path() + p.ID
	v.Token = s.pages.token(k, p.ID)
	v.ExpiresIn = formatTimeLeft(p.ExpiresAt.Sub(now))
	v.ExpiresAt = paymock.FormatTime(p.ExpiresAt)
	v.ExpiresText = pageTime(p.ExpiresAt)
	v.Frozen = s.lifecycle.ClockMode() == lifecycle.ClockFrozen
	v.Declines3DS = p.Declines3DS
	return v
}

// statusView shows a final payment. A pending payment past its expiry on
// the merchant's clock shows as expired: it is, the scheduler just has not
// recorded it yet (and a GET does not do it for the scheduler).
func (s *Server) statusView(p paymock.Payment, m *paymock.Merchant, now time.Time, refused bool) pageView {
	status, when := p.Status, p.UpdatedAt
	if p.Overdue(now) {
		status, when = paymock.StatusExpired, p.ExpiresAt
	}
	if status == paymock.StatusCompleted && !p.CompletedAt.IsZero() {
		when = p.CompletedAt
	}
	v := s.paymentView("Payment "+string(status), p, m)
	v.Status = string(status)
	v.StatusText = "Payment " + string(status)
	v.When = pageTime(when)
	v.Refused = refused
	// A customer who reaches a final payment's page (a second tab, a link
	// opened late, a failure simulated on the card) has no other way back
	// to the shop: the same URL pay or fail would have sent them to.
	v.ReturnURL = p.CancelURL
	if status == paymock.StatusCompleted {
		v.ReturnURL = p.SuccessURL
	}
	return v
}

// initial is the first letter of a name, capitalised.
func initial(name string) string {
	for _, r := range name {
		return strings.ToUpper(string(r))
	}
	return "?"
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10%10), byte('0' + n%10)})
}

// pageNotFound answers the HTML 404 page: unknown payments and any
// other path under the hosted pages.
func (s *Server) pageNotFound(c *echo.Context) error {
	return s.pageMessage(c, http.StatusNotFound, "Payment not found",
		"There is no payment at this address. Check the link, or ask the shop for a new one.")
}

// isPagePath reports whether path is under the hosted pages, where a
// customer's browser lands: what the router refuses there (another
// method) is an HTML page too, never JSON.
func isPagePath(path string) bool {
	for _, k := range []pageKind{checkoutPage, threeDSPage} {
		if strings.HasPrefix(path, k.path()) || path == strings.TrimSuffix(k.path(), "/") {
			return true
		}
	}
	return false
}

func (s *Server) pageMessage(c *echo.Context, status int, heading, msg string) error {
	v := s.baseView(heading)
	v.Code, v.Heading, v.Message = status, heading, msg
	return s.renderPage(c, status, "message", v)
}

// refusedParam marks the page a refused action was sent back to, so that
// the page says nothing was changed.
const refusedParam = "refused"

// pageRefused answers an action on a payment that is final already: a 303
// to the page itself, which shows what happened and that nothing was
// changed. Not the status page as the post's own answer: a reload of that
// would post the form again (and ask the customer first), and so would
// Back and Forward through it.
func (s *Server) pageRefused(c *echo.Context, k pageKind, id string) error {
	to := k.path() + id + "?" + refusedParam + "=1"
	v := s.baseView("Payment already decided")
	v.Heading, v.Message, v.Location = "This payment was already decided", "See what happened to it", to
	c.Response().Header().Set("Location", to)
	return s.renderPage(c, http.StatusSeeOther, "redirect", v)
}

// pageRedirect sends the customer on to a merchant URL, exactly as the
// merchant gave it.
func (s *Server) pageRedirect(c *echo.Context, to string) error {
	v := s.baseView("Redirecting")
	v.Heading, v.Message, v.Location = "Returning to the shop", "Continue to the shop", to
	c.Response().Header().Set("Location", to)
	// Back from the shop loads this page again and shows the outcome, not
	// the Pay button (why: package backreload).
	backreload.Turn(c.Response(), backreload.Scope{Path: c.Request().URL.Path, SameSite: http.SameSiteLaxMode})
	return s.renderPage(c, http.StatusSeeOther, "redirect", v)
}

// renderPage writes a page with the security headers every page carries.
func (s *Server) renderPage(c *echo.Context, status int, name string, v pageView) error {
	var b bytes.Buffer
	templates, err := sharedPageTemplates()
	if err == nil {
		err = templates[name].ExecuteTemplate(&b, "layout.html", v)
	}
	if err != nil {
		s.log.ErrorContext(c.Request().Context(), "render page", "page", name, "error", err)
		b.Reset()
		b.WriteString(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Error · paymock</title><h1>Something went wrong</h1><p>This page could not be shown. This is a paymock bug; the server log has the details.</p></html>`)
		status = http.StatusInternalServerError
	}
	h := c.Response().Header()
	for k, val := range pageHeaders {
		h.Set(k, val)
	}
	return c.HTMLBlob(status, b.Bytes())
}

// pageAsset handles GET /assets/page.css, the pages' stylesheet.
func (s *Server) pageAsset(c *echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", s.pages.css)
}
