// Tests of a clock near its last instant (the end of 9999): nothing the
// sandbox schedules or stores falls past it, where no answer can write it.

package sandbox

import (
	"net/http"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestLastInstant_NothingIsDueAfterTheClocksLastSecond(t *testing.T) {
	rcv := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	env := newEnv(t, withStart(time.Date(9999, 12, 31, 23, 59, 50, 0, time.UTC)),
		withWebhooks([]time.Duration{30 * time.Second, time.Hour}, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))

	// A payment that would expire in the year 10000 is refused, and leaves
	// nothing behind that a list could not show.
	body := validCreate()
	body["expires_in"] = 3600
	if st, p, _ := env.do("POST", "/api/v1/payments", keyA, body); st != http.StatusBadRequest || p["error"].(map[string]any)["param"] != "expires_in" {
		t.Fatalf("create expiring past the clock's end: %d %v, want 400 naming expires_in", st, p)
	}
	if st, p, _ := env.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusOK || p["pagination"].(map[string]any)["total_items"] != 0.0 {
		t.Fatalf("list after the refused create: %d %v", st, p)
	}

	// A webhook retry due past the end is due at its last second: there
	// the rest of the schedule runs at once.
	id := env.create(keyA, func(b map[string]any) { b["expires_in"] = 5 })
	if st, p, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
		t.Fatalf("complete: %d %v", st, p)
	}
	env.advance(keyA, 0) // waits for the first attempt
	evs := env.events(keyA)
	if len(evs) != 1 {
		t.Fatalf("events: %v", evs)
	}
	d := evs[0]["deliveries"].([]any)[0].(map[string]any)
	if d["state"] != "pending" || d["next_attempt_at"] != "9999-12-31T23:59:59Z" {
		t.Errorf("after a failed attempt at 23:59:50: %v, want pending with its next attempt at 9999-12-31T23:59:59Z", d)
	}
	env.advance(keyA, 9)
	if n := rcv.attemptCount(); n != 3 {
		t.Errorf("%d attempts once the clock showed its last second, want all 3", n)
	}
	d = env.events(keyA)[0]["deliveries"].([]any)[0].(map[string]any)
	if d["state"] != "failed" || d["next_attempt_at"] != nil {
		t.Errorf("after the schedule: %v, want failed with nothing due", d)
	}
}
