// Tests of what a look-up of candidates must not do: take the merchant's
// lock when no rule could match.

package memory

import (
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestCandidates_TakesNoLockWithoutARuleForTheCall(t *testing.T) {
	f := NewFaultRules()
	for i := range 100 {
		r := paymock.FaultRule{ID: "flt_" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Operation: "listPayments", Status: 500}.Normalize()
		if err := f.AddRule(t.Context(), "busy", r, 1000); err != nil {
			t.Fatal(err)
		}
	}
	hook := paymock.FaultRule{ID: "flt_hook", Target: paymock.FaultTargetWebhooks, EventType: "payment.failed", BadSignature: true}.Normalize()
	if err := f.AddRule(t.Context(), "busy", hook, 1000); err != nil {
		t.Fatal(err)
	}
	b := f.book("busy", false)
	b.mu.Lock()
	defer b.mu.Unlock()
	done := make(chan int, 1)
	go func() {
		api, _ := f.Candidates(t.Context(), "busy", paymock.FaultTargetAPI, "createPayment")
		hooks, _ := f.Candidates(t.Context(), "busy", paymock.FaultTargetWebhooks, "payment.completed")
		done <- len(api) + len(hooks)
	}()
	select {
	case n := <-done:
		if n != 0 {
			t.Errorf("%d candidates for another operation or event type", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Candidates waited for the merchant's lock although no rule could match")
	}
}
