// A dashboard request holds its merchant, as an API request does, from
// authentication until its handler returns.

package dashboard_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
)

// holdingPayments and holdingLifecycle note how many visits of the
// merchant were under way at each call that acts for it.
type holdingPayments struct {
	dashboard.Payments
	note func(merchantID string)
}

func (p holdingPayments) List(ctx context.Context, merchantID string, offset, limit int) ([]paymock.Payment, int, error) {
	p.note(merchantID)
	return p.Payments.List(ctx, merchantID, offset, limit)
}

type holdingLifecycle struct {
	dashboard.Lifecycle
	note func(merchantID string)
}

func (l holdingLifecycle) Act(ctx context.Context, m *paymock.Merchant, paymentID string, to paymock.Status) (paymock.Payment, error) {
	l.note(m.ID)
	return l.Lifecycle.Act(ctx, m, paymentID, to)
}

func TestVisits_APageAndAFormHoldTheirMerchantWhileTheyActForIt(t *testing.T) {
	var h *harness
	var mu sync.Mutex
	var heldAt []int // the merchant's visits under way, at each call
	note := func(merchantID string) {
		mu.Lock()
		defer mu.Unlock()
		heldAt = append(heldAt, h.fake.holding(merchantID))
	}
	h = newHarness(t, func(c *dashboard.Config) {
		c.Payments = holdingPayments{Payments: c.Payments, note: note}
		c.Lifecycle = holdingLifecycle{Lifecycle: c.Lifecycle, note: note}
	})
	pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
	b := h.browser()
	b.signIn(acmeKey) // lands on the payments page: a List
	done := b.click(b.get("/dashboard/payments/"+pay.ID), "", "", "complete", nil)
	if done.status != http.StatusSeeOther {
		t.Fatalf("complete: %d, want 303; page says %q", done.status, done.text())
	}

	mu.Lock()
	defer mu.Unlock()
	if len(heldAt) < 2 {
		t.Fatalf("%d calls noted, want the payments list and the completion", len(heldAt))
	}
	for i, n := range heldAt {
		if n != 1 {
			t.Errorf("call %d acted for acme with %d visits of it under way, want its request's 1", i+1, n)
		}
	}
	if n := h.fake.holding("acme"); n != 0 {
		t.Errorf("acme held by %d visits once its requests were answered, want 0", n)
	}
}
