// Routes and the links every handler goes through: who is signed in, the
// checks of a posted form, signing in and out, and the answers to what went
// wrong.

package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/paymock/paymock"
)

// maxForm bounds a posted form; the largest real one is an endpoint URL.
const maxForm = 16 << 10

// registerRoutes registers every page and form, area by area.
func (d *Dashboard) registerRoutes() {
	m := d.mux
	m.HandleFunc("GET "+assetPath, d.serveCSS)
	m.HandleFunc("GET "+Prefix+"/{$}", d.handleHome)
	m.HandleFunc("GET "+Prefix, d.handleHome)
	m.HandleFunc("GET "+Prefix+"/sign-in", d.handleSignInPage)
	m.HandleFunc("POST "+Prefix+"/sign-in", d.handleSignIn)
	m.HandleFunc("POST "+Prefix+"/sign-out", d.action(d.handleSignOut))
	d.registerPaymentRoutes()
	d.registerKeyRoutes()
	d.registerWebhookRoutes()
	d.registerClockRoutes()
	d.registerJournalRoutes()
	// Everything else under the prefix is a page asked for with another
	// method, or one that does not exist.
	m.HandleFunc(Prefix, d.handleElsewhere)
	m.HandleFunc(Prefix+"/", d.handleElsewhere)
}

// routedMethods are the methods a route of the dashboard may take.
var routedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowed lists the methods that a route of the dashboard takes at r's
// path ("GET, HEAD"), "" when none does.
func (d *Dashboard) allowed(r *http.Request) string {
	var allow []string
	for _, method := range routedMethods {
		other := r.Clone(r.Context())
		other.Method = method
		if _, pattern := d.mux.Handler(other); pattern != "" && pattern != Prefix && pattern != Prefix+"/" {
			allow = append(allow, method)
		}
	}
	return strings.Join(allow, ", ")
}

// handleElsewhere answers what no route takes: a page or form asked for
// with another method is a 405 page with an Allow header, signed in or
// not (which methods a path takes is no secret); any other path is a page
// that does not exist.
func (d *Dashboard) handleElsewhere(w http.ResponseWriter, r *http.Request) {
	allow := d.allowed(r)
	if allow == "" {
		d.page(func(w http.ResponseWriter, r *http.Request, v *visit) {
			d.notFound(w, r, v, "There is no such page in the dashboard.")
		})(w, r)
		return
	}
	const heading = "Method not allowed"
	pv := view{Title: heading}
	if v, _ := d.visitOf(r); v != nil {
		defer v.end()
		pv = v.view(heading, "")
	}
	pv.Data = messageData{Code: http.StatusMethodNotAllowed, Heading: heading,
		Message: "This address takes " + allow + " requests, not " + r.Method + "."}
	w.Header().Set("Allow", allow)
	d.render(w, r, http.StatusMethodNotAllowed, "message", pv)
}

// visit is one request of a signed-in browser. It holds its merchant
// (held) from visitOf until end, called when the handler has returned.
type visit struct {
	token string // the session cookie's value
	s     session
	m     *paymock.Merchant
	held  Visit // m's hold: not evicted or forgotten while it lasts
	notes notes // what the last post left to show; only pages take them
}

// end lets the visit's merchant go: the request is over.
func (v *visit) end() { letGo(v.held) }

// letGo ends a hold on a merchant, if there is one.
func letGo(held Visit) {
	if held != nil {
		held.End()
	}
}

// view starts the layout of a signed-in page, with the notes the last
// post left.
func (v *visit) view(title, section string) view {
	return view{Title: title, Section: section, Merchant: v.m.Name, MerchantID: v.m.ID, CSRF: v.s.csrf,
		Flash: v.notes.Flash, Error: v.notes.Error}
}

// absence says why a request has no visit.
type absence int

const (
	// signedOut: the browser sent no session cookie.
	signedOut absence = iota
	// ended: the cookie named a session that has ended (expired, signed
	// out, or its key no longer signs in); the cookie is to be cleared.
	ended
	// unreachable: the database that holds the session's key cannot be
	// reached, so whether the key still signs in is unknown. The session
	// is kept, and works again once the database is back.
	unreachable
)

// Outage messages: what a person sees while the sandbox's database cannot
// be reached. The session and its cookie are kept.
const (
	outagePage   = "The sandbox's database cannot be reached, so this page cannot be shown now. Try again shortly."
	outageAction = "The sandbox's database cannot be reached, so nothing was changed. Try again shortly."
	outageSignIn = "The sandbox's database cannot be reached, so the key could not be checked. Try again shortly."
	// outageSession is the sign-in page asked for by a browser whose
	// session could not be checked.
	outageSession = "The sandbox's database cannot be reached, so your session cannot be checked now. You are still signed in: try again shortly."
)

