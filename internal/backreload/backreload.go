// Package backreload makes Back load a page again, rather than show it as
// it was, once an action changed what the page shows: the hosted pages
// after the customer paid, the dashboard's after a post.
//
// Chromium keeps even a Cache-Control: no-store page in its back/forward
// cache, and restores it on Back, unless one of the page's cookies changed
// since it was loaded. Without a change, Back from the shop showed the
// checkout page as it was, Pay button and all, for a payment already
// completed, and Back in the dashboard showed a payment still pending or a
// new API key a second time. So an action sets one cookie of the page's
// path to a new value: it carries nothing and the server never reads it;
// its change alone makes Back load the page again.
package backreload

import (
	"net/http"
	"strconv"
	"time"
)

// CookieName is the cookie whose change makes Back load the pages again.
const CookieName = "paymock_page"

// maxAge only has to cover the visit elsewhere and the Back that follows.
const maxAge = time.Minute

// Scope is the pages a change reloads and how their cookie travels, as
// the server that sets it scopes its other cookies.
type Scope struct {
	Path     string // the pages' path: a hosted page's own, or the dashboard's prefix
	Secure   bool   // sent over https only
	SameSite http.SameSite
}

// Turn sets the cookie anew in w, so that Back loads the pages of s again.
func Turn(w http.ResponseWriter, s Scope) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: strconv.FormatInt(time.Now().UnixNano(), 36),
		Path: s.Path, MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: s.Secure, SameSite: s.SameSite,
	})
}

// Turned returns the cookies an answer's header sets under CookieName:
// the one way the cookie is read, by tests that check an answer turned
// the pages (once: see the dashboard's turnPages).
func Turned(h http.Header) []*http.Cookie {
	var turned []*http.Cookie
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == CookieName {
			turned = append(turned, c)
		}
	}
	return turned
}
