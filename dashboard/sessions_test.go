// Tests of dashboard sessions over real HTTP: the cookie, expiry, revoked
// keys, and which session ends when the store is full.

package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
)

func TestSessionCookie_IsRandomHttpOnlyStrictAndSecureBehindHTTPS(t *testing.T) {
	tests := []struct {
		publicURL  string
		wantSecure bool
	}{
		{"http://sandbox.example", false},
		{"https://sandbox.example", true},
	}
	for _, tt := range tests {
		t.Run(tt.publicURL, func(t *testing.T) {
			h := newHarness(t, func(c *dashboard.Config) { c.PublicURL = tt.publicURL })
			b := h.browser()
			form := b.get("/dashboard/sign-in")
			signIn := form.header.Values("Set-Cookie")
			p := b.click(form, "", "", "sign-in", url.Values{"api_key": {acmeKey}})
			var session *http.Cookie
			for _, c := range (&http.Response{Header: p.header}).Cookies() {
				if c.Name == "paymock_session" {
					session = c
				}
			}
			if session == nil {
				t.Fatalf("no session cookie; Set-Cookie: %q", p.header.Values("Set-Cookie"))
			}
			if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure != tt.wantSecure || session.Path != "/dashboard" {
				t.Errorf("cookie %s: HttpOnly %v SameSite %v Secure %v Path %q; want true, Strict, %v, /dashboard",
					session.Raw, session.HttpOnly, session.SameSite, session.Secure, session.Path, tt.wantSecure)
			}
			if session.MaxAge <= 0 {
				t.Errorf("cookie %s: no Max-Age, want it to expire", session.Raw)
			}
			if len(session.Value) < 22 { // 128 bits in base64
				t.Errorf("cookie value %d characters: fewer than 128 bits", len(session.Value))
			}
			for _, c := range signIn {
				if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") || strings.Contains(c, "Secure") != tt.wantSecure {
					t.Errorf("sign-in cookie %q lacks the flags", c)
				}
			}
			// Two sign-ins never share a cookie.
			other := h.browser()
			o := other.click(other.get("/dashboard/sign-in"), "", "", "sign-in", url.Values{"api_key": {acmeKey}})
			for _, c := range (&http.Response{Header: o.header}).Cookies() {
				if c.Name == "paymock_session" && c.Value == session.Value {
					t.Error("two sign-ins got the same session cookie")
				}
			}
		})
	}
}

func TestSession_ExpiresWhenIdleOrTooOld(t *testing.T) {
	tests := []struct {
		name  string
		steps []time.Duration // pauses between requests; the last one ends it
	}{
		{"idle past 8h", []time.Duration{8*time.Hour + time.Second}},
		{"busy but past 24h", []time.Duration{7 * time.Hour, 7 * time.Hour, 7 * time.Hour, 4 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			b := h.browser()
			b.signIn(acmeKey)
			p := b.get("/dashboard/payments/" + pay.ID)
			for i, d := range tt.steps {
				h.sleep(d)
				if i < len(tt.steps)-1 {
					if got := b.get("/dashboard/clock"); got.status != http.StatusOK {
						t.Fatalf("after %v the session had already ended: %d", d, got.status)
					}
				}
			}
			// A post on the expired session changes nothing and says so.
			post := b.click(p, "", "", "complete", nil)
			if post.status != http.StatusUnauthorized || !strings.Contains(post.field("error"), "session has ended") {
				t.Errorf("post after expiry: %d %q, want 401 saying the session ended", post.status, post.field("error"))
			}
			if got, _ := h.fake.store.Get(context.Background(), "acme", pay.ID); got.Status != paymock.StatusPending {
				t.Errorf("the payment became %s on an expired session", got.Status)
			}
			// The post forgot the session; a fresh expired one shows its message on a GET.
			b2 := h.browser()
			b2.signIn(acmeKey)
			h.sleep(9 * time.Hour)
			g := b2.get("/dashboard/payments")
			if loc := g.header.Get("Location"); g.status != http.StatusSeeOther || !strings.Contains(loc, "ended=1") {
				t.Fatalf("GET after expiry: %d to %q, want 303 to the sign-in page, ended", g.status, loc)
			}
			if msg := b2.follow(g).field("flash"); !strings.Contains(msg, "session has ended") {
				t.Errorf("sign-in page after expiry says %q", msg)
			}
		})
	}
}

