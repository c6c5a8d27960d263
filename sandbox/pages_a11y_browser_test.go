// The hosted pages looked at as an outsider's browser shows them: every
// page a customer can land on, at phone and desktop widths, with axe-core
// finding nothing at all (not only the serious), no sideways scrolling at
// 320 px, and screenshots in test-output/screenshots/.

package sandbox

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/paymock/paymock"
)

// axeRunAll runs axe-core on the page and lists every violation whatever
// its impact, one line each with where: the hosted pages and the
// dashboard are few and small, so none is tolerated.
const axeRunAll = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
	.map(v => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`

// pageWidths are the widths a hosted page is looked at: the narrowest
// phone a page must fit (320 px, WCAG's reflow width) and a desktop. A
// width between them would add seconds to every page and find nothing
// these two do not.
var pageWidths = []struct {
	name string
	w, h int64
	opts []chromedp.EmulateViewportOption
}{
	{"phone", 320, 640, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch}},
	{"desktop", 1280, 800, nil},
}

// lookAt checks the page in the tab at every pageWidths size: nothing
// wider than the window, no axe-core violation, and a screenshot saved as
// test-output/screenshots/page-<name>-<size>.png. Without desktopShot the
// desktop one is left out, for a page browser_test.go saves at that size
// already: a desktop screenshot is the slowest step here.
func (b *browserEnv) lookAt(name string, desktopShot bool) {
	b.t.Helper()
	src := axeSource(b.t)
	if src != "" {
		ok, err := chromedp.Run(b.tab, chromedp.Evaluate[bool](`typeof axe === "object"`))
		if err != nil || !ok {
			b.t.Fatalf("%s: no axe-core in the page (withAxe installs it): %v", name, err)
		}
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	for _, v := range pageWidths {
		b.run(chromedp.EmulateViewport(v.w, v.h, v.opts...))
		sizes, err := chromedp.Run(b.tab, chromedp.Evaluate[[]int](`[document.scrollingElement.scrollWidth, window.innerWidth]`))
		if err != nil {
			b.t.Fatal(err)
		}
		if sizes[0] > sizes[1] || sizes[1] != int(v.w) {
			b.t.Errorf("%s at %d px scrolls sideways: %d px wide in a %d px window", name, v.w, sizes[0], sizes[1])
		}
		if src != "" {
			found, err := chromedp.Run(b.tab, chromedp.Evaluate[[]string](axeRunAll, chromedp.EvalAwaitPromise))
			if err != nil {
				b.t.Fatalf("%s: run axe-core: %v", name, err)
			}
			for _, f := range found {
				b.t.Errorf("%s at %d px, axe-core: %s", name, v.w, f)
			}
		}
		if v.name == "desktop" && !desktopShot {
			continue
		}
		buf, err := chromedp.Run(b.tab, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, "page-"+name+"-"+v.name+".png"), buf, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// wantFocusRings tabs through the page as a keyboard user does and checks
// that each control reached shows a focus ring, and that Tab reaches every
// button of the page, in order.
func (b *browserEnv) wantFocusRings(name string) {
	b.t.Helper()
	want, err := chromedp.Run(b.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("button")].map(e => e.dataset.action)`))
	if err != nil {
		b.t.Fatal(err)
	}
	var reached []string
	for range len(want) {
		b.run(chromedp.KeyEvent("\t"))
		got, err := chromedp.Run(b.tab, chromedp.Evaluate[[]string](`(() => {
			const e = document.activeElement, s = getComputedStyle(e);
			return [e.dataset.action || e.tagName, s.outlineStyle, s.outlineWidth];
		})()`))
		if err != nil {
			b.t.Fatal(err)
		}
		reached = append(reached, got[0])
		if got[1] == "none" || got[2] == "0px" || got[2] == "1px" {
			b.t.Errorf("%s: %s has focus but no visible ring (outline %s %s)", name, got[0], got[1], got[2])
		}
	}
	if !slices.Equal(reached, want) {
		b.t.Errorf("%s: Tab reaches %v, want the buttons %v in order", name, reached, want)
	}
}

// withAxe has the tab load axe-core into every page it opens, before the
// page's own content: once for the tab, rather than sending the half
// megabyte of it again for every page looked at. Like Runtime.evaluate,
// it is not subject to the pages' CSP, which allows no script at all.
func (b *browserEnv) withAxe() {
	b.t.Helper()
	src := axeSource(b.t)
	if src == "" {
		return
	}
	if _, err := chromedp.Call(b.tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		b.t.Fatalf("install axe-core in the tab: %v", err)
	}
}

