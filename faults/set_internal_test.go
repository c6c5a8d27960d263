// Tests of what matching must not do: take the merchant's lock when no
// rule could match.

package faults

import (
	"testing"
	"time"
)

func TestMatchAPI_TakesNoLockWithoutARuleForTheCall(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := s.Add("busy", Rule{Operation: "listPayments", Status: 500}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add("busy", Rule{Target: TargetWebhooks, EventType: "payment.failed", BadSignature: true}); err != nil {
		t.Fatal(err)
	}
	b := s.find("busy", false)
	b.mu.Lock()
	defer b.mu.Unlock()
	done := make(chan bool, 1)
	go func() {
		_, api := s.MatchAPI("busy", "createPayment")
		_, hook := s.MatchWebhook("busy", "payment.completed")
		done <- api || hook
	}()
	select {
	case matched := <-done:
		if matched {
			t.Error("a rule for another operation or event type matched")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("MatchAPI waited for the merchant's lock although no rule could match")
	}
}