func TestSession_EndsWhenItsKeyIsRevoked(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.signIn(acmeKey)
	created := b.follow(b.click(b.get("/dashboard/api-keys"), "", "", "create-key", nil))
	newKey := created.field("new-key")

	other := h.browser()
	if p := other.signIn(newKey); p.field("merchant") != "acme" {
		t.Fatalf("the created key signs in as %q, want acme", p.field("merchant"))
	}
	keys := b.get("/dashboard/api-keys")
	var id string
	for _, row := range findAll(keys.doc, "data-field", "masked-key") {
		if strings.HasSuffix(textOf(row), newKey[len(newKey)-4:]) {
			id = attrOf(row.Parent.Parent, "data-key-id")
		}
	}
	if id == "" {
		t.Fatalf("the new key is not listed: %q", keys.text())
	}
	b.follow(b.click(keys, "data-key-id", id, "revoke-key", nil))
	if got := other.get("/dashboard/payments"); got.status != http.StatusSeeOther || !strings.Contains(got.header.Get("Location"), "ended=1") {
		t.Errorf("a session of the revoked key still works: %d %q", got.status, got.header.Get("Location"))
	}
	if got := b.get("/dashboard/payments"); got.status != http.StatusOK {
		t.Errorf("the session of the other key ended too: %d", got.status)
	}
}

func TestSessions_PastTheLimitTheOneInUseForTheShortestTimeEnds(t *testing.T) {
	const none = time.Duration(-1)
	tests := []struct {
		name string
		// first signs in, second a minute later; then each is used again
		// at these times from first's sign-in (none: never again), before
		// third signs in.
		firstUsedAt, secondUsedAt time.Duration
		wantFirst, wantSecond     int
	}{
		// first was used less recently than second but for longer: a
		// least-recently-used store would end first.
		{"used for less time, though more recently", 2 * time.Minute, 150 * time.Second, 200, 303},
		{"used for more time", 90 * time.Second, 4 * time.Minute, 303, 200},
		{"equally briefly, the least recently used", none, none, 303, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *dashboard.Config) { c.MaxSessions = 2 })
			start := h.now()
			first, second, third := h.browser(), h.browser(), h.browser()
			first.signIn(acmeKey)
			h.sleep(time.Minute)
			second.signIn(acmeKey)
			// Uses in time order, so that the fake clock only moves forward.
			uses := []struct {
				b  *browser
				at time.Duration
			}{{first, tt.firstUsedAt}, {second, tt.secondUsedAt}}
			if uses[1].at < uses[0].at {
				uses[0], uses[1] = uses[1], uses[0]
			}
			for _, u := range uses {
				if u.at == none {
					continue
				}
				if u.at <= h.now().Sub(start) {
					t.Fatalf("a use at %v is not after the sign-ins", u.at)
				}
				h.sleep(u.at - h.now().Sub(start))
				if got := u.b.get("/dashboard/clock").status; got != http.StatusOK {
					t.Fatalf("a session before the limit was reached: %d", got)
				}
			}
			h.sleep(time.Minute)
			third.signIn(globexKey)
			for name, tt := range map[string]struct {
				b    *browser
				want int
			}{"first": {first, tt.wantFirst}, "second": {second, tt.wantSecond}, "third": {third, 200}} {
				if got := tt.b.get("/dashboard/clock").status; got != tt.want {
					t.Errorf("%s session: %d, want %d", name, got, tt.want)
				}
			}
		})
	}
}

// flooder is one client signing in with key after key, each of them a
// merchant of its own (open mode), replaying the token of the one sign-in
// page it asked for, as a script does.
type flooder struct {
	h        *harness
	token    string
	cookie   *http.Cookie
	sessions []*browser
	n        int  // sign-ins so far, for a new key each
	drop     bool // keep no sessions, for a benchmark
}