// TestBrowserPages_HaveNoAccessibilityViolations opens every page a
// customer can land on and looks at it.
func TestBrowserPages_HaveNoAccessibilityViolations(t *testing.T) {
	b := newBrowserEnv(t)
	b.withAxe()
	_, checkout := b.createPayment(nil)
	_, threeDS := b.createPayment(func(body map[string]any) { withCard(body) })
	_, declines := b.createPayment(func(body map[string]any) {
		card(withCard(body))["number"] = "4000008400001629"
	})
	completed, completedURL := b.createPayment(nil)
	failed, failedURL := b.createPayment(nil)
	_, expired := b.createPayment(func(body map[string]any) { body["expires_in"] = 60 })
	for id, to := range map[string]string{completed: "complete", failed: "fail"} {
		if status, body, _ := b.do("POST", "/_sandbox/payments/"+id+"/"+to, keyA, nil); status != http.StatusOK {
			t.Fatalf("%s: %d %v", to, status, body)
		}
	}
	paidID, paid := b.createPayment(nil)

	for _, tc := range []struct {
		name, url, sel string
	}{
		{"checkout", checkout, `button[data-action="pay"]`},
		{"3ds", threeDS, `button[data-action="approve"]`},
		{"3ds-declined-card", declines, `button[data-action="approve"]`},
		{"completed", completedURL, `[data-status="completed"]`},
		{"failed", failedURL, `[data-status="failed"]`},
		{"not-found", b.URL + "/checkout/pay_doesnotexist0000000000000", `[data-status="error"]`},
	} {
		b.open(tc.url, tc.sel)
		b.lookAt(tc.name, false)
		b.wantFocusRings(tc.name)
	}
	b.advance(keyA, 60)
	b.open(expired, `[data-status="expired"]`)
	b.lookAt("expired", false)

	// Already paid: the page of a second tab, posted after the first paid.
	b.open(paid, `button[data-action="pay"]`)
	if status, body, _ := b.do("POST", "/_sandbox/payments/"+paidID+"/complete", keyA, nil); status != http.StatusOK {
		t.Fatalf("complete: %d %v", status, body)
	}
	b.click("pay", `[data-testid="refused"]`)
	b.lookAt("already-paid", true)
}

// TestBrowserPages_OddTextKeepsTheLayout shows a payment whose every text
// is as long as the contract allows, unbroken, right-to-left, emoji and
// markup, for the largest amount: the text comes out as given (escaped,
// never markup), right-to-left text runs right to left without turning
// the page around, and the pages still look right and fit at 320 px.
func TestBrowserPages_OddTextKeepsTheLayout(t *testing.T) {
	// 100 bytes, the longest name a merchant may have: Arabic, then one
	// word of Latin letters with no place to break.
	merchant := "متجر الأمل 🛒 " + strings.Repeat("x", 100-len("متجر الأمل 🛒 "))
	description := `<script>alert(1)</script><b>bold</b> & "quoted" `
	description = "עברית 👩‍👩‍👧‍👦🇺🇦 " + description + strings.Repeat("y", 1000-utf8.RuneCountInString("עברית 👩‍👩‍👧‍👦🇺🇦 "+description))
	name := "محمد " + strings.Repeat("n", 255-utf8.RuneCountInString("محمد "))
	email := strings.Repeat("e", 64) + "@" + strings.Repeat("d", 63) + "." + strings.Repeat("d", 63) + "." + strings.Repeat("d", 53) + ".com" // 254, labels of 63 at most
	b := &browserEnv{testEnv: newEnv(t, withMerchants(paymock.Merchant{Name: merchant, APIKeys: []string{keyA}, PCIApproved: true})),
		shop: newShop(t), tab: newTab(t)}
	b.withAxe()
	odd := func(body map[string]any) {
		body["amount"], body["description"] = 999999999.99, description
		body["customer"] = map[string]any{"name": name, "email": email}
	}
	_, checkout := b.createPayment(odd)
	_, threeDS := b.createPayment(func(body map[string]any) { odd(body); withCard(body) })
	for _, tc := range []struct{ name, url, sel, text string }{
		{"odd-checkout", checkout, "h1", description},
		{"odd-3ds", threeDS, `[data-testid="description"]`, description},
	} {
		b.open(tc.url, "main")
		got, err := chromedp.Run(b.tab, chromedp.Evaluate[[]string](fmt.Sprintf(`(() => {
			const e = document.querySelector(%q);
			return [e.textContent, String(e.children.length), String(e.matches(":dir(rtl)")),
				String(document.documentElement.matches(":dir(ltr)")),
				document.querySelector('[data-testid="merchant"]').textContent];
		})()`, tc.sel)))
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != tc.text || got[1] != "0" {
			t.Errorf("%s: description shown as %q with %s elements, want the text as given", tc.name, got[0], got[1])
		}
		if got[2] != "true" || got[3] != "true" {
			t.Errorf("%s: right-to-left description runs right to left: %s; the page stays left to right: %s", tc.name, got[2], got[3])
		}
		if got[4] != merchant {
			t.Errorf("%s: merchant shown as %q", tc.name, got[4])
		}
		b.lookAt(tc.name, true)
	}
}
