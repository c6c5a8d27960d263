// The hosted checkout and 3DS pages over HTTP: what they show, their actions and their refusals.

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock/lifecycle"
)

// Merchant URLs with query strings and escapes: the 303 must hand them
// back byte for byte.
const (
	pageSuccessURL = "https://shop.example.com/ok?order=1&x=%2F"
	pageCancelURL  = "https://shop.example.com/back?order=1&reason=a%20b&y=%C3%A9"
)

// pageResp is a page answer as a browser would see it.
type pageResp struct {
	status int
	header http.Header
	body   string
}

func (e *testEnv) fetch(req *http.Request) pageResp {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return pageResp{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// page GETs a page by its absolute URL.
func (e *testEnv) page(u string) pageResp {
	e.t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.fetch(req)
}

// postPage posts a page's form as a same-origin browser does.
func (e *testEnv) postPage(u string, form url.Values, header map[string]string) pageResp {
	e.t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return e.fetch(req)
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// tokenOf is the form token a rendered page carries.
func tokenOf(t testing.TB, body string) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no token in page:\n%s", body)
	}
	return m[1]
}

// pageURLOf is where the API sends the customer for a payment.
func (e *testEnv) pageURLOf(key, id string) string {
	e.t.Helper()
	p := e.get(key, id)
	na, ok := p["next_action"].(map[string]any)
	if !ok {
		e.t.Fatalf("payment %s has no next_action: %v", id, p)
	}
	return na["url"].(string)
}

// openPage creates a payment, opens its page and returns the page's URL
// and form token.
func (e *testEnv) openPage(key string, edit func(map[string]any)) (id, u, token string) {
	e.t.Helper()
	id = e.create(key, func(b map[string]any) {
		b["success_url"], b["cancel_url"] = pageSuccessURL, pageCancelURL
		if edit != nil {
			edit(b)
		}
	})
	u = e.pageURLOf(key, id)
	r := e.page(u)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET %s: %d\n%s", u, r.status, r.body)
	}
	return id, u, tokenOf(e.t, r.body)
}

func act(token, action string) url.Values {
	return url.Values{"token": {token}, "action": {action}}
}

// wantHTMLPage checks that an answer is an HTML page with every security
// header of the pages, and no JSON error.
func wantHTMLPage(t testing.TB, r pageResp, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\n%s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action *; base-uri 'none'; frame-ancestors 'none'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(r.body, "<!doctype html>") {
		t.Errorf("body is not an HTML page:\n%s", r.body)
	}
}