// visitOf finds the browser's session and asks again whose its key is.
// Without a visit, why says what stands in the way. A visit holds its
// merchant until its end, which the caller defers: a request that acts
// for a merchant never outlives the registry's hold on it, as an API
// request does not.
func (d *Dashboard) visitOf(r *http.Request) (v *visit, why absence) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, signedOut
	}
	s, ok := d.sessions.use(c.Value, d.now())
	if !ok {
		return nil, ended
	}
	m, held, err := d.cfg.Auth.Visit(r.Context(), s.key)
	if errors.Is(err, paymock.ErrUnavailable) {
		// An outage is not a revocation: ending the session would sign
		// every browser out for as long as the database is away.
		d.log.WarnContext(r.Context(), "dashboard session kept: the database cannot be reached to check its api key", "merchant", s.merchantID, "error", err)
		return nil, unreachable
	}
	if err != nil || m == nil || m.ID != s.merchantID {
		letGo(held) // another merchant's now: this session acts for none
		d.sessions.end(c.Value)
		d.log.InfoContext(r.Context(), "dashboard session ended: its api key no longer signs in", "merchant", s.merchantID)
		return nil, ended
	}
	return &visit{token: c.Value, s: s, m: m, held: held}, signedOut
}

// page wraps a handler that shows a page: a browser that is not signed in
// is sent to the sign-in form, and comes back here after it.
func (d *Dashboard) page(fn func(http.ResponseWriter, *http.Request, *visit)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, why := d.visitOf(r)
		if v == nil {
			if why == unreachable {
				d.unavailable(w, r, nil, outagePage)
				return
			}
			q := url.Values{"next": {r.URL.RequestURI()}}
			if why == ended {
				http.SetCookie(w, d.cookie(sessionCookie, "", -1))
				q.Set("ended", "1")
			}
			http.Redirect(w, r, Prefix+"/sign-in?"+q.Encode(), http.StatusSeeOther)
			return
		}
		defer v.end()
		var left bool
		if v.notes, left = d.sessions.takeNotes(v.token); left {
			d.turnPages(w) // the page left showed a post's note: not to come back
		}
		fn(w, r, v)
	}
}

// action wraps a handler that changes something. Nothing runs unless the
// browser is signed in, the form comes from this origin and carries the
// session's CSRF token.
func (d *Dashboard) action(fn func(http.ResponseWriter, *http.Request, *visit)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		v, why := d.visitOf(r)
		if v == nil {
			if why == unreachable {
				d.unavailable(w, r, nil, outageAction)
				return
			}
			msg := "You are not signed in, so nothing was changed. Sign in and try again."
			if why == ended {
				http.SetCookie(w, d.cookie(sessionCookie, "", -1))
				msg = "Your session has ended, so nothing was changed. Sign in again and repeat what you were doing."
			}
			d.showSignIn(w, r, http.StatusUnauthorized, msg, "")
			return
		}
		defer v.end()
		if err := d.crossOrigin.Check(r); err != nil {
			d.log.InfoContext(r.Context(), "dashboard post refused: cross-origin", "merchant", v.m.ID, "path", r.URL.Path)
			d.message(w, r, v, http.StatusForbidden, "Request refused",
				"This form was sent from another site, so nothing was changed.")
			return
		}
		if err := r.ParseForm(); err != nil {
			d.message(w, r, v, http.StatusBadRequest, "Request refused",
				"The form could not be read, so nothing was changed.")
			return
		}
		if !sameToken(v.s.csrf, r.PostForm.Get("csrf")) {
			d.log.InfoContext(r.Context(), "dashboard post refused: bad csrf token", "merchant", v.m.ID, "path", r.URL.Path)
			d.message(w, r, v, http.StatusForbidden, "Request refused",
				"This form is out of date or did not come from this dashboard, so nothing was changed. Reload the page and try again.")
			return
		}
		// Even a refused post leaves the page it came from: whether
		// that page showed a note no longer matters, as this answer
		// turns the pages (once: see turnPages).
		d.sessions.leave(v.token)
		d.turnPages(w)
		fn(w, r, v)
	}
}

