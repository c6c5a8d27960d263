// Tests of the hosted-page rules of the domain.

package paymock

import (
	"testing"
	"time"
)

func TestPagePath_CardMeansThe3DSPage(t *testing.T) {
	if got := PagePath(true); got != ThreeDSPath {
		t.Errorf("with a payment method: %q", got)
	}
	if got := PagePath(false); got != CheckoutPath {
		t.Errorf("without: %q", got)
	}
}

func TestPayment_OverdueOnlyWhilePendingFromItsExpiry(t *testing.T) {
	exp := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status Status
		now    time.Time
		want   bool
	}{
		{"pending before expiry", StatusPending, exp.Add(-time.Second), false},
		{"pending at expiry", StatusPending, exp, true},
		{"pending after expiry", StatusPending, exp.Add(time.Hour), true},
		{"completed after expiry", StatusCompleted, exp.Add(time.Hour), false},
		{"expired after expiry", StatusExpired, exp.Add(time.Hour), false},
	}
	for _, tc := range tests {
		p := Payment{Status: tc.status, ExpiresAt: exp}
		if got := p.Overdue(tc.now); got != tc.want {
			t.Errorf("%s: Overdue = %v, want %v", tc.name, got, tc.want)
		}
	}
}