// wantRefused checks that a post on a payment already final was sent back
// to the page (a 303, so a reload posts nothing again), and returns the
// page it was sent to: the payment's status and that nothing changed.
func (e *testEnv) wantRefused(r pageResp, u string) pageResp {
	e.t.Helper()
	wantHTMLPage(e.t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != strings.TrimPrefix(u, e.URL)+"?refused=1" {
		e.t.Fatalf("refused post sent to %q, want its page %s?refused=1", loc, u)
	}
	shown := e.page(u + "?refused=1")
	wantHTMLPage(e.t, shown, http.StatusOK)
	wantNoAction(e.t, shown.body)
	if !strings.Contains(shown.body, "nothing was changed") {
		e.t.Errorf("the page a refused post was sent to:\n%s", shown.body)
	}
	return shown
}

// wantNoAction checks that a page offers nothing to do.
func wantNoAction(t testing.TB, body string) {
	t.Helper()
	for _, s := range []string{"<form", "<button", "data-action", `name="token"`} {
		if strings.Contains(body, s) {
			t.Errorf("page has %q:\n%s", s, body)
		}
	}
}

func TestPages_CheckoutShowsThePaymentAndItsButtons(t *testing.T) {
	env := newEnv(t)
	id, u, token := env.openPage(keyA, func(b map[string]any) {
		b["amount"], b["currency"] = 1234.5, "EUR"
		b["description"] = `Order <1234> & "friends"`
		b["customer"] = map[string]any{"email": "ana@example.com", "name": "Ana O'Neil"}
	})
	if !strings.HasPrefix(u, env.URL+"/checkout/"+id) {
		t.Fatalf("next_action.url %s", u)
	}
	if link := env.get(keyA, id)["payment_link"]; link != u {
		t.Errorf("payment_link %v, next_action.url %s", link, u)
	}
	r := env.page(u)
	wantHTMLPage(t, r, http.StatusOK)
	for _, want := range []string{
		`<html lang="en">`, `name="viewport"`, "<main",
		"€1,234.50", "EUR", "Order &lt;1234&gt; &amp; &#34;friends&#34;", "Ana O&#39;Neil", "ana@example.com",
		"60 min", "frozen",
		`data-action="pay"`, `data-action="cancel"`, `data-action="fail"`,
		`method="post" action="/checkout/` + id + `"`,
		`<link rel="stylesheet" href="/assets/page.css?v=`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if tokenOf(t, r.body) != token {
		t.Error("the token changed between two GETs of the same page")
	}
	// Nothing from anywhere else, no script.
	for _, bad := range []string{"<script", "http://", "https://", "//cdn", "@import"} {
		if strings.Contains(r.body, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// The clock moved: the time left follows the merchant's clock.
	env.advance(keyA, 61)
	if r := env.page(u); !strings.Contains(r.body, ">58 min<") {
		t.Errorf("after 61s the page does not say 58 min:\n%s", r.body)
	}
	// Looking never changes anything.
	if p := env.get(keyA, id); p["status"] != "pending" {
		t.Errorf("GET changed the payment: %v", p["status"])
	}
	if evs := env.events(keyA); len(evs) != 0 {
		t.Errorf("GET made events: %v", evs)
	}
}

func TestPages_StylesheetIsEmbedded(t *testing.T) {
	env := newEnv(t)
	_, u, _ := env.openPage(keyA, nil)
	body := env.page(u).body
	href := regexp.MustCompile(`rel="stylesheet" href="([^"]+)"`).FindStringSubmatch(body)
	if href == nil {
		t.Fatal("no stylesheet link")
	}
	r := env.page(env.URL + strings.ReplaceAll(href[1], "&amp;", "&"))
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for _, want := range []string{":focus-visible", "max-width: 420px", "@media"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("stylesheet lacks %q", want)
		}
	}
	if strings.Contains(r.body, "url(") || strings.Contains(r.body, "@import") {
		t.Error("stylesheet loads something")
	}
}

func TestPages_CheckoutActions(t *testing.T) {
	tests := []struct {
		action   string
		location string
		status   string
		event    string // "" for none
	}{
		{"pay", pageSuccessURL, "completed", "payment.completed"},
		{"cancel", pageCancelURL, "pending", ""},
		{"fail", pageCancelURL, "failed", "payment.failed"},
	}
	for _, tc := range tests {
		t.Run(tc.action, func(t *testing.T) {
			env := newEnv(t)
			id, u, token := env.openPage(keyA, nil)
			r := env.postPage(u, act(token, tc.action), nil)
			wantHTMLPage(t, r, http.StatusSeeOther)
			if loc := r.header.Get("Location"); loc != tc.location {
				t.Errorf("Location %q, want %q", loc, tc.location)
			}
			p := env.get(keyA, id)
			if p["status"] != tc.status {
				t.Errorf("status %v, want %s", p["status"], tc.status)
			}
			evs := env.events(keyA)
			switch {
			case tc.event == "" && len(evs) != 0:
				t.Errorf("events after %s: %v", tc.action, evs)
			case tc.event != "" && (len(evs) != 1 || evs[0]["type"] != tc.event || evs[0]["payment_id"] != id):
				t.Errorf("events after %s: %v", tc.action, evs)
			}
			if tc.status == "pending" {
				// Cancelling is leaving: the page still works afterwards.
				if r := env.page(u); !strings.Contains(r.body, `data-action="pay"`) {
					t.Error("after cancel the page no longer offers to pay")
				}
				return
			}
			if p["next_action"] != nil {
				t.Errorf("next_action %v on a %v payment", p["next_action"], p["status"])
			}
			// Done once: a second post of the same form changes nothing.
			r = env.wantRefused(env.postPage(u, act(token, tc.action), nil), u)
			if !strings.Contains(r.body, "Payment "+tc.status) {
				t.Errorf("second post:\n%s", r.body)
			}
			if n := len(env.events(keyA)); n != 1 {
				t.Errorf("%d events after a second post", n)
			}
		})
	}
}

func TestPages_ThreeDS(t *testing.T) {
	tests := []struct {
		name, card, action string
		location, status   string
		event              string
	}{
		{"approve", "4242424242424242", "approve", pageSuccessURL, "completed", "payment.completed"},
		{"decline", "4242424242424242", "decline", pageCancelURL, "failed", "payment.failed"},
		{"3DS-required card approve", lifecycle.Card3DSSucceeds, "approve", pageSuccessURL, "completed", "payment.completed"},
		{"3DS-declined card approve", lifecycle.Card3DSDeclined, "approve", pageCancelURL, "failed", "payment.failed"},
		{"3DS-declined card decline", lifecycle.Card3DSDeclined, "decline", pageCancelURL, "failed", "payment.failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			id, u, token := env.openPage(keyA, func(b map[string]any) {
				card(withCard(b))["number"] = tc.card
				b["amount"], b["currency"] = 99.99, "GBP"
			})
			if !strings.HasPrefix(u, env.URL+"/3ds/"+id) {
				t.Fatalf("next_action.url %s", u)
			}
			page := env.page(u)
			wantHTMLPage(t, page, http.StatusOK)
			last4 := tc.card[len(tc.card)-4:]
			for _, want := range []string{"Visa", `••••</span><span class="visually-hidden">ending in</span> ` + last4, "exp. 12/30", "£99.99",
				`data-action="approve"`, `data-action="decline"`} {
				if !strings.Contains(page.body, want) {
					t.Errorf("3DS page lacks %q", want)
				}
			}
			if strings.Contains(page.body, tc.card) || strings.Contains(page.body, "cvc") {
				t.Error("the 3DS page shows the card number or cvc")
			}
			if declines := tc.card == lifecycle.Card3DSDeclined; declines != strings.Contains(page.body, "declines this authentication") {
				t.Errorf("declined-card notice shown: %v, want %v", !declines, declines)
			}
			r := env.postPage(u, act(token, tc.action), nil)
			wantHTMLPage(t, r, http.StatusSeeOther)
			if loc := r.header.Get("Location"); loc != tc.location {
				t.Errorf("Location %q, want %q", loc, tc.location)
			}
			if s := env.get(keyA, id)["status"]; s != tc.status {
				t.Errorf("status %v, want %s", s, tc.status)
			}
			if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != tc.event {
				t.Errorf("events %v", evs)
			}
		})
	}
}

