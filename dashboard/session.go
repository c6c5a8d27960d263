// Sessions: who is signed in, held in memory and keyed by a digest of the
// cookie, with the CSRF token of every form and the one-time messages that
// survive a post's redirect.

package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/paymock/paymock/internal/backreload"
)

// Cookie names. Both are scoped to Prefix, HttpOnly and SameSite=Strict.
const (
	sessionCookie = "paymock_session"
	// signInCookie carries the random value the sign-in form's token is
	// made from, before there is a session to hold a token.
	signInCookie = "paymock_sign_in"
	signInMaxAge = time.Hour
)

// session is one signed-in browser.
type session struct {
	merchantID string
	// key is the API key signed in with, asked of the Authenticator again
	// on every request so that revoking it ends the session. It is never
	// logged or shown.
	key     string
	csrf    string
	created time.Time
	seen    time.Time
	notes   notes
	// shown: the last page showed notes, and is to be loaded again
	// rather than shown as it was when the browser next leaves it.
	shown bool
}

// notes are shown once, on the page a post redirects to.
type notes struct {
	Flash     string // what the post did
	NewKey    string // a key just created: its only showing
	SecretFor string // the endpoint whose secret was revealed
	Secret    string
	Error     string // why the post was refused, changing nothing
	// Typed is what a refused form's one field held (the clock's "by",
	// an endpoint's URL), to show it again for correcting.
	Typed string
}

// MaxSessionsPerMerchant bounds the sessions one merchant holds at once;
// past it its least recently used session ends. A flood of sign-ins with
// one key then ends only that merchant's own sessions.
const MaxSessionsPerMerchant = 20

// sessions holds every session, keyed by the SHA-256 of its cookie value:
// the map never holds a value that would let its reader act as a browser.
type sessions struct {
	idle, max time.Duration
	limit     int

	mu     sync.Mutex
	byHash map[[32]byte]*session
	// perMerchant counts each merchant's sessions for
	// MaxSessionsPerMerchant without a walk over all of them.
	perMerchant map[string]int
}

func newSessions(idle, max time.Duration, limit int) *sessions {
	return &sessions{idle: idle, max: max, limit: limit, byHash: make(map[[32]byte]*session),
		perMerchant: make(map[string]int)}
}

// drop forgets one session; the caller holds mu.
func (ss *sessions) drop(h [32]byte) {
	s, ok := ss.byHash[h]
	if !ok {
		return
	}
	delete(ss.byHash, h)
	if ss.perMerchant[s.merchantID] <= 1 {
		delete(ss.perMerchant, s.merchantID)
	} else {
		ss.perMerchant[s.merchantID]--
	}
}

// leastRecent is the least recently used session of the merchants for
// which of is true; the caller holds mu.
func (ss *sessions) leastRecent(of func(merchantID string) bool) ([32]byte, bool) {
	var oldest [32]byte
	var at time.Time
	found := false
	for h, s := range ss.byHash {
		if of(s.merchantID) && (!found || s.seen.Before(at)) {
			oldest, at, found = h, s.seen, true
		}
	}
	return oldest, found
}

// briefest forgets the expired sessions and returns, of the others, the
// one in use for the shortest time, from its sign-in to its latest
// request, and the least recently used among equals; the caller holds mu.
// A flood's sessions are used once or never, so they go before any session
// a merchant has been using for longer: sessions signed in after one was,
// however many keys they use, cannot have been in use longer than it while
// it is still being used. One walk does both, since a full store walks on
// every sign-in.
func (ss *sessions) briefest(now time.Time) ([32]byte, bool) {
	var victim [32]byte
	var span time.Duration
	var at time.Time
	found := false
	for h, s := range ss.byHash {
		if ss.expired(s, now) {
			ss.drop(h)
			continue
		}
		d := s.seen.Sub(s.created)
		if !found || d < span || d == span && s.seen.Before(at) {
			victim, span, at, found = h, d, s.seen, true
		}
	}
	return victim, found
}

// randomToken is 256 bits from crypto/rand, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

