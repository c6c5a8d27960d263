// The dashboard's tables in a real browser: injected answers marked as
// such, and at desktop size amounts and route segments never split.

package sandbox

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestDashboard_RequestsMarkInjectedAnswersAndHowTheyWereAsked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(file, []byte("- operation: retrievePayment\n  status: 502\n  times: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDash(t, withFaultsFile(file))
	id := d.create(keyA, nil)
	req := d.request("GET", "/api/v1/payments", keyA, nil)
	req.Header.Set("Paymock-Fault", "status=503")
	if st, _, _ := d.send(req); st != http.StatusServiceUnavailable {
		t.Fatalf("the header's fault answered %d", st)
	}
	st, rule, _ := d.do("POST", "/_sandbox/faults", keyA, map[string]any{"operation": "listPayments", "status": 429, "retry_after": 3, "times": 1})
	if st != http.StatusCreated {
		t.Fatalf("add a rule: %d %v", st, rule)
	}
	if st, _, _ := d.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusTooManyRequests {
		t.Fatalf("the control API's rule answered %d", st)
	}
	if st, _, _ := d.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusBadGateway {
		t.Fatalf("the file's rule answered %d", st)
	}
	if st, _, _ := d.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusOK {
		t.Fatalf("after the file's one fault: %d", st)
	}

	d.signIn(keyA)
	d.nav("Requests")
	want := []string{ // newest first
		"Injected on purpose by the faults file " + file + ":1: status=502",
		fmt.Sprintf("Injected on purpose by the control API rule %s: status=429; retry_after=3", rule["id"]),
		"Injected on purpose by the Paymock-Fault header: status=503",
	}
	if got := d.fields("injected-by"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the injected answers say\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An injected row is set apart from a clean one at a glance, and its
	// status says "injected" beside the code.
	marks, err := chromedp.Run(d.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main tbody tr")].map(tr =>
		(tr.classList.contains("injected") ? "injected " : "clean ") + getComputedStyle(tr.cells[0]).boxShadow + "|" + tr.cells[2].textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	var injected, clean []string
	for _, m := range marks {
		kind, rest, _ := strings.Cut(m, " ")
		shadow, status, _ := strings.Cut(rest, "|")
		if kind == "injected" {
			injected = append(injected, shadow)
			if !strings.HasSuffix(status, "injected") {
				t.Errorf("an injected row's status reads %q", status)
			}
		} else {
			clean = append(clean, shadow)
		}
	}
	if len(injected) != 3 || len(clean) < 2 || injected[0] == clean[0] {
		t.Errorf("rows %q: want three injected rows marked unlike the clean ones", marks)
	}
	d.look("requests-injected")
}

func TestDashboard_TablesKeepAmountsAndRouteSegmentsWhole(t *testing.T) {
	d := newDash(t)
	// Long neighbours squeeze the amount and route columns as real data
	// does.
	long := strings.Repeat("A description long enough to take the width of the table ", 6)
	for _, amount := range []float64{1234.5, 999999999.99, 7} {
		d.create(keyA, func(b map[string]any) {
			b["amount"] = amount
			b["description"] = long
			b["customer"] = map[string]any{"email": "a.very.long.customer.address.for.squeezing@example-shop.example.com", "name": "Jane"}
		})
	}
	id := d.create(keyA, nil)
	d.get(keyA, id)
	bad := validCreate()
	bad["description_with_a_long_unknown_field_name_that_fills_the_violation_column"] = long
	d.do("POST", "/api/v1/payments", keyA, bad)
	d.signIn(keyA)

	// lines counts the lines each element's text takes: its boxes at
	// distinct heights.
	lines := func(sel string) []int {
		t.Helper()
		got, err := chromedp.Run(d.tab, chromedp.Evaluate[[]int](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => {
			const r = document.createRange(); r.selectNodeContents(e);
			return new Set([...r.getClientRects()].filter(b => b.width > 0).map(b => Math.round(b.top))).size })`, sel)))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(page, sel string, min int) {
		t.Helper()
		got := lines(sel)
		if len(got) < min {
			t.Fatalf("%s: %d elements %s, want %d at least", page, len(got), sel, min)
		}
		for i, n := range got {
			if n != 1 {
				t.Errorf("%s: element %d of %s takes %d lines at 1280x800, want one", page, i+1, sel, n)
			}
		}
	}
	d.run(chromedp.EmulateViewport(1280, 800))
	check("payments", `[data-field="amount"]`, 4)
	d.screenshot("dashboard-tables-payments")

	d.nav("Requests")
	d.run(chromedp.EmulateViewport(1280, 800))
	check("requests", `code.route > span`, 10)
	d.screenshot("dashboard-tables-requests")

	d.nav("Report")
	d.run(chromedp.EmulateViewport(1280, 800))
	check("report", `code.route > span`, 10)
	d.screenshot("dashboard-tables-report")
}

func TestDashboard_RequestsWithLongPiecesNeverScrollSideways(t *testing.T) {
	d := newDash(t)
	// What the audit found widening the page: a 60-character cursor, an
	// id of 1,800 characters, a query of accents.
	d.do("GET", "/api/v1/payments?limit=10&cursor="+strings.Repeat("c", 60), keyA, nil)
	d.do("GET", "/api/v1/payments/pay_"+strings.Repeat("x", 1800), keyA, nil)
	d.do("GET", "/api/v1/payments?q="+strings.Repeat("%C3%A9", 40), keyA, nil)
	id := d.create(keyA, nil)
	d.get(keyA, id)
	d.signIn(keyA)
	d.nav("Requests")
	sizes := []struct {
		w, h int64
		opts []chromedp.EmulateViewportOption
	}{
		{375, 812, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch}},
		{1280, 800, nil},
	}
	for _, s := range sizes {
		d.run(chromedp.EmulateViewport(s.w, s.h, s.opts...))
		got, err := chromedp.Run(d.tab, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth,
			document.querySelectorAll("code.route .long").length]`))
		if err != nil {
			t.Fatal(err)
		}
		if got[0] > got[1] || got[1] != int(s.w) {
			t.Errorf("at %d px the requests page is %d px wide in a %d px window", s.w, got[0], got[1])
		}
		if got[2] < 3 {
			t.Errorf("at %d px %d long pieces of routes, want the 3 asked for", s.w, got[2])
		}
	}
	d.screenshot("dashboard-requests-long-routes")
}