func TestPages_EachPaymentHasOnePageKind(t *testing.T) {
	env := newEnv(t)
	checkout, cu, ctoken := env.openPage(keyA, nil)
	threeDS, tu, ttoken := env.openPage(keyA, func(b map[string]any) { withCard(b) })
	for _, u := range []string{env.URL + "/checkout/" + threeDS, env.URL + "/3ds/" + checkout} {
		r := env.page(u)
		wantHTMLPage(t, r, http.StatusNotFound)
		if !strings.Contains(r.body, "Payment not found") {
			t.Errorf("GET %s:\n%s", u, r.body)
		}
	}
	// A token of one page does not work on the other kind's address.
	wantHTMLPage(t, env.postPage(env.URL+"/3ds/"+checkout, act(ctoken, "approve"), nil), http.StatusNotFound)
	wantHTMLPage(t, env.postPage(env.URL+"/checkout/"+threeDS, act(ttoken, "pay"), nil), http.StatusNotFound)
	// Nor an action of the other kind on the right page.
	wantHTMLPage(t, env.postPage(cu, act(ctoken, "approve"), nil), http.StatusBadRequest)
	wantHTMLPage(t, env.postPage(tu, act(ttoken, "pay"), nil), http.StatusBadRequest)
	wantHTMLPage(t, env.postPage(cu, act(ctoken, ""), nil), http.StatusBadRequest)
	for _, id := range []string{checkout, threeDS} {
		if s := env.get(keyA, id)["status"]; s != "pending" {
			t.Errorf("%s: %v", id, s)
		}
	}
	if evs := env.events(keyA); len(evs) != 0 {
		t.Errorf("events %v", evs)
	}
}

