// Every page a person opens, in a real headless Chromium, with the
// browser's console watched: an error or warning there (a resource that
// failed to load, a Content-Security-Policy refusal) is what a merchant's
// end-to-end suite, which often fails on console errors, would trip over.

package sandbox

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
)

// console collects what a tab writes to its console until stop.
type console struct {
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
	stop func() []chromedp.ConsoleMessage
}

// watchConsole starts collecting the tab's console messages, the browser
// log (network and security) included.
func watchConsole(t *testing.T, tab context.Context) *console {
	t.Helper()
	// The browser log, where failed loads and CSP refusals go, is only
	// reported once its domain is on.
	if _, err := chromedp.Call(tab, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the browser log: %v", err)
	}
	ctx, cancel := context.WithCancel(tab)
	msgs := chromedp.Console(ctx)
	c := &console{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
	}()
	c.stop = func() []chromedp.ConsoleMessage {
		cancel()
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.Clone(c.msgs)
	}
	return c
}

func TestBrowserConsole_PagesLogNoErrorOrWarning(t *testing.T) {
	d := newDash(t)
	watched := watchConsole(t, d.tab)
	checkout := d.create(keyA, nil)
	card := d.create(keyA, func(b map[string]any) {
		withCard(b)
		delete(b, "mcc")
		b["account_id"] = "acct_sandbox_active"
	})
	done := d.create(keyA, nil)
	if status, body, _ := d.do("POST", "/_sandbox/payments/"+done+"/complete", keyA, nil); status != 200 {
		t.Fatalf("complete: %d %v", status, body)
	}
	d.open(d.URL+"/dashboard/sign-in", `button[data-action="sign-in"]`)
	d.signIn(keyA)
	for _, page := range []struct{ name, url string }{
		{"dashboard payments", d.URL + "/dashboard/payments"},
		{"dashboard payment", d.URL + "/dashboard/payments/" + done},
		{"dashboard api keys", d.URL + "/dashboard/api-keys"},
		{"dashboard webhooks", d.URL + "/dashboard/webhooks"},
		{"dashboard clock", d.URL + "/dashboard/clock"},
		{"dashboard requests", d.URL + "/dashboard/requests"},
		{"dashboard report", d.URL + "/dashboard/report"},
		{"checkout page", d.pageURLOf(keyA, checkout)},
		{"3DS page", d.pageURLOf(keyA, card)},
		{"completed payment's page", d.URL + "/checkout/" + done},
	} {
		d.open(page.url, "main")
	}
	// A failed load is logged once the browser has given up on it; the
	// icon is fetched after the page has loaded.
	time.Sleep(500 * time.Millisecond)
	for _, m := range watched.stop() {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
			t.Errorf("console %s (%s) at %s: %s", m.Type, m.Source, m.URL, strings.TrimSpace(m.Text))
		}
	}
}
