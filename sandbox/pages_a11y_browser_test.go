// The hosted pages looked at as an outsider's browser shows them: every
// page a customer can land on, at phone and desktop widths, with axe-core
// finding nothing at all (not only the serious), no sideways scrolling at
// 320 px, and screenshots in test-output/screenshots/.

package sandbox

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeRunAll runs axe-core on the page and lists every violation whatever
// its impact: the hosted pages are few and small, so none is tolerated.
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
// test-output/screenshots/page-<name>-<size>.png.
func (b *browserEnv) lookAt(name string) {
	b.t.Helper()
	src := axeSource(b.t)
	if src != "" {
		// Runtime.evaluate is not subject to the page's CSP, which allows
		// no script at all.
		ok, err := chromedp.Run(b.tab, chromedp.Evaluate[bool](src+"\n;typeof axe === \"object\""))
		if err != nil || !ok {
			b.t.Fatalf("%s: inject axe-core: %v", name, err)
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
		buf, err := chromedp.Run(b.tab, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, "page-"+name+"-"+v.name+".png"), buf, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// TestBrowserPages_HaveNoAccessibilityViolations opens every page a
// customer can land on and looks at it.
func TestBrowserPages_HaveNoAccessibilityViolations(t *testing.T) {
	b := newBrowserEnv(t)
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
		b.lookAt(tc.name)
	}
	b.advance(keyA, 60)
	b.open(expired, `[data-status="expired"]`)
	b.lookAt("expired")

	// Already paid: the page of a second tab, posted after the first paid.
	b.open(paid, `button[data-action="pay"]`)
	if status, body, _ := b.do("POST", "/_sandbox/payments/"+paidID+"/complete", keyA, nil); status != http.StatusOK {
		t.Fatalf("complete: %d %v", status, body)
	}
	b.click("pay", `[data-testid="refused"]`)
	b.lookAt("already-paid")
}