func TestPages_UnknownPaymentIs404Page(t *testing.T) {
	env := newEnv(t)
	for _, path := range []string{"/checkout/pay_nope", "/3ds/pay_nope", "/checkout/pay_0123456789abcdefghijklmnopqrstuv", "/checkout/x"} {
		r := env.page(env.URL + path)
		wantHTMLPage(t, r, http.StatusNotFound)
		if !strings.Contains(r.body, "Payment not found") {
			t.Errorf("%s:\n%s", path, r.body)
		}
		wantHTMLPage(t, env.postPage(env.URL+path, act("x", "pay"), nil), http.StatusNotFound)
	}
	// A payment forgotten by a reset is gone from its page too.
	_, u, token := env.openPage(keyA, nil)
	env.do("POST", "/_sandbox/reset", keyA, nil)
	wantHTMLPage(t, env.page(u), http.StatusNotFound)
	wantHTMLPage(t, env.postPage(u, act(token, "pay"), nil), http.StatusNotFound)
}

func TestPages_PostsWithoutTheTokenOrFromAnotherSiteAreRefused(t *testing.T) {
	env := newEnv(t)
	id, u, token := env.openPage(keyA, nil)
	_, _, otherToken := env.openPage(keyA, nil)
	tests := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no token", url.Values{"action": {"pay"}}, nil},
		{"empty token", act("", "pay"), nil},
		{"wrong token", act("AAAA"+token[4:], "pay"), nil},
		{"another payment's token", act(otherToken, "pay"), nil},
		{"token in the query only", url.Values{"action": {"pay"}}, nil},
		{"foreign Origin", act(token, "pay"), map[string]string{"Origin": "https://evil.example"}},
		{"null Origin", act(token, "pay"), map[string]string{"Origin": "null"}},
		{"cross-site fetch", act(token, "pay"), map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"same-site fetch", act(token, "pay"), map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://sub.example"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := u
			if tc.name == "token in the query only" {
				target = u + "?token=" + url.QueryEscape(token)
			}
			r := env.postPage(target, tc.form, tc.header)
			wantHTMLPage(t, r, http.StatusForbidden)
			if !strings.Contains(r.body, "nothing was changed") || r.header.Get("Location") != "" {
				t.Errorf("403 page:\n%s", r.body)
			}
		})
	}
	// A JSON body is not the form: no token in it.
	req, _ := http.NewRequest("POST", u, strings.NewReader(`{"token":"`+token+`","action":"pay"}`))
	req.Header.Set("Content-Type", "application/json")
	wantHTMLPage(t, env.fetch(req), http.StatusForbidden)
	if s := env.get(keyA, id)["status"]; s != "pending" {
		t.Fatalf("a refused post changed the payment: %v", s)
	}
	if evs := env.events(keyA); len(evs) != 0 {
		t.Fatalf("a refused post made events: %v", evs)
	}
	// The server's own origin, and a same-origin fetch, are the page itself.
	r := env.postPage(u, act(token, "cancel"), map[string]string{"Origin": env.URL})
	if r.status != http.StatusSeeOther {
		t.Errorf("same Origin: %d", r.status)
	}
	r = env.postPage(u, act(token, "cancel"), map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"})
	if r.status != http.StatusSeeOther {
		t.Errorf("same-origin fetch with a null Origin (no-referrer policy): %d", r.status)
	}
}

