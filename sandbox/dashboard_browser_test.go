// The developer section walked in a real headless Chromium as a merchant's
// QA engineer would: sign in with an API key, then drive payments, webhook
// endpoints, API keys, the clock, the journal and the report through the
// pages' own buttons, found only by data-action, data-field,
// data-payment-id, form labels and the navigation's link names. Every page
// is looked at at phone and desktop sizes: a screenshot in
// test-output/screenshots/, no sideways scrolling, and axe-core finding
// nothing serious or critical.

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// axeVersion is the axe-core the accessibility check runs, pinned so that a
// new release's new rules cannot turn the suite red on their own.
const axeVersion = "4.14.1"

// The axe-core of the package's test run, installed once.
var axe struct {
	once   sync.Once
	source string // axe.min.js; "" when skipped
	err    error
}

// axeDir is where axe-core is installed: $HOME/.cache/paymock-axe.
func axeDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "paymock-axe"), nil
}

// loadAxe reads axe.min.js of axeVersion, installing it with npm first when
// it is missing. A lock file keeps two test binaries from installing at
// once.
func loadAxe() (string, error) {
	dir, err := axeDir()
	if err != nil {
		return "", err
	}
	pkg := filepath.Join(dir, "node_modules", "axe-core")
	installed := func() bool {
		raw, err := os.ReadFile(filepath.Join(pkg, "package.json"))
		var meta struct{ Version string }
		return err == nil && json.Unmarshal(raw, &meta) == nil && meta.Version == axeVersion
	}
	if !installed() {
		if _, err := exec.LookPath("npm"); err != nil {
			return "", fmt.Errorf("npm not found, so axe-core cannot be installed: install Node.js with npm (apt-get install nodejs npm)")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return "", err
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			return "", fmt.Errorf("lock %s: %w", dir, err)
		}
		if !installed() { // another test binary may have installed it meanwhile
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", "axe-core@"+axeVersion)
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("npm install axe-core@%s in %s: %w\n%s", axeVersion, dir, err, out)
			}
		}
	}
	src, err := os.ReadFile(filepath.Join(pkg, "axe.min.js"))
	return string(src), err
}

// axeSource is axe.min.js, or "" when PAYMOCK_SKIP_AXE=1 skips the check.
func axeSource(t testing.TB) string {
	t.Helper()
	if os.Getenv("PAYMOCK_SKIP_AXE") == "1" {
		return ""
	}
	axe.once.Do(func() { axe.source, axe.err = loadAxe() })
	if axe.err != nil {
		t.Fatalf("the accessibility check needs axe-core: %v; PAYMOCK_SKIP_AXE=1 skips the check", axe.err)
	}
	return axe.source
}

// viewports are the sizes every page is looked at, as screenshot takes them.
var viewports = []struct {
	name string
	w, h int64
	opts []chromedp.EmulateViewportOption
}{
	{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch}},
	{"desktop", 1280, 800, nil},
}

// dash is a browser tab on a sandbox's dashboard.
type dash struct {
	*browserEnv
}

// newDash starts a sandbox with opts and opens a tab.
func newDash(t *testing.T, opts ...envOption) *dash {
	t.Helper()
	tab := newTab(t)
	return &dash{&browserEnv{testEnv: newEnv(t, opts...), tab: tab}}
}

// follow clicks what sel finds and waits until the page it leads to has
// loaded: a link, or a form's button (post, 303, get).
func follow[S chromedp.Selectable](d *dash, sel S) {
	d.t.Helper()
	if _, err := chromedp.Run(d.tab, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(sel))); err != nil {
		d.t.Fatalf("click %v: %v", sel, err)
	}
}

// press clicks the (first) button of a data-action and waits for the page
// its form leads to.
func (d *dash) press(action string) {
	d.t.Helper()
	follow(d, chromedp.CSS(`button[data-action="`+action+`"]`))
}

// nav follows the navigation link of that name.
func (d *dash) nav(name string) {
	d.t.Helper()
	follow(d, chromedp.Search(fmt.Sprintf(`//nav[@aria-label="Dashboard"]//a[normalize-space()=%q]`, name)))
}

