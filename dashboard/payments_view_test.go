// Tests of the payments pages: list, paging, filter, search, outcome buttons and timeline.

package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

func TestPayments_ListNewestFirstPagedFilteredAndSearched(t *testing.T) {
	h := newHarness(t, nil)
	var ids []string
	for i := range 25 {
		email := "buyer" + strconv.Itoa(i) + "@example.com"
		if i == 7 {
			email = "Grace.Hopper@Example.com"
		}
		ids = append(ids, h.fake.addPayment(t, "acme", email, paymock.Amount(100+i), i).ID)
	}
	h.fake.addPayment(t, "globex", "grace.hopper@example.com", 999, 0)
	m := &paymock.Merchant{ID: "acme"}
	if _, err := h.fake.Act(context.Background(), m, ids[3], paymock.StatusFailed); err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	b.signIn(acmeKey)
	rows := func(p page) []string {
		var out []string
		walk(p.doc, func(n *htmlNode) {
			if n.Data == "tr" && hasAttr(n, "data-payment-id") {
				out = append(out, attrOf(n, "data-payment-id"))
			}
		})
		return out
	}
	first := b.get("/dashboard/payments")
	got := rows(first)
	if len(got) != 20 || got[0] != ids[24] || got[19] != ids[5] {
		t.Fatalf("page 1: %d rows from %v, want 20 newest first", len(got), got)
	}
	older := find(first.doc, "rel", "next")
	if older == nil {
		t.Fatal("page 1 has no link to older payments")
	}
	second := b.get(attrOf(older, "href"))
	if got := rows(second); len(got) != 5 || got[4] != ids[0] {
		t.Errorf("page 2: %v, want the 5 oldest", got)
	}
	filtered := b.click(first, "role", "search", "filter", url.Values{"status": {"failed"}})
	if got := rows(filtered); len(got) != 1 || got[0] != ids[3] {
		t.Errorf("status failed: %v, want [%s]", got, ids[3])
	}
	tests := []struct {
		query, status string
		want          []string
	}{
		{ids[12], "", []string{ids[12]}},
		{ids[12], "failed", nil},
		{"grace.hopper@example", "", []string{ids[7]}},
		{"GRACE", "pending", []string{ids[7]}},
		{"nobody@example.com", "", nil},
	}
	for _, tt := range tests {
		p := b.click(first, "role", "search", "filter", url.Values{"q": {tt.query}, "status": {tt.status}})
		if got := rows(p); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("search %q status %q: %v, want %v", tt.query, tt.status, got, tt.want)
		}
	}
	bad := b.get("/dashboard/payments?status=paid")
	if bad.status != http.StatusBadRequest || !strings.Contains(bad.field("error"), "no status") {
		t.Errorf("unknown status: %d %q, want 400 with a message", bad.status, bad.field("error"))
	}
}

func TestPayment_OutcomeButtonsMoveItAndTheTimelineShowsTheDelivery(t *testing.T) {
	for _, action := range []string{"complete", "fail", "expire"} {
		t.Run(action, func(t *testing.T) {
			h := newHarness(t, nil)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			b := h.browser()
			b.signIn(acmeKey)
			b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
			p := b.get("/dashboard/payments/" + pay.ID)
			if p.field("status") != "pending" || p.field("checkout-url") == "" {
				t.Fatalf("pending payment page: status %q, checkout link %q", p.field("status"), p.field("checkout-url"))
			}
			if link := find(p.doc, "data-field", "checkout-url"); attrOf(link, "href") != pay.CheckoutURL {
				t.Errorf("checkout link %q, want %q", attrOf(link, "href"), pay.CheckoutURL)
			}
			for _, a := range []string{"complete", "fail", "expire"} {
				if find(p.doc, "data-action", a) == nil {
					t.Errorf("pending payment has no %s button", a)
				}
			}
			done := b.follow(b.click(p, "", "", action, nil))
			want := map[string]string{"complete": "completed", "fail": "failed", "expire": "expired"}[action]
			if got := done.field("status"); got != want {
				t.Errorf("after %s: status %q, want %q", action, got, want)
			}
			if got, _ := h.fake.store.Get(context.Background(), "acme", pay.ID); string(got.Status) != want {
				t.Errorf("store has %s, want %s", got.Status, want)
			}
			ev := find(done.doc, "class", "tl-item tl-event")
			if ev == nil || !strings.Contains(textOf(ev), "payment."+want) || find(ev, "data-attempt", "1") == nil ||
				!strings.Contains(textOf(ev), "HTTP 204") {
				t.Errorf("timeline has no payment.%s event with its attempt: %q", want, textOf(ev))
			}
			for _, a := range []string{"complete", "fail", "expire"} {
				if find(done.doc, "data-action", a) != nil {
					t.Errorf("final payment still offers %s", a)
				}
			}
			// The same form again: the payment is final, nothing changes,
			// and the payment's page says so.
			again := b.refused(b.click(p, "", "", "complete", nil))
			if !strings.Contains(again.field("error"), "Nothing was changed") || again.field("status") != want {
				t.Errorf("second outcome: %s %q, want %s saying nothing changed", again.field("status"), again.field("error"), want)
			}
			// Redeliver from the timeline adds a round.
			re := b.follow(b.click(done, "", "", "redeliver", nil))
			if !strings.Contains(textOf(find(re.doc, "class", "tl-item tl-event")), "round 2") {
				t.Errorf("after redeliver the timeline shows no round 2: %q", re.text())
			}
		})
	}
}

func TestPayment_TimelineSaysWhichFaultShapedAnAttempt(t *testing.T) {
	h := newHarness(t, nil)
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	b := h.browser()
	b.signIn(acmeKey)
	b.follow(b.click(b.get("/dashboard/webhooks"), "", "", "add-endpoint", url.Values{"url": {"https://hooks.example/in"}}))
	done := b.follow(b.click(b.get("/dashboard/payments/"+pay.ID), "", "", "complete", nil))
	if find(done.doc, "data-field", "attempt-fault") != nil {
		t.Errorf("a plain attempt shows a fault: %q", done.text())
	}
	const effect = "injected by fault rule flt_1: a message of type payment.paymock_unknown went out before the event"
	h.fake.mu.Lock()
	ev := h.fake.events[len(h.fake.events)-1]
	ev.Deliveries[0].Attempts[0].Fault = effect
	h.fake.mu.Unlock()
	again := b.get("/dashboard/payments/" + pay.ID)
	att := find(find(again.doc, "class", "tl-item tl-event"), "data-attempt", "1")
	if got := textOf(find(att, "data-field", "attempt-fault")); got != effect {
		t.Errorf("attempt shows fault %q, want %q (attempt: %q)", got, effect, textOf(att))
	}
}