func digest(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// create starts a session and returns its cookie value. A merchant past
// MaxSessionsPerMerchant loses its own least recently used session. Past
// the limit of all sessions the expired ones go first, then the one in use
// for the shortest time (briefest). Ending the least recently used instead
// let a flood of sign-ins with many keys (free in open mode) end every
// session idle for as long as the flood took, 6 s for 10,000 sign-ins.
func (ss *sessions) create(merchantID, key string, now time.Time) string {
	token := randomToken()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for ss.perMerchant[merchantID] >= MaxSessionsPerMerchant {
		h, ok := ss.leastRecent(func(id string) bool { return id == merchantID })
		if !ok {
			break
		}
		ss.drop(h)
	}
	for len(ss.byHash) >= ss.limit {
		h, ok := ss.briefest(now)
		if len(ss.byHash) < ss.limit || !ok {
			break
		}
		ss.drop(h)
	}
	ss.byHash[digest(token)] = &session{merchantID: merchantID, key: key, csrf: randomToken(), created: now, seen: now}
	ss.perMerchant[merchantID]++
	return token
}

func (ss *sessions) expired(s *session, now time.Time) bool {
	return now.Sub(s.seen) >= ss.idle || now.Sub(s.created) >= ss.max
}

// use finds a live session, marks it used and returns a copy. An expired
// one is forgotten.
func (ss *sessions) use(token string, now time.Time) (session, bool) {
	h := digest(token)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byHash[h]
	if !ok {
		return session{}, false
	}
	if ss.expired(s, now) {
		ss.drop(h)
		return session{}, false
	}
	s.seen = now
	return *s, true
}

// end forgets a session.
func (ss *sessions) end(token string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.drop(digest(token))
}

// note adds to the notes the next page shows.
func (ss *sessions) note(token string, fn func(*notes)) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.byHash[digest(token)]; ok {
		fn(&s.notes)
	}
}

// takeNotes returns the notes and forgets them: a new key or a revealed
// secret is shown exactly once. The page that shows them is marked; left
// says the page the browser leaves for this one was (see turnPages).
func (ss *sessions) takeNotes(token string) (n notes, left bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byHash[digest(token)]
	if !ok {
		return notes{}, false
	}
	n, left = s.notes, s.shown
	s.notes, s.shown = notes{}, n != notes{}
	return n, left
}

// leave forgets that the page the browser leaves for a post showed notes:
// the post's answer turns the pages itself, and a second change in the
// next page's answer would undo it (see turnPages).
func (ss *sessions) leave(token string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.byHash[digest(token)]; ok {
		s.shown = false
	}
}

// len is the number of sessions held, for tests.
func (ss *sessions) len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byHash)
}

// sameToken compares a posted token with the expected one in constant time.
func sameToken(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// signInToken is the sign-in form's CSRF token: an HMAC of the browser's
// sign-in cookie under the process key. Another site can neither read the
// cookie nor the page, so it cannot make a form that signs a browser in to
// a merchant of its choosing.
func (d *Dashboard) signInToken(cookieValue string) string {
	mac := hmac.New(sha256.New, d.key)
	mac.Write([]byte("paymock dashboard sign-in\x00" + cookieValue))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// signInValue returns the browser's sign-in cookie value, setting a new
// one when it has none.
func (d *Dashboard) signInValue(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(signInCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	v := randomToken()
	http.SetCookie(w, d.cookie(signInCookie, v, signInMaxAge))
	return v
}

// cookie is one of the dashboard's cookies; maxAge < 0 deletes it.
func (d *Dashboard) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{
		Name: name, Value: value, Path: Prefix,
		HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteStrictMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
		c.Value = ""
	}
	return c
}

// turnPages changes the backreload cookie of the dashboard's pages, so
// that Back loads them again instead of showing them as they were (the
// Chromium reason is in package backreload, which the hosted pages use for
// their actions too): after a post, a payment still pending, or a new API
// key a second time.
//
// Every post sets it, for the pages from before the post. The page the
// post leads to (its note, new key or secret) loads after that change, and
// Chromium does not count the changes of a page's own navigation against
// it, so the request that leaves that page sets it again. Never twice in
// one answer: a post's answer that changed it twice left the page it led
// to restored after the next change.
func (d *Dashboard) turnPages(w http.ResponseWriter) {
	backreload.Turn(w, backreload.Scope{Path: Prefix, Secure: d.secure, SameSite: http.SameSiteStrictMode})
}