// done ends a successful post: the note for the next page, and a 303 to it.
func (d *Dashboard) done(w http.ResponseWriter, r *http.Request, v *visit, to string, note func(*notes)) {
	if note != nil {
		d.sessions.note(v.token, note)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// refusedParam marks the page a refused post is sent back to, as the
// hosted pages do.
const refusedParam = "refused"

// refuse ends a post that was refused and changed nothing: why (and what
// its form's field held, to correct) go to the page it came from through
// the session, and a 303 sends the browser there with ?refused=1. The
// page answers 200 and shows the reason once; a reload shows the page
// again instead of posting the form again.
func (d *Dashboard) refuse(w http.ResponseWriter, r *http.Request, v *visit, to, why, typed string) {
	d.sessions.note(v.token, func(n *notes) { n.Error, n.Typed = why, typed })
	u, err := url.Parse(to)
	if err != nil { // to is one of the dashboard's paths, or a localPath
		u = &url.URL{Path: Prefix + "/payments"}
	}
	q := u.Query()
	q.Set(refusedParam, "1")
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// localPath returns next when it is a path of the dashboard, "" otherwise:
// a sign-in link must not send the browser to another site.
func localPath(next string) string {
	if next == "" || strings.ContainsAny(next, "\\\r\n") {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(next, "//") {
		return ""
	}
	if u.Path != Prefix && !strings.HasPrefix(u.Path, Prefix+"/") || strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") {
		return ""
	}
	return next
}

// signInData is what the sign-in form shows.
type signInData struct {
	Token string
	Next  string
}

// handleHome handles GET /dashboard: the payments for a signed-in browser,
// the sign-in form for any other.
func (d *Dashboard) handleHome(w http.ResponseWriter, r *http.Request) {
	v, why := d.visitOf(r)
	if v != nil {
		v.end()
		http.Redirect(w, r, Prefix+"/payments", http.StatusSeeOther)
		return
	}
	if why == unreachable {
		d.unavailable(w, r, nil, outagePage)
		return
	}
	d.showSignIn(w, r, http.StatusOK, "", "")
}

// handleSignInPage handles GET /dashboard/sign-in.
func (d *Dashboard) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	v, why := d.visitOf(r)
	if v != nil {
		v.end()
		if next == "" {
			next = Prefix + "/payments"
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if why == unreachable {
		// The session is kept: once the database is back the page asked
		// for opens without signing in again. The form stays, for a
		// configured key, which is checked without the database.
		d.showSignIn(w, r, http.StatusServiceUnavailable, outageSession, next)
		return
	}
	msg := ""
	switch {
	case r.URL.Query().Get("ended") != "":
		msg = "Your session has ended (it expired, or its API key was revoked). Sign in again."
	case r.URL.Query().Get("signed-out") != "":
		msg = "You are signed out."
	}
	d.showSignIn(w, r, http.StatusOK, msg, next)
}

func (d *Dashboard) showSignIn(w http.ResponseWriter, r *http.Request, status int, msg, next string) {
	data := signInData{Token: d.signInToken(d.signInValue(w, r)), Next: next}
	v := view{Title: "Sign in", Data: data}
	if status >= 400 {
		v.Error = msg
	} else {
		v.Flash = msg
	}
	d.render(w, r, status, "sign-in", v)
}

// handleSignIn handles POST /dashboard/sign-in: an API key opens a session
// of its merchant. A wrong key gets one answer whether or not it exists.
func (d *Dashboard) handleSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := d.crossOrigin.Check(r); err != nil {
		d.showSignIn(w, r, http.StatusForbidden, "This form was sent from another site, so you were not signed in.", "")
		return
	}
	if err := r.ParseForm(); err != nil {
		d.showSignIn(w, r, http.StatusBadRequest, "The form could not be read. Try again.", "")
		return
	}
	next := localPath(r.PostForm.Get("next"))
	c, err := r.Cookie(signInCookie)
	if err != nil || !sameToken(d.signInToken(c.Value), r.PostForm.Get("csrf")) {
		d.showSignIn(w, r, http.StatusForbidden, "This form is out of date or did not come from this dashboard, so you were not signed in. Try again.", next)
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("api_key"))
	m, held, err := d.cfg.Auth.Visit(r.Context(), key)
	if errors.Is(err, paymock.ErrUnavailable) {
		// The key may well be good: say so, rather than that it was
		// refused, and keep the form's cookie for another try.
		d.log.WarnContext(r.Context(), "dashboard sign-in not checked: the database cannot be reached", "error", err)
		d.showSignIn(w, r, http.StatusServiceUnavailable, outageSignIn, next)
		return
	}
	if err != nil || m == nil {
		letGo(held)
		d.log.InfoContext(r.Context(), "dashboard sign-in refused")
		d.showSignIn(w, r, http.StatusUnauthorized, "That API key was not accepted. Check it and try again.", next)
		return
	}
	defer letGo(held) // the session is opened for a merchant held
	if old, err := r.Cookie(sessionCookie); err == nil {
		d.sessions.end(old.Value) // a fresh session on every sign-in: no fixation
	}
	token := d.sessions.create(m.ID, key, d.now())
	http.SetCookie(w, d.cookie(sessionCookie, token, d.cfg.SessionMax))
	http.SetCookie(w, d.cookie(signInCookie, "", -1))
	d.log.InfoContext(r.Context(), "dashboard sign-in", "merchant", m.ID)
	if next == "" {
		next = Prefix + "/payments"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleSignOut handles POST /dashboard/sign-out.
func (d *Dashboard) handleSignOut(w http.ResponseWriter, r *http.Request, v *visit) {
	d.sessions.end(v.token)
	http.SetCookie(w, d.cookie(sessionCookie, "", -1))
	d.log.InfoContext(r.Context(), "dashboard sign-out", "merchant", v.m.ID)
	http.Redirect(w, r, Prefix+"/sign-in?signed-out=1", http.StatusSeeOther)
}

// messageData is the content of a message page.
type messageData struct {
	Code    int
	Heading string
	Message string
	// Retry is the page to ask for again, offered when waiting may be
	// all it takes; "" for none.
	Retry string
}

// message shows a page that only says something: a refusal, a missing id.
func (d *Dashboard) message(w http.ResponseWriter, r *http.Request, v *visit, status int, heading, msg string) {
	pv := v.view(heading, "")
	pv.Data = messageData{Code: status, Heading: heading, Message: msg}
	d.render(w, r, status, "message", pv)
}

// unavailable answers a request that an outage of the database stopped:
// a 503 that says waiting is the remedy, and no change to the session or
// its cookie. v is nil when the outage came before any merchant could be
// read: the page then has no navigation. A page offers to be asked for
// again; a post does not (the browser would send the form again).
func (d *Dashboard) unavailable(w http.ResponseWriter, r *http.Request, v *visit, msg string) {
	const heading = "Database unreachable"
	pv := view{Title: heading}
	if v != nil {
		pv = v.view(heading, "")
	}
	data := messageData{Code: http.StatusServiceUnavailable, Heading: heading, Message: msg}
	if r.Method == http.MethodGet {
		data.Retry = localPath(r.URL.RequestURI())
	}
	pv.Data = data
	d.render(w, r, http.StatusServiceUnavailable, "message", pv)
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, v *visit, msg string) {
	d.message(w, r, v, http.StatusNotFound, "Not found", msg)
}

// isNotFound reports an id that is unknown, or another merchant's: the two
// are the same answer everywhere.
func isNotFound(err error) bool {
	if errors.Is(err, paymock.ErrUnavailable) {
		return false // whether it exists is unknown
	}
	if errors.Is(err, paymock.ErrNotFound) {
		return true
	}
	de, ok := paymock.AsError(err)
	return ok && de.Type == paymock.NotFound
}

// refusal is the message of an error the merchant can act on (a conflict,
// an input or a limit the sandbox refuses); ok is false for anything
// else: an outage, or a bug to log.
func refusal(err error) (msg string, ok bool) {
	if errors.Is(err, paymock.ErrUnavailable) {
		return "", false
	}
	de, ok := paymock.AsError(err)
	if !ok {
		return "", false
	}
	return de.Error(), true
}

// failed answers an error of a call to the sandbox that is neither a
// missing id nor a refusal: the person is told, the log gets the details.
// A database that cannot be reached is a 503 that says so (waiting is the
// remedy); anything else is a paymock bug.
func (d *Dashboard) failed(ctx context.Context, w http.ResponseWriter, r *http.Request, v *visit, what string, err error) {
	if errors.Is(err, paymock.ErrUnavailable) {
		d.log.WarnContext(ctx, "dashboard: "+what+": the database cannot be reached", "merchant", v.m.ID, "error", err)
		d.unavailable(w, r, v, "The sandbox's database cannot be reached, so paymock could not "+what+". Try again shortly.")
		return
	}
	d.log.ErrorContext(ctx, "dashboard: "+what, "merchant", v.m.ID, "error", err)
	d.message(w, r, v, http.StatusInternalServerError, "Something went wrong",
		"paymock could not "+what+". This is a paymock bug; the server log has the details.")
}