func TestPages_FinalPaymentsShowTheirStatusAndRefuseActions(t *testing.T) {
	for _, tc := range []struct{ call, status, event string }{
		{"complete", "completed", "payment.completed"},
		{"fail", "failed", "payment.failed"},
		{"expire", "expired", "payment.expired"},
	} {
		for _, withCardToo := range []bool{false, true} {
			name, action := tc.status, "pay"
			if withCardToo {
				name, action = tc.status+" 3DS", "approve"
			}
			t.Run(name, func(t *testing.T) {
				env := newEnv(t)
				id, u, token := env.openPage(keyA, func(b map[string]any) {
					if withCardToo {
						withCard(b)
					}
				})
				if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/"+tc.call, keyA, nil); st != http.StatusOK {
					t.Fatalf("%s: %d %v", tc.call, st, body)
				}
				r := env.page(u)
				wantHTMLPage(t, r, http.StatusOK)
				wantNoAction(t, r.body)
				if !strings.Contains(r.body, "Payment "+tc.status) || !strings.Contains(r.body, `data-status="`+tc.status+`"`) {
					t.Errorf("status page:\n%s", r.body)
				}
				// The way back to the shop: where the page's own action
				// would have sent the customer.
				back := pageCancelURL
				if tc.status == "completed" {
					back = pageSuccessURL
				}
				if want := `href="` + html.EscapeString(back) + `" data-testid="return"`; !strings.Contains(r.body, want) {
					t.Errorf("status page has no %s:\n%s", want, r.body)
				}
				for _, a := range []string{action, "cancel", "fail", "decline"} {
					r = env.postPage(u, act(token, a), nil)
					if r.status == http.StatusBadRequest { // not an action of this page
						continue
					}
					r = env.wantRefused(r, u)
					if !strings.Contains(r.body, "already "+tc.status) {
						t.Errorf("%s on a %s payment:\n%s", a, tc.status, r.body)
					}
				}
				if s := env.get(keyA, id)["status"]; s != tc.status {
					t.Errorf("status %v after posts on a final payment", s)
				}
				if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != tc.event {
					t.Errorf("events %v", evs)
				}
			})
		}
	}
}

// merchantIDOf is the open-mode merchant id of a key.
func merchantIDOf(key string) string {
	h := sha256.Sum256([]byte(key))
	return "key_" + hex.EncodeToString(h[:6])
}

func TestPages_ExpiredWhileThePageWasOpen(t *testing.T) {
	t.Run("scheduler fired", func(t *testing.T) {
		env := newEnv(t)
		id, u, token := env.openPage(keyA, func(b map[string]any) { b["expires_in"] = 600 })
		env.advance(keyA, 600)
		r := env.wantRefused(env.postPage(u, act(token, "pay"), nil), u)
		if !strings.Contains(r.body, "Payment expired") {
			t.Errorf("page:\n%s", r.body)
		}
		if s := env.get(keyA, id)["status"]; s != "expired" {
			t.Errorf("status %v", s)
		}
		if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != "payment.expired" {
			t.Errorf("events %v", evs)
		}
	})
	t.Run("before the scheduler", func(t *testing.T) {
		// The merchant's clock is past expires_at but the expiry has not
		// fired yet: the page shows expired without recording anything,
		// and a post records the expiry (once) instead of the action.
		env := newEnv(t)
		id, u, token := env.openPage(keyA, func(b map[string]any) { b["expires_in"] = 600 })
		if _, err := env.clocks.Advance(t.Context(), merchantIDOf(keyA), 600*time.Second); err != nil {
			t.Fatal(err)
		}
		r := env.page(u)
		wantHTMLPage(t, r, http.StatusOK)
		wantNoAction(t, r.body)
		if !strings.Contains(r.body, "Payment expired") {
			t.Errorf("page:\n%s", r.body)
		}
		if s := env.get(keyA, id)["status"]; s != "pending" {
			t.Fatalf("GET changed the payment: %v", s)
		}
		r = env.wantRefused(env.postPage(u, act(token, "pay"), nil), u)
		if !strings.Contains(r.body, "Payment expired") {
			t.Errorf("page:\n%s", r.body)
		}
		p := env.get(keyA, id)
		if p["status"] != "expired" || p["updated_at"] != p["expires_at"] {
			t.Errorf("payment %v", p)
		}
		env.advance(keyA, 0) // the scheduler's own expiry finds it final
		if evs := env.events(keyA); len(evs) != 1 || evs[0]["type"] != "payment.expired" {
			t.Errorf("events %v", evs)
		}
	})
}

