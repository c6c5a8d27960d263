// End-to-end tests of the hosted pages in a real headless Chromium: create
// a payment over the API, open next_action.url, click, land on the
// merchant's page, check the payment and its webhook. Each page is saved as
// a PNG at phone and desktop sizes in test-output/screenshots/.

package sandbox

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
)

// screenshotDir is test-output/screenshots at the repository root.
const screenshotDir = "../test-output/screenshots"

// browserTimeout bounds one test's browser work: a fail-safe against a
// hung browser, never a timing assertion.
const browserTimeout = 60 * time.Second

// The one browser of the package's test run; each test opens a tab in it.
var browser struct {
	once   sync.Once
	ctx    context.Context
	stop   func()
	err    error
	reason string // why there is no browser, for the test that needs one
}

func TestMain(m *testing.M) {
	code := pgtest.Run(m) // a throwaway PostgreSQL when PAYMOCK_TEST_STORE=postgres
	if browser.stop != nil {
		browser.stop()
	}
	os.Exit(code)
}

// chromiumPath is the browser to drive: $CHROMIUM, else Debian's chromium.
func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	if p, err := exec.LookPath("/usr/bin/chromium"); err == nil {
		return p, nil
	}
	return exec.LookPath("chromium")
}

func startBrowser() {
	path, err := chromiumPath()
	if err != nil {
		browser.err = err
		browser.reason = "no Chromium found (" + err.Error() + ")"
		return
	}
	dir, err := os.MkdirTemp("", "paymock-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.NoSandbox, // root in a container has no user namespace sandbox
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-proxy-server", true),
		// The pages load nothing from the internet; make sure the browser
		// cannot either: every host name but loopback fails to resolve.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	browser.stop = func() {
		cancelCtx()
		cancelAlloc()
		_ = os.RemoveAll(dir)
	}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		browser.err = err
		browser.reason = "Chromium at " + path + " did not start: " + err.Error()
		return
	}
	browser.ctx = ctx
}

// newTab opens a tab in the package's browser, closed when the test ends.
// Without a browser the test fails, unless PAYMOCK_SKIP_BROWSER=1.
func newTab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.err != nil {
		msg := "browser tests need Chromium: " + browser.reason +
			". Install it (scripts/test.sh does: apt-get install chromium) or point $CHROMIUM at a Chrome; " +
			"PAYMOCK_SKIP_BROWSER=1 skips these tests"
		if os.Getenv("PAYMOCK_SKIP_BROWSER") == "1" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	tab, cancelTab := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil { // opens the tab, bound to tab only
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, browserTimeout)
	t.Cleanup(cancel)
	return ctx
}

// shop is the merchant's site: where success_url and cancel_url lead.
type shop struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string // request URIs, in order
}

func newShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.got = append(s.got, r.Method+" "+r.RequestURI)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Shop</title><h1 id="landed">Back at the shop</h1><p id="where">%s</p></html>`,
			html.EscapeString(r.RequestURI))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *shop) successURL() string { return s.srv.URL + "/ok?order=1&x=%2F" }
func (s *shop) cancelURL() string  { return s.srv.URL + "/back?order=1&reason=a%20b" }

func (s *shop) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// browserEnv is a server with a webhook receiver, a shop and a tab.
type browserEnv struct {
	*testEnv
	rcv  *receiver
	shop *shop
	tab  context.Context
}

func newBrowserEnv(t *testing.T) *browserEnv {
	t.Helper()
	tab := newTab(t)
	rcv := newReceiver(t, nil)
	env := newEnv(t, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	return &browserEnv{testEnv: env, rcv: rcv, shop: newShop(t), tab: tab}
}

// createPayment makes a payment that returns to the shop and gives its id
// and page URL.
func (b *browserEnv) createPayment(edit func(map[string]any)) (id, pageURL string) {
	b.t.Helper()
	id = b.create(keyA, func(body map[string]any) {
		body["success_url"], body["cancel_url"] = b.shop.successURL(), b.shop.cancelURL()
		if edit != nil {
			edit(body)
		}
	})
	return id, b.pageURLOf(keyA, id)
}

func (b *browserEnv) run(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.tab, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// open navigates to a page and waits until sel shows.
func (b *browserEnv) open(u, sel string) {
	b.t.Helper()
	b.run(chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// click presses a page's button and waits for where it leads to show sel.
func (b *browserEnv) click(action, sel string) {
	b.t.Helper()
	b.run(chromedp.Click(chromedp.CSS(`button[data-action="`+action+`"]`)), chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (b *browserEnv) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.tab, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

func (b *browserEnv) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.tab, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// count is how many elements match a CSS selector.
// wantStatusPage opens a final payment's page, checks it shows status and
// offers no action at all, and saves its screenshots as status-<status>.
func (b *browserEnv) wantStatusPage(u, status string) {
	b.t.Helper()
	b.open(u, `[data-status="`+status+`"]`)
	if n := b.count("form, button, [data-action]"); n != 0 {
		b.t.Errorf("%d actions on a %s payment's page", n, status)
	}
	b.screenshot("status-" + status)
}

func (b *browserEnv) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.tab, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// screenshot saves the current page at phone and desktop sizes as
// test-output/screenshots/<name>-phone.png and <name>-desktop.png.
func (b *browserEnv) screenshot(name string) {
	b.t.Helper()
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	sizes := []struct {
		name string
		w, h int64
		opts []chromedp.EmulateViewportOption
	}{
		{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch}},
		{"desktop", 1280, 800, nil},
	}
	for _, s := range sizes {
		b.run(chromedp.EmulateViewport(s.w, s.h, s.opts...))
		buf, err := chromedp.Run(b.tab, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, name+"-"+s.name+".png"), buf, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// landed checks that the browser is on the shop at exactly want.
func (b *browserEnv) landed(want string) {
	b.t.Helper()
	if loc := b.location(); loc != want {
		b.t.Errorf("browser at %s, want %s", loc, want)
	}
	reqs := b.shop.requests()
	wantReq := "GET " + strings.TrimPrefix(want, b.shop.srv.URL)
	if len(reqs) != 1 || reqs[0] != wantReq {
		b.t.Errorf("the shop got %v, want [%s]", reqs, wantReq)
	}
}

// webhooks waits until every delivery due has been attempted and returns
// the verified ones.
func (b *browserEnv) webhooks() []delivery {
	b.t.Helper()
	b.advance(keyA, 0)
	return b.rcv.deliveries()
}

func (b *browserEnv) wantOneWebhook(typ, id, status string) {
	b.t.Helper()
	got := b.webhooks()
	if len(got) != 1 || got[0].Type != typ || got[0].Payment["id"] != id || got[0].Payment["status"] != status {
		b.t.Errorf("webhooks %+v, want one %s for %s", got, typ, id)
	}
}

func TestBrowser_CheckoutPay(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) {
		body["amount"], body["description"] = 1234.5, "Order #1234 · 2 items"
	})
	b.open(u, `button[data-action="pay"]`)
	if got := b.text(`[data-testid="amount"]`); got != "$1,234.50" {
		t.Errorf("amount %q", got)
	}
	if got := b.text("main"); !strings.Contains(got, "Jane Doe") || !strings.Contains(got, "jane@example.com") || !strings.Contains(got, "60 min") {
		t.Errorf("page text:\n%s", got)
	}
	b.screenshot("checkout")
	// The keyboard reaches the pay button, and its focus shows.
	b.run(chromedp.KeyEvent("\t"))
	focused, err := chromedp.Run(b.tab, chromedp.Evaluate[string](`document.activeElement.dataset.action || ""`))
	if err != nil || focused != "pay" {
		t.Errorf("first Tab focuses %q (%v), want the pay button", focused, err)
	}
	b.screenshot("checkout-focus")

	b.click("pay", "#landed")
	b.landed(b.shop.successURL())
	if s := b.get(keyA, id)["status"]; s != "completed" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.completed", id, "completed")

	// Back to the page: it shows the outcome and offers nothing.
	b.wantStatusPage(u, "completed")
}

func TestBrowser_CheckoutCancel(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(nil)
	b.open(u, `button[data-action="cancel"]`)
	b.click("cancel", "#landed")
	b.landed(b.shop.cancelURL())
	if s := b.get(keyA, id)["status"]; s != "pending" {
		t.Errorf("status %v after cancel", s)
	}
	if got := b.webhooks(); len(got) != 0 {
		t.Errorf("webhooks after cancel: %+v", got)
	}
	if evs := b.events(keyA); len(evs) != 0 {
		t.Errorf("events after cancel: %v", evs)
	}
}

func TestBrowser_CheckoutFail(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) { body["amount"], body["currency"] = 49.9, "CAD" })
	b.open(u, `button[data-action="fail"]`)
	if got := b.text(`[data-testid="amount"]`); got != "CA$49.90" {
		t.Errorf("amount %q", got)
	}
	b.click("fail", "#landed")
	b.landed(b.shop.cancelURL())
	if s := b.get(keyA, id)["status"]; s != "failed" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.failed", id, "failed")
	b.wantStatusPage(u, "failed")
}

func TestBrowser_ThreeDSApprove(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) {
		withCard(body)
		body["amount"], body["currency"] = 1234.5, "EUR"
	})
	b.open(u, `button[data-action="approve"]`)
	if got := b.text(`[data-testid="card"]`); !strings.Contains(got, "Visa") || !strings.Contains(got, "••••") || !strings.Contains(got, "4242") {
		t.Errorf("card %q", got)
	}
	if got := b.text(`[data-testid="amount"]`); got != "€1,234.50" {
		t.Errorf("amount %q", got)
	}
	b.screenshot("3ds")
	b.click("approve", "#landed")
	b.landed(b.shop.successURL())
	if s := b.get(keyA, id)["status"]; s != "completed" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.completed", id, "completed")
}

func TestBrowser_ThreeDSDecline(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) { withCard(body) })
	b.open(u, `button[data-action="decline"]`)
	b.click("decline", "#landed")
	b.landed(b.shop.cancelURL())
	if s := b.get(keyA, id)["status"]; s != "failed" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.failed", id, "failed")
}

func TestBrowser_ThreeDSDeclinedCardFailsOnApprove(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) {
		card(withCard(body))["number"] = "4000008400001629"
		body["amount"], body["currency"] = 20, "GBP"
	})
	b.open(u, `button[data-action="approve"]`)
	if got := b.text("main"); !strings.Contains(got, "declines this authentication") {
		t.Errorf("no declined-card notice:\n%s", got)
	}
	b.screenshot("3ds-declined-card")
	b.click("approve", "#landed")
	b.landed(b.shop.cancelURL())
	if s := b.get(keyA, id)["status"]; s != "failed" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.failed", id, "failed")
}

func TestBrowser_ExpiredPaymentPage(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) { body["expires_in"] = 600 })
	b.advance(keyA, 600)
	b.wantStatusPage(u, "expired")
	if got := b.text("main"); !strings.Contains(got, "Payment expired") {
		t.Errorf("page text:\n%s", got)
	}
	if s := b.get(keyA, id)["status"]; s != "expired" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.expired", id, "expired")
	if reqs := b.shop.requests(); len(reqs) != 0 {
		t.Errorf("the shop got %v", reqs)
	}
}

func TestBrowser_ExpiredWhileThePageWasOpen(t *testing.T) {
	b := newBrowserEnv(t)
	id, u := b.createPayment(func(body map[string]any) { body["expires_in"] = 600 })
	b.open(u, `button[data-action="pay"]`)
	b.advance(keyA, 600) // the customer took too long
	b.click("pay", `[data-status="expired"]`)
	if got := b.text("main"); !strings.Contains(got, "nothing was changed") {
		t.Errorf("page text:\n%s", got)
	}
	if loc := b.location(); loc != u+"?refused=1" {
		t.Errorf("browser at %s, want the page %s?refused=1", loc, u)
	}
	b.screenshot("status-expired-refused")
	if s := b.get(keyA, id)["status"]; s != "expired" {
		t.Errorf("status %v", s)
	}
	b.wantOneWebhook("payment.expired", id, "expired")
	if reqs := b.shop.requests(); len(reqs) != 0 {
		t.Errorf("the shop got %v", reqs)
	}
}

func TestBrowser_UnknownPaymentPage(t *testing.T) {
	b := newBrowserEnv(t)
	b.open(b.URL+"/checkout/pay_doesnotexist0000000000000", `[data-status="error"]`)
	if got := b.text("main"); !strings.Contains(got, "Payment not found") {
		t.Errorf("page text:\n%s", got)
	}
	b.screenshot("not-found")
}

// The pages must not depend on anything the browser refused: the CSP lets
// the stylesheet in, so the card is styled (a centred, bounded box).
func TestBrowser_StylesheetApplies(t *testing.T) {
	b := newBrowserEnv(t)
	_, u := b.createPayment(nil)
	b.open(u, "main")
	b.run(chromedp.EmulateViewport(1280, 800))
	width, err := chromedp.Run(b.tab, chromedp.Evaluate[float64](`document.querySelector("main").getBoundingClientRect().width`))
	if err != nil {
		t.Fatal(err)
	}
	if width < 300 || width > 420 {
		t.Errorf("card is %vpx wide on a desktop: the stylesheet did not apply", width)
	}
}

// TestBrowser_BackFromTheShopShowsTheOutcome presses Back on the shop's
// page, as a customer does, after each action that moves the payment:
// the page comes back showing the outcome, with no button left to press,
// not as the browser kept it before the click.
func TestBrowser_BackFromTheShopShowsTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name, action, status string
		card                 bool
	}{
		{"checkout pay", "pay", "completed", false},
		{"checkout fail", "fail", "failed", false},
		{"3DS approve", "approve", "completed", true},
		{"3DS decline", "decline", "failed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrowserEnv(t)
			_, u := b.createPayment(func(body map[string]any) {
				if tc.card {
					withCard(body)
				}
			})
			b.open(u, `button[data-action="`+tc.action+`"]`)
			b.click(tc.action, "#landed")
			// Not chromedp.NavigateBack: a page restored from the
			// back/forward cache fires no load event to wait for.
			b.run(historyBack())
			ctx, cancel := context.WithTimeout(b.tab, 10*time.Second)
			defer cancel()
			if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-status="`+tc.status+`"]`))); err != nil {
				// Evaluate, as chromedp's Location and Text wait for a load
				// that a restored page never fires.
				shown, _ := chromedp.Run(b.tab, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
				t.Fatalf("Back from the shop: no %s status (%v); the page shows:\n%s", tc.status, err, shown)
			}
			if n := b.count("form, button, [data-action]"); n != 0 {
				t.Errorf("%d actions on the page Back showed for a %s payment", n, tc.status)
			}
		})
	}
}
