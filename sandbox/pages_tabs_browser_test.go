// A payment's page acted on after something else decided the payment, in a
// real Chromium: a second tab, the control API, the merchant's clock. The
// late action gets a page saying what already happened, and reloading
// where any form led (the shop, that page) sends no form again.

package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// navigations records the documents a tab asks for, as "METHOD path?query".
type navigations struct {
	mu   sync.Mutex
	got  []string
	stop func()
}

// watchNavigations starts recording a tab's document requests: what it
// posts is what the server acts on, so a reload that posts again shows.
func watchNavigations(t *testing.T, tab context.Context) *navigations {
	t.Helper()
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enable the network domain: %v", err)
	}
	ctx, cancel := context.WithCancel(tab)
	n := &navigations{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range chromedp.Events(ctx, network.RequestWillBeSent) {
			if err != nil {
				return
			}
			if ev.Type != network.ResourceTypeDocument {
				continue
			}
			u, perr := url.Parse(ev.Request.URL)
			if perr != nil {
				continue
			}
			n.mu.Lock()
			n.got = append(n.got, ev.Request.Method+" "+u.RequestURI())
			n.mu.Unlock()
		}
	}()
	n.stop = func() { cancel(); <-done }
	t.Cleanup(n.stop)
	return n
}

// since is what was recorded after the first from entries.
func (n *navigations) since(from int) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.got[from:])
}

func (n *navigations) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.got)
}

// reload reloads the tab's page, as a person pressing F5 does, and waits
// until sel shows.
func (b *browserEnv) reload(sel string) {
	b.t.Helper()
	b.run(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// TestBrowserPages_LateActionSaysWhatAlreadyHappened opens a payment's
// page, lets something else decide the payment (another tab, whose
// customer then reloads the shop's page), then presses a button on the
// page: the customer lands on a page saying what happened and that
// nothing was changed, the payment and its one webhook stay as they were,
// the shop hears nothing more, and reloading that page posts nothing.
// The cases share one sandbox and two tabs, each with a merchant (an
// open-mode key) of its own, so that one's clock moves no other's.
func TestBrowserPages_LateActionSaysWhatAlreadyHappened(t *testing.T) {
	b := newBrowserEnv(t)
	other := &browserEnv{testEnv: b.testEnv, rcv: b.rcv, shop: b.shop, tab: newTab(t)}
	nav, otherNav := watchNavigations(t, b.tab), watchNavigations(t, other.tab)
	for i, tc := range []struct {
		name   string
		card   bool
		first  string // a button of the other tab, "api:<call>", or "clock"
		second string // the late button
		status string // what the payment is after first
	}{
		{"paid in another tab, pay", false, "pay", "pay", "completed"},
		{"failed in another tab, pay", false, "fail", "pay", "failed"},
		{"3DS declined in another tab, approve", true, "decline", "approve", "failed"},
		{"3DS approved in another tab, decline", true, "approve", "decline", "completed"},
		{"completed by the control API, pay", false, "api:complete", "pay", "completed"},
		// The checkout page's expiry is TestBrowser_ExpiredWhileThePageWasOpen.
		{"expired on the merchant's clock, 3DS approve", true, "clock", "approve", "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "sk_test_late_action_" + strconv.Itoa(i)
			id := b.create(key, func(body map[string]any) {
				body["success_url"], body["cancel_url"] = b.shop.successURL(), b.shop.cancelURL()
				body["expires_in"] = 600
				if tc.card {
					withCard(body)
				}
			})
			u := b.pageURLOf(key, id)
			b.open(u, `button[data-action="`+tc.second+`"]`)
			switch {
			case tc.first == "clock":
				b.advance(key, 600)
			case strings.HasPrefix(tc.first, "api:"):
				call := strings.TrimPrefix(tc.first, "api:")
				if status, body, _ := b.do("POST", "/_sandbox/payments/"+id+"/"+call, key, nil); status != http.StatusOK {
					t.Fatalf("%s: %d %v", call, status, body)
				}
			default:
				other.open(u, `button[data-action="`+tc.first+`"]`)
				other.click(tc.first, "#landed")
				// F5 on the shop, where the action led: the browser asks
				// the shop again and posts nothing.
				from := otherNav.len()
				other.reload("#landed")
				if got := otherNav.since(from); len(got) != 1 || !strings.HasPrefix(got[0], "GET ") {
					t.Errorf("reload on the shop after %s asked for %v, want one GET of the shop", tc.first, got)
				}
			}
			shopBefore := len(b.shop.requests())

			b.click(tc.second, `[data-testid="refused"]`)
			if got := b.text(`[data-status]`); got != "Payment "+tc.status {
				t.Errorf("late %s shows status %q, want Payment %s", tc.second, got, tc.status)
			}
			if got := b.text(`[data-testid="refused"]`); !strings.Contains(got, "already "+tc.status) || !strings.Contains(got, "nothing was changed") {
				t.Errorf("late %s says %q", tc.second, got)
			}
			if n := b.count("form, button, [data-action]"); n != 0 {
				t.Errorf("%d actions on the page of a late %s", n, tc.second)
			}
			if loc := b.location(); !strings.HasPrefix(loc, u) {
				t.Errorf("late %s left the browser at %s, want the payment's page %s", tc.second, loc, u)
			}

			// F5 on the answer: the browser must not post the form again.
			from := nav.len()
			b.reload(`[data-testid="refused"]`)
			for _, r := range nav.since(from) {
				if strings.HasPrefix(r, "POST ") {
					t.Errorf("reloading the answer to a late %s posted again: %v", tc.second, nav.since(from))
				}
			}

			if s := b.get(key, id)["status"]; s != tc.status {
				t.Errorf("status %v after a late %s, want %s", s, tc.second, tc.status)
			}
			b.advance(key, 0) // every delivery due is attempted
			var hooks []string
			for _, d := range b.rcv.deliveries() {
				if d.Payment["id"] == id {
					hooks = append(hooks, d.Type+" "+fmt.Sprint(d.Payment["status"]))
				}
			}
			if want := "payment." + tc.status + " " + tc.status; len(hooks) != 1 || hooks[0] != want {
				t.Errorf("webhooks for the payment %v, want one %s", hooks, want)
			}
			if got := b.shop.requests(); len(got) != shopBefore {
				t.Errorf("a late %s sent the customer to the shop: %v", tc.second, got[shopBefore:])
			}
		})
	}
}