// link follows the link in main whose text is name.
func (d *dash) link(name string) {
	d.t.Helper()
	follow(d, chromedp.Search(fmt.Sprintf(`//main//a[normalize-space()=%q]`, name)))
}

// fill types value into the form control labelled label: the control is
// found through its label, so one without a label is not found at all.
func (d *dash) fill(label, value string) {
	d.t.Helper()
	ok, err := chromedp.Run(d.tab, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const l = [...document.querySelectorAll("label")].find(l => l.textContent.trim() === %q);
		if (!l || !l.control) return false;
		l.control.focus();
		l.control.value = "";
		return document.activeElement === l.control;
	})()`, label)))
	if err != nil || !ok {
		d.t.Fatalf("no control labelled %q to type into (%v)", label, err)
	}
	d.run(chromedp.KeyEvent(value))
}

// choose picks the option of the select labelled label.
func (d *dash) choose(label, value string) {
	d.t.Helper()
	ok, err := chromedp.Run(d.tab, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const l = [...document.querySelectorAll("label")].find(l => l.textContent.trim() === %q);
		const s = l && l.control;
		if (!s || ![...s.options].some(o => o.value === %q)) return false;
		s.value = %q;
		return true;
	})()`, label, value, value)))
	if err != nil || !ok {
		d.t.Fatalf("no select labelled %q with option %q (%v)", label, value, err)
	}
}

// field is the text of the first element of a data-field.
func (d *dash) field(name string) string {
	d.t.Helper()
	return strings.TrimSpace(d.text(`[data-field="` + name + `"]`))
}

// fields is the text of every element of a data-field, in page order.
func (d *dash) fields(name string) []string {
	d.t.Helper()
	got, err := chromedp.Run(d.tab, chromedp.Evaluate[[]string](
		fmt.Sprintf(`[...document.querySelectorAll('[data-field=%q]')].map(e => e.textContent.trim())`, name)))
	if err != nil {
		d.t.Fatal(err)
	}
	return got
}

