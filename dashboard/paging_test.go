// Tests of paging the lists: any page number a person can type, and a
// page past the last one.

package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paymock/paymock/dashboard"
	"golang.org/x/net/html"
)

// pagedHarness is a signed-in browser on a merchant with 28 payments (2
// pages), half of them pending, and 60 requests (2 pages).
func pagedHarness(t *testing.T) (*harness, *browser) {
	t.Helper()
	h := newHarness(t, nil)
	for i := range 28 {
		h.fake.addPayment(t, "acme", fmt.Sprintf("jane%d@example.com", i), 100, i)
	}
	for i := range 60 {
		h.fake.requests["acme"] = append(h.fake.requests["acme"], dashboard.Request{
			ID: fmt.Sprintf("req_%d", i), At: "2026-03-01T12:00:00Z", Method: "GET", Path: "/api/v1/payments", Status: 200,
		})
	}
	b := h.browser()
	b.signIn(acmeKey)
	return h, b
}

// rowsOf is the value of attr of every row that has it, in page order.
func rowsOf(p page, attr string) []string {
	var out []string
	walk(p.doc, func(n *htmlNode) {
		if n.Type == html.ElementNode && hasAttr(n, attr) {
			out = append(out, attrOf(n, attr))
		}
	})
	return out
}

func TestLists_APagePastTheLastIsEmptyAndLeadsBack(t *testing.T) {
	h, b := pagedHarness(t)
	lists := []struct {
		path     string // without the page
		rowAttr  string
		lastPage int
	}{
		{"/dashboard/payments?", "data-payment-id", 2},
		{"/dashboard/payments?status=pending&", "data-payment-id", 2},
		{"/dashboard/payments?q=jane%40example.com&", "data-payment-id", 0}, // matches none
		{"/dashboard/payments?q=%40example.com&", "data-payment-id", 2},
		{"/dashboard/payments?q=jane1&", "data-payment-id", 1},
		{"/dashboard/requests?", "data-request-id", 2},
	}
	pages := []string{
		"999",
		"9223372036854775807", // math.MaxInt64: its offset overflowed
		"922337203685477581",  // its offset overflowed to a small positive number
		"99999999999999999999999",
	}
	for _, list := range lists {
		for _, n := range pages {
			t.Run(list.path+n, func(t *testing.T) {
				p := b.get(list.path + "page=" + url.QueryEscape(n))
				if p.status != http.StatusOK {
					t.Fatalf("status %d, want 200; page says %q", p.status, p.text())
				}
				if rows := rowsOf(p, list.rowAttr); len(rows) != 0 {
					t.Errorf("rows on a page past the last: %q", rows)
				}
				if strings.Contains(p.text(), "Page "+n) || strings.Contains(p.text(), "yet") {
					t.Errorf("the page says %q", p.text())
				}
				past := find(p.doc, "data-field", "past-end")
				if list.lastPage == 0 {
					if past != nil {
						t.Errorf("an empty list says a page is past its end: %q", textOf(past))
					}
					return
				}
				if past == nil {
					t.Fatalf("no word of the page being past the last: %q", p.text())
				}
				var links []string
				walk(past, func(n *htmlNode) {
					if n.Data == "a" {
						links = append(links, attrOf(n, "href"))
					}
				})
				for _, want := range []int{1, list.lastPage} {
					found := false
					for _, l := range links {
						u, err := url.Parse(l)
						found = found || err == nil && u.Query().Get("page") == fmt.Sprint(want) &&
							strings.HasPrefix(list.path, u.Path)
					}
					if !found {
						t.Errorf("no link to page %d among %q", want, links)
					}
				}
			})
		}
	}
	if logs := h.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("the log has errors:\n%s", logs)
	}
}

func TestLists_PageNumbersInRangeShowTheirRows(t *testing.T) {
	_, b := pagedHarness(t)
	tests := []struct {
		path    string
		rowAttr string
		rows    int
		label   string // the pager's; "" for none
	}{
		{"/dashboard/payments?page=2", "data-payment-id", 8, "Page 2 of 2"},
		{"/dashboard/payments?page=0", "data-payment-id", 20, "Page 1 of 2"},
		{"/dashboard/payments?page=-9223372036854775808", "data-payment-id", 20, "Page 1 of 2"},
		{"/dashboard/payments?page=x", "data-payment-id", 20, "Page 1 of 2"},
		{"/dashboard/payments?q=jane1&page=1", "data-payment-id", 11, ""},
		{"/dashboard/requests?page=2", "data-request-id", 10, "Page 2 of 2"},
		{"/dashboard/requests?page=-1", "data-request-id", 50, "Page 1 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := b.get(tt.path)
			rows := len(rowsOf(p, tt.rowAttr))
			if p.status != http.StatusOK || rows != tt.rows {
				t.Errorf("%d with %d rows, want 200 with %d", p.status, rows, tt.rows)
			}
			pager := textOf(find(p.doc, "aria-label", "Pages"))
			if !strings.Contains(pager, tt.label) || tt.label == "" && pager != "" {
				t.Errorf("pager %q, want %q", pager, tt.label)
			}
		})
	}
}
