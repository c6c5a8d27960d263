// Back after the dashboard's actions, in a real Chromium: the pages load again, no new key or secret shows twice.

package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// historyBack goes to the history entry before, as Back does and as
// chromedp.NavigateBack goes, but without its wait for a load event,
// which a page restored from the back/forward cache never fires; and not
// by evaluating history.back(), whose evaluation can fail ("Inspected
// target navigated or closed") for the navigation it starts.
func historyBack() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		h, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return err
		}
		if h.CurrentIndex < 1 || h.CurrentIndex >= int64(len(h.Entries)) {
			return fmt.Errorf("no page to go back to: entry %d of %d", h.CurrentIndex, len(h.Entries))
		}
		_, err = cdp.Call(ctx, t, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID})
		return err
	})
}

// back presses Back, as a person does, and waits for the page it shows.
// restored says the page came out of the back/forward cache as it was
// left, rather than being loaded again.
func (d *dash) back() (restored bool) {
	d.t.Helper()
	ev, err := chromedp.Run(d.tab, chromedp.WaitEvent(page.FrameNavigated,
		func(e page.EventFrameNavigated) bool { return e.Frame.ParentID == "" }, historyBack()))
	if err != nil {
		d.t.Fatalf("Back: %v", err)
	}
	if ev.Type == page.NavigationTypeBackForwardCacheRestore {
		return true
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Evaluate, as chromedp's waits for a load can miss one that
		// finished before they began; an error is a document not yet
		// ready to be asked.
		done, err := chromedp.Run(d.tab, chromedp.Evaluate[bool](`document.readyState === "complete"`))
		if err == nil && done {
			return false
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the page Back loaded did not finish loading (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shown is the address and text of the page in the tab, asked with
// Evaluate as a restored page never fires the load chromedp's Location and
// Text wait for.
func (d *dash) shown() string {
	d.t.Helper()
	var s string
	var err error
	// A page just restored may not take questions at once.
	for range 50 {
		if s, err = chromedp.Run(d.tab, chromedp.Evaluate[string](`location.pathname + "\n" + document.body.innerText`)); err == nil {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "(the page could not be read: " + err.Error() + ")"
}

// TestDashboard_BackAfterAnActionLoadsThePagesAgain presses Back after each
// kind of post, as a person does: the page the post led to (with its new
// key, secret or note) is loaded again when Back returns to it from
// another page, and shows none of what it showed once; the page the
// button was on is loaded again and shows what the action changed.
func TestDashboard_BackAfterAnActionLoadsThePagesAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		// open goes to the page with the action's button and returns a
		// check of that page once the action is done: "" when it shows
		// the change, else what is wrong.
		open   func(d *dash) (changed func(d *dash) string)
		action string
		// once is what the page the post leads to shows that time only.
		once string
		// atOnce presses Back on the page the post led to, as after
		// Complete, rather than after going on to another page first.
		atOnce bool
		// listed is the payment's status the payments list shows after
		// the action; "" leaves the list unchecked.
		listed string
	}{
		{name: "create an API key", action: "create-key", once: `[data-field="new-key"]`,
			open: func(d *dash) func(*dash) string {
				d.nav("API keys")
				n := len(d.fields("masked-key"))
				return func(d *dash) string {
					if got := len(d.fields("masked-key")); got != n+1 {
						return "lists " + strconv.Itoa(got) + " keys, want " + strconv.Itoa(n+1)
					}
					return ""
				}
			}},
		{name: "reveal a webhook secret", action: "reveal-secret", once: `[data-field="secret"]`,
			open: func(d *dash) func(*dash) string {
				d.nav("Webhooks")
				d.fill("Endpoint URL", "http://127.0.0.1:9/hooks")
				d.press("add-endpoint")
				return func(d *dash) string {
					if got := d.fields("endpoint-url"); len(got) != 1 {
						return "lists endpoints " + strings.Join(got, ", ") + ", want the one added"
					}
					return ""
				}
			}},
		{name: "advance the clock", action: "advance-clock", once: `[data-field="flash"]`,
			open: func(d *dash) func(*dash) string {
				d.nav("Clock")
				before := d.field("now")
				d.fill("Advance by", "1h")
				return func(d *dash) string {
					if now := d.field("now"); now == before {
						return "shows the time before the clock was advanced, " + now
					}
					return ""
				}
			}},
		{name: "complete a payment, then another page", action: "complete", once: `[data-field="flash"]`,
			open: openPayment("completed"), listed: "completed"},
		{name: "complete a payment, Back at once", action: "complete", atOnce: true,
			open: openPayment("completed"), listed: "completed"},
		{name: "expire a payment, Back at once", action: "expire", atOnce: true,
			open: openPayment("expired"), listed: "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDash(t)
			d.create(keyA, nil)
			d.signIn(keyA)
			changed := tc.open(d)
			d.press(tc.action)
			if tc.once != "" && d.count(tc.once) == 0 {
				t.Fatalf("the page after %s does not show %s:\n%s", tc.action, tc.once, d.shown())
			}
			if !tc.atOnce {
				d.nav("Requests")
				if d.back() {
					t.Errorf("Back to the page after %s showed it from the back/forward cache:\n%s", tc.action, d.shown())
				}
				if n := d.count(tc.once); n != 0 {
					t.Errorf("Back to the page after %s shows %s again", tc.action, tc.once)
				}
			}
			if d.back() {
				t.Fatalf("Back to the page of the %s button showed it from the back/forward cache:\n%s", tc.action, d.shown())
			}
			if why := changed(d); why != "" {
				t.Errorf("Back to the page of the %s button: it %s", tc.action, why)
			}
			// Every page before, back to the payments that signing in
			// showed, is loaded again too: any may show what changed.
			for d.path() != "/dashboard/payments" {
				if d.back() {
					t.Fatalf("Back to a page before the %s button showed it from the back/forward cache:\n%s", tc.action, d.shown())
				}
			}
			if tc.listed != "" {
				if got := d.field("status"); got != tc.listed {
					t.Errorf("Back to the payments after %s: the payment is listed %s, want %s", tc.action, got, tc.listed)
				}
			}
		})
	}
}

// openPayment opens a payment's page from the list; its check wants the
// status and no outcome button left.
func openPayment(status string) func(d *dash) func(*dash) string {
	return func(d *dash) func(*dash) string {
		id := d.rows()[0]
		follow(d, chromedp.CSS(`[data-payment-id="`+id+`"] a`))
		return func(d *dash) string {
			if got := d.field("status"); got != status {
				return "shows status " + got + ", want " + status
			}
			if n := d.count(`[data-action="complete"], [data-action="fail"], [data-action="expire"]`); n != 0 {
				return "still offers " + strconv.Itoa(n) + " outcome buttons"
			}
			return ""
		}
	}
}