func newFlooder(h *harness) *flooder {
	h.t.Helper()
	b := h.browser()
	p := b.get("/dashboard/sign-in")
	u, err := url.Parse(h.srv.URL + "/dashboard/sign-in")
	if err != nil {
		h.t.Fatal(err)
	}
	f := &flooder{h: h, token: p.csrf()}
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "paymock_sign_in" {
			f.cookie = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if f.token == "" || f.cookie == nil {
		h.t.Fatalf("the sign-in page gave no token or cookie: %q", p.text())
	}
	return f
}

// signIn signs in with a new key; follow makes it GET the page the
// sign-in redirects to, as a browser would, so its session is used once.
func (f *flooder) signIn(follow bool) {
	f.h.t.Helper()
	b := f.h.browser()
	u, err := url.Parse(f.h.srv.URL + "/dashboard/")
	if err != nil {
		f.h.t.Fatal(err)
	}
	b.c.Jar.SetCookies(u, []*http.Cookie{f.cookie})
	key := fmt.Sprintf("sk_flood_%06d", f.n)
	f.n++
	p := b.post("/dashboard/sign-in", url.Values{"csrf": {f.token}, "api_key": {key}})
	if p.status != http.StatusSeeOther {
		f.h.t.Fatalf("flood sign-in %s: %d, want 303; page says %q", key, p.status, p.text())
	}
	if follow {
		if got := b.follow(p); got.status != http.StatusOK {
			f.h.t.Fatalf("flood sign-in %s then its page: %d", key, got.status)
		}
	}
	if !f.drop {
		f.sessions = append(f.sessions, b)
	}
}

// live counts the flood's sessions that still answer; it uses them.
func (f *flooder) live() int {
	n := 0
	for _, b := range f.sessions {
		if b.get("/dashboard/clock").status == http.StatusOK {
			n++
		}
	}
	return n
}

func TestSessions_AFloodOfSignInsWithManyKeysDoesNotEndASessionInUse(t *testing.T) {
	const limit = 5
	tests := []struct {
		name string
		// the merchant signs in, then uses the dashboard after each pause,
		// and then leaves it idle before the flood.
		uses []time.Duration
		idle time.Duration
		// follow: each flood session GETs the page it is sent to.
		follow bool
		// hold > 0: the flood then waits this long, uses every session it
		// still has and signs in once more.
		hold       time.Duration
		wantVictim int
	}{
		{"a flood that never uses its sessions", []time.Duration{time.Minute, time.Minute}, 10 * time.Minute, false, 0, 200},
		{"a flood that follows each sign-in's redirect", []time.Duration{time.Minute, time.Minute}, 10 * time.Minute, true, 0, 200},
		{"a flood that holds its sessions for less time than the merchant used its own", []time.Duration{time.Minute, time.Minute}, 10 * time.Minute, true, time.Minute, 200},
		{"a merchant idle for hours after a minute of use", []time.Duration{time.Minute}, 7 * time.Hour, false, 0, 200},
		// The bound: a flood that keeps more sessions than the limit for
		// longer than the merchant's session was in use, and uses them
		// again, ends it.
		{"a flood holding its sessions longer than the merchant used its own", []time.Duration{time.Minute}, 0, true, 5 * time.Minute, 303},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *dashboard.Config) { c.MaxSessions = limit })
			h.fake.open = true
			victim := h.browser()
			victim.signIn(globexKey)
			for _, d := range tt.uses {
				h.sleep(d)
				if got := victim.get("/dashboard/payments").status; got != http.StatusOK {
					t.Fatalf("the merchant's session before the flood: %d", got)
				}
			}
			h.sleep(tt.idle)
			f := newFlooder(h)
			for range 3 * limit {
				f.signIn(tt.follow)
			}
			if tt.hold > 0 {
				h.sleep(tt.hold)
				f.live()
				f.signIn(tt.follow)
			}
			got := victim.get("/dashboard/payments")
			if got.status != tt.wantVictim {
				t.Errorf("the merchant's session after %d flood sign-ins: %d (to %q), want %d",
					len(f.sessions), got.status, got.header.Get("Location"), tt.wantVictim)
			}
			// The store still holds no more than the limit, and is full:
			// the flood's own sessions are what made room.
			held := f.live()
			if got.status == http.StatusOK {
				held++
			}
			if held != limit {
				t.Errorf("%d sessions answer after the flood, want the limit, %d", held, limit)
			}
		})
	}
}