func TestPages_ConcurrentPostsMakeOneTransition(t *testing.T) {
	env := newEnv(t)
	id, u, token := env.openPage(keyA, nil)
	const n = 8
	answers := make([]pageResp, n)
	var wg sync.WaitGroup
	for i := range n {
		action := "pay"
		if i%2 == 1 {
			action = "fail"
		}
		wg.Go(func() { answers[i] = env.postPage(u, act(token, action), nil) })
	}
	wg.Wait()
	// One post goes on to the shop; the others are sent back to the page.
	toShop := 0
	for _, r := range answers {
		switch loc := r.header.Get("Location"); {
		case r.status != http.StatusSeeOther:
			t.Errorf("status %d", r.status)
		case loc == pageSuccessURL || loc == pageCancelURL:
			toShop++
		case loc != strings.TrimPrefix(u, env.URL)+"?refused=1":
			t.Errorf("a post sent to %q", loc)
		}
	}
	if toShop != 1 {
		t.Errorf("%d posts went on to the shop, want 1", toShop)
	}
	if evs := env.events(keyA); len(evs) != 1 || evs[0]["payment_id"] != id {
		t.Errorf("events %v", evs)
	}
}

func TestPages_AreOutsideTheAPI(t *testing.T) {
	env := newEnv(t)
	_, u, _ := env.openPage(keyA, nil)
	// No key needed, and a key changes nothing.
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+keyB)
	wantHTMLPage(t, env.fetch(req), http.StatusOK)
	// Methods other than GET and POST are the API's 405, in JSON.
	req, _ = http.NewRequest("PUT", u, nil)
	if r := env.fetch(req); r.status != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d %s", r.status, r.body)
	}
	if strings.Contains(env.logs.String(), "response violates the contract") {
		t.Error("a page answer was taken for an API error")
	}
}

func TestPages_EveryPathUnderThePagesIsTheHTML404(t *testing.T) {
	env := newEnv(t)
	for _, p := range []string{"/checkout/", "/3ds/", "/checkout", "/3ds", "/checkout/pay_x/more", "/3ds/a/b/c", "/checkout/" + strings.Repeat("x", 3000)} {
		for _, method := range []string{"GET", "POST"} {
			req, _ := http.NewRequest(method, env.URL+p, nil)
			wantHTMLPage(t, env.fetch(req), http.StatusNotFound)
		}
	}
	// Another method on a page is the HTML 405, not the API's JSON one.
	id, u, _ := env.openPage(keyA, nil)
	for _, p := range []string{u, "/checkout/" + id, "/3ds/x", "/checkout/a/b", "/3ds"} {
		if !strings.HasPrefix(p, "http") {
			p = env.URL + p
		}
		for _, method := range []string{"PUT", "DELETE", "PATCH"} {
			req, _ := http.NewRequest(method, p, nil)
			r := env.fetch(req)
			wantHTMLPage(t, r, http.StatusMethodNotAllowed)
			if got := r.header.Get("Allow"); got != "GET, HEAD, POST" {
				t.Errorf("%s %s: Allow %q", method, p, got)
			}
		}
	}
}