// rows is the data-payment-id of every payment row, in page order.
func (d *dash) rows() []string {
	d.t.Helper()
	got, err := chromedp.Run(d.tab, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("[data-payment-id]")].map(e => e.dataset.paymentId)`))
	if err != nil {
		d.t.Fatal(err)
	}
	return got
}

// path is where the tab is, without scheme and host.
func (d *dash) path() string {
	d.t.Helper()
	u, err := url.Parse(d.location())
	if err != nil {
		d.t.Fatal(err)
	}
	return u.RequestURI()
}

// wantPath checks that the tab is on the dashboard page p.
func (d *dash) wantPath(p string) {
	d.t.Helper()
	if got := d.path(); got != p {
		d.t.Fatalf("browser at %s, want %s", got, p)
	}
}

// signIn opens the dashboard, signs in with key and lands on Payments.
func (d *dash) signIn(key string) {
	d.t.Helper()
	d.open(d.URL+"/dashboard", `button[data-action="sign-in"]`)
	d.fill("API key", key)
	d.press("sign-in")
	d.wantPath("/dashboard/payments")
	if d.field("merchant") == "" {
		d.t.Error("the dashboard does not say which merchant is signed in")
	}
}

// look checks the page at phone and desktop sizes, no sideways scrolling
// and nothing serious or critical for axe-core, and saves its screenshots
// as test-output/screenshots/<name>-phone.png and <name>-desktop.png.
func (d *dash) look(name string) {
	d.t.Helper()
	src := axeSource(d.t)
	if src != "" {
		// Runtime.evaluate is not subject to the page's CSP, which refuses
		// every script of the page's own.
		ok, err := chromedp.Run(d.tab, chromedp.Evaluate[bool](src+"\n;typeof axe === \"object\""))
		if err != nil || !ok {
			d.t.Fatalf("%s: inject axe-core: %v", name, err)
		}
	}
	for _, v := range viewports {
		d.run(chromedp.EmulateViewport(v.w, v.h, v.opts...))
		// A phone widens its layout viewport to fit what overflows, so a
		// page that scrolls sideways shows as a window wider than the
		// phone, not only as content wider than the window.
		sizes, err := chromedp.Run(d.tab, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
		if err != nil {
			d.t.Fatal(err)
		}
		if sizes[0] > sizes[1] || sizes[1] != int(v.w) {
			d.t.Errorf("%s at %s size scrolls sideways: %d px wide in a %d px window (want %d)", name, v.name, sizes[0], sizes[1], v.w)
		}
		if src == "" {
			continue
		}
		found, err := chromedp.Run(d.tab, chromedp.Evaluate[[]string](axeRunAll, chromedp.EvalAwaitPromise))
		if err != nil {
			d.t.Fatalf("%s: run axe-core: %v", name, err)
		}
		for _, f := range found {
			d.t.Errorf("%s at %s size, axe-core: %s", name, v.name, f)
		}
	}
	d.screenshot("dashboard-" + name)
}

// waitDelivery is the next verified delivery a receiver gets.
func waitDelivery(t *testing.T, r *receiver) delivery {
	t.Helper()
	select {
	case got := <-r.notify:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver got no verified webhook")
		return delivery{}
	}
}

// reloadUntil reloads the page until the JavaScript condition holds, for
// what the sandbox does on its own goroutine (a delivery's attempt is
// recorded just after the receiver answers).
func (d *dash) reloadUntil(cond string) {
	d.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := chromedp.Run(d.tab, chromedp.Evaluate[bool](cond))
		if err != nil {
			d.t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the page never showed %s:\n%s", cond, d.text("main"))
		}
		time.Sleep(50 * time.Millisecond)
		d.run(chromedp.Reload())
	}
}

func TestDashboard_PaymentFoundCompletedAndDelivered(t *testing.T) {
	d := &dash{newBrowserEnv(t)} // the receiver is the default endpoint
	d.open(d.URL+"/dashboard", `button[data-action="sign-in"]`)
	d.look("signin")

	id := d.create(keyA, func(b map[string]any) {
		b["amount"], b["description"] = 1234.5, "Order #1234 · 2 items"
		b["customer"] = map[string]any{"email": "zoe.quinn@example.com", "name": "Zoë Quinn"}
	})
	var others []string
	for i, o := range []struct {
		amount         float64
		currency, what string
	}{{49.9, "EUR", "Annual plan"}, {12, "GBP", "Gift card"}, {89, "USD", "Headphones"}} {
		others = append(others, d.create(keyA, func(b map[string]any) {
			b["amount"], b["currency"], b["description"] = o.amount, o.currency, o.what
			b["customer"] = map[string]any{"email": fmt.Sprintf("buyer%d@example.com", i), "name": "Buyer"}
		}))
	}
	if st, body, _ := d.do("POST", "/_sandbox/payments/"+others[0]+"/fail", keyA, nil); st != http.StatusOK {
		t.Fatalf("fail %s: %d %v", others[0], st, body)
	}
	if got := waitDelivery(t, d.rcv); got.Type != "payment.failed" {
		t.Fatalf("the receiver got %s, want payment.failed", got.Type)
	}
	d.fill("API key", keyA)
	d.press("sign-in")
	d.wantPath("/dashboard/payments")
	newest := append([]string{id}, others...)
	slices.Reverse(newest)
	if got := d.rows(); !slices.Equal(got, newest) {
		t.Errorf("payments %v, want newest first %v", got, newest)
	}

	follow(d, chromedp.CSS(`[data-payment-id="`+id+`"] a`))
	d.wantPath("/dashboard/payments/" + id)
	if s := d.field("status"); s != "pending" {
		t.Errorf("status %q before the button", s)
	}
	d.press("complete")
	d.wantPath("/dashboard/payments/" + id)
	if s := d.field("status"); s != "completed" {
		t.Errorf("status %q after complete, want completed", s)
	}
	if d.count(`[data-action="complete"], [data-action="fail"], [data-action="expire"]`) != 0 {
		t.Error("a completed payment still offers outcome buttons")
	}
	got := waitDelivery(t, d.rcv)
	if got.Type != "payment.completed" || got.Payment["id"] != id || got.Payment["status"] != "completed" {
		t.Errorf("the receiver got %s for %v (%v), want payment.completed for %s", got.Type, got.Payment["id"], got.Payment["status"], id)
	}
	d.reloadUntil(`[...document.querySelectorAll('[data-field="delivery-state"]')].some(e => e.textContent.trim() === "delivered")`)
	if main := d.text("main"); !strings.Contains(main, "payment.completed") || !strings.Contains(main, "Attempt 1") || !strings.Contains(main, "HTTP 204") {
		t.Errorf("the timeline does not show the delivery attempt:\n%s", main)
	}
	d.look("payment")

	d.nav("Payments")
	d.wantPath("/dashboard/payments")
	for _, c := range []struct {
		name   string
		status string
		query  string
		want   []string
	}{
		{"completed", "completed", "", []string{id}},
		{"pending", "pending", "", []string{others[2], others[1]}},
		{"failed", "failed", "", []string{others[0]}},
		{"by id", "", id, []string{id}},
		{"by id and another status", "pending", id, nil},
		{"by email, any case", "", "Zoe.Quinn@EXAMPLE.com", []string{id}},
		{"by part of an email", "", "buyer1@", []string{others[1]}},
	} {
		d.fill("Payment id or customer email", c.query)
		d.choose("Status", c.status)
		d.press("filter")
		if got := d.rows(); !slices.Equal(got, c.want) {
			t.Errorf("filter %s: payments %v, want %v", c.name, got, c.want)
		}
	}
	d.nav("Payments")
	d.look("payments")
}

// revealedReceiver is a receiver that verifies with a secret learnt only
// once the dashboard has revealed it: nothing may reach it before. It
// serves on its own URL; the embedded receiver's server, which knows
// testSecret, is left unused.
type revealedReceiver struct {
	*receiver
	URL   string
	mu    sync.Mutex
	known bool
}

func newRevealedReceiver(t *testing.T) *revealedReceiver {
	t.Helper()
	r := &revealedReceiver{receiver: newReceiver(t, nil)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// learn makes the receiver verify every delivery with secret.
func (r *revealedReceiver) learn(secret string) {
	r.t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		r.t.Fatalf("the revealed secret %q is not one the reference library reads: %v", secret, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wh, r.known = wh, true
}

func (r *revealedReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	known := r.known
	r.mu.Unlock()
	if !known {
		r.t.Errorf("a delivery reached %s before its secret was revealed", req.URL)
		http.Error(w, "no secret yet", http.StatusServiceUnavailable)
		return
	}
	r.receiver.serve(w, req)
}

func TestDashboard_WebhookEndpointAddedRevealedTestedAndRedelivered(t *testing.T) {
	d := newDash(t)
	rcv := newRevealedReceiver(t)
	d.signIn(keyA)
	d.nav("Webhooks")
	d.wantPath("/dashboard/webhooks")
	d.fill("Endpoint URL", rcv.URL+"/hooks")
	d.press("add-endpoint")
	if got := d.fields("endpoint-url"); !slices.Equal(got, []string{rcv.URL + "/hooks"}) {
		t.Fatalf("endpoints %v after adding %s/hooks", got, rcv.URL)
	}
	if d.count(`[data-field="secret"]`) != 0 {
		t.Error("the secret shows before it is revealed")
	}
	d.press("reveal-secret")
	secret := d.field("secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("revealed secret %q", secret)
	}
	rcv.learn(secret)

	d.press("send-test")
	got := waitDelivery(t, rcv.receiver)
	if got.Type != "webhook.test" || got.Payment["endpoint_id"] == "" {
		t.Errorf("the receiver got %s with data %v, want a webhook.test naming its endpoint", got.Type, got.Payment)
	}
	if d.count(`[data-field="secret"]`) != 0 {
		t.Error("the secret still shows on the next page")
	}
	d.reloadUntil(`document.querySelectorAll('[data-field="delivery-state"]').length === 1 &&
		document.querySelector('[data-field="delivery-state"]').textContent.trim() === "delivered"`)
	if main := d.text("main"); !strings.Contains(main, "webhook.test") || !strings.Contains(main, "Attempt 1") || !strings.Contains(main, "HTTP 204") {
		t.Errorf("the endpoint's deliveries do not show the attempt:\n%s", main)
	}
	d.press("reveal-secret") // the screenshot shows what a reveal looks like
	d.look("webhooks")

	d.link(rcv.URL + "/hooks") // the endpoint's own page
	here := d.path()
	if !strings.HasPrefix(here, "/dashboard/webhooks/we_") {
		t.Fatalf("the endpoint's link leads to %s", here)
	}
	d.press("redeliver")
	d.wantPath(here)
	again := waitDelivery(t, rcv.receiver)
	if again.EventID != got.EventID || again.Type != "webhook.test" {
		t.Errorf("redelivered %s %s, want the test event %s again", again.Type, again.EventID, got.EventID)
	}
	d.reloadUntil(`[...document.querySelectorAll('[data-field="delivery-state"]')].filter(e => e.textContent.trim() === "delivered").length === 2`)
	if main := d.text("main"); !strings.Contains(main, "round 2") {
		t.Errorf("the endpoint's page does not show the second round:\n%s", main)
	}
	d.look("endpoint")
}

func TestDashboard_APIKeyCreatedUsedAndRevoked(t *testing.T) {
	d := newDash(t)
	id := d.create(keyA, nil)
	d.signIn(keyA)
	d.nav("API keys")
	d.wantPath("/dashboard/api-keys")
	if d.count(`[data-field="new-key"]`) != 0 {
		t.Error("a new key shows before one was created")
	}
	d.press("create-key")
	key := d.field("new-key")
	if !strings.HasPrefix(key, "sk_test_") || len(key) < 20 {
		t.Fatalf("new key %q", key)
	}
	last4 := key[len(key)-4:]
	masked := ""
	for _, m := range d.fields("masked-key") {
		if strings.HasSuffix(m, last4) {
			masked = m
		}
		if strings.Contains(m, key) {
			t.Errorf("the list shows a key in full: %q", m)
		}
	}
	if masked == "" || !strings.Contains(masked, "…") {
		t.Errorf("no masked entry ending in %s among %v", last4, d.fields("masked-key"))
	}
	d.look("api-keys")

	// The new key is the same merchant's: it sees the payment made with keyA.
	st, body, _ := d.do("GET", "/api/v1/payments", key, nil)
	if st != http.StatusOK {
		t.Fatalf("list with the new key: %d %v", st, body)
	}
	var ids []string
	for _, it := range body["items"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	if !slices.Equal(ids, []string{id}) {
		t.Errorf("the new key sees payments %v, want %v", ids, []string{id})
	}
	if p := d.get(key, id); p["id"] != id {
		t.Errorf("retrieve with the new key: %v", p)
	}

	d.nav("API keys")
	if d.count(`[data-field="new-key"]`) != 0 {
		t.Error("the new key shows a second time")
	}
	follow(d, chromedp.JSPath(fmt.Sprintf(
		`[...document.querySelectorAll('[data-field="masked-key"]')].find(e => e.textContent.trim() === %q).closest("tr").querySelector('button[data-action="revoke-key"]')`, masked)))
	d.wantPath("/dashboard/api-keys")
	if st, body, _ := d.do("GET", "/api/v1/payments", key, nil); st != http.StatusUnauthorized {
		t.Errorf("the revoked key answers %d %v, want 401", st, body)
	}
	if slices.Contains(d.fields("masked-key"), masked) {
		t.Errorf("the revoked key %s is still listed", masked)
	}
	if st, _, _ := d.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusOK {
		t.Errorf("keyA answers %d after another key was revoked", st)
	}
}

func TestDashboard_ClockAdvancedUntilAPaymentExpires(t *testing.T) {
	d := newDash(t)
	id := d.create(keyA, func(b map[string]any) { b["expires_in"] = 600 })
	d.signIn(keyA)
	follow(d, chromedp.CSS(`[data-payment-id="`+id+`"] a`))
	d.nav("Clock")
	d.wantPath("/dashboard/clock")
	before := d.field("now")
	if before != "14 Mar 2026, 15:09:26 UTC" || d.field("clock-mode") != "frozen" {
		t.Errorf("clock %q %q, want the frozen test start", before, d.field("clock-mode"))
	}
	d.fill("Advance by", "9m59s")
	d.press("advance-clock")
	if now := d.field("now"); now != "14 Mar 2026, 15:19:25 UTC" {
		t.Errorf("clock %q after 9m59s", now)
	}
	d.nav("Payments")
	if s := d.field("status"); s != "pending" {
		t.Errorf("status %q a second before it expires", s)
	}
	d.nav("Clock")
	d.fill("Advance by", "1")
	d.press("advance-clock")
	if flash := d.field("flash"); !strings.Contains(flash, "1 scheduled action fired") {
		t.Errorf("flash %q", flash)
	}
	d.look("clock")
	d.nav("Payments")
	follow(d, chromedp.CSS(`[data-payment-id="`+id+`"] a`))
	if s := d.field("status"); s != "expired" {
		t.Errorf("status %q after the clock passed its expiry, want expired", s)
	}
	if d.count(`button[data-action="complete"]`) != 0 {
		t.Error("an expired payment offers the complete button")
	}
}

func TestDashboard_RequestsHighlightViolationsAndReportShowsCoverage(t *testing.T) {
	d := newDash(t)
	id := d.create(keyA, nil)
	d.get(keyA, id)
	bad := validCreate()
	bad["currency"] = "JPY"
	if st, _, _ := d.do("POST", "/api/v1/payments", keyA, bad); st != http.StatusBadRequest {
		t.Fatalf("a create in JPY answered %d", st)
	}
	_, report, _ := d.do("GET", "/_sandbox/report", keyA, nil)
	d.signIn(keyA)

	d.nav("Requests")
	d.wantPath("/dashboard/requests")
	// The violating request is the one row set apart: its cells are
	// coloured unlike a clean row's.
	colours, err := chromedp.Run(d.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main tbody tr")].map(tr =>
		(tr.textContent.includes("currency") ? "bad " : "ok ") + getComputedStyle(tr.cells[0]).backgroundColor)`))
	if err != nil {
		t.Fatal(err)
	}
	var badColour, okColour []string
	for _, c := range colours {
		kind, colour, _ := strings.Cut(c, " ")
		if kind == "bad" {
			badColour = append(badColour, colour)
		} else {
			okColour = append(okColour, colour)
		}
	}
	if len(badColour) != 1 || len(okColour) < 2 || slices.Contains(okColour, badColour[0]) || len(slices.Compact(okColour)) != 1 {
		t.Errorf("rows %v: want the one violating row in a colour of its own, the clean ones alike", colours)
	}
	d.look("requests")
	d.run(chromedp.Click(chromedp.Search(`//label[normalize-space()="Only requests with violations"]`)))
	d.press("filter")
	if main := d.text("main"); !strings.Contains(main, "1 with violations") || !strings.Contains(main, "currency") {
		t.Errorf("only violations:\n%s", main)
	}

	d.nav("Report")
	d.wantPath("/dashboard/report")
	cov := report["coverage"].(map[string]any)
	want := map[string]string{
		"calls":           fmt.Sprint(report["calls"]),
		"violating-calls": "1",
		"coverage-operations": fmt.Sprintf("%v of %v (%.0f%%)",
			cov["operations_exercised"], cov["operations_total"], cov["operations"].(float64)*100),
	}
	for f, w := range want {
		if got := d.field(f); got != w {
			t.Errorf("report %s %q, want %q", f, got, w)
		}
	}
	if main := d.text("main"); !strings.Contains(main, "createPayment") || !strings.Contains(main, "currency") {
		t.Errorf("the report does not name the violation:\n%s", main)
	}
	d.look("report")
}

func TestDashboard_SignOutNeedsSigningInAgain(t *testing.T) {
	d := newDash(t)
	d.signIn(keyA)
	d.nav("Clock")
	d.press("sign-out")
	if d.count(`button[data-action="sign-in"]`) != 1 || d.count(`button[data-action="sign-out"]`) != 0 {
		t.Fatalf("after signing out, at %s:\n%s", d.path(), d.text("body"))
	}
	d.open(d.URL+"/dashboard/webhooks", `button[data-action="sign-in"]`)
	if d.count("nav") != 0 || strings.Contains(d.text("main"), "Add an endpoint") {
		t.Errorf("a page shows without signing in:\n%s", d.text("body"))
	}
	d.fill("API key", keyA)
	d.press("sign-in")
	d.wantPath("/dashboard/webhooks") // back where it was asked for
}
