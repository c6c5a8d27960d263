// The per-merchant cap on pending webhook deliveries that a redelivery
// respects: one tenant of a shared sandbox cannot grow the outbox without
// bound by looping on POST /_sandbox/events/{id}/redeliver.

package sandbox

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// deliveriesOf counts the deliveries of key's event id, every round.
func (e *testEnv) deliveriesOf(key, id string) int {
	e.t.Helper()
	for _, ev := range e.events(key) {
		if ev["id"] == id {
			return len(ev["deliveries"].([]any))
		}
	}
	e.t.Fatalf("no event %s", id)
	return 0
}

func TestRedeliverLimit_RedeliveriesAtTheCapAreRefused(t *testing.T) {
	const max = 3
	// Every attempt fails and one retry an hour later is the last: a
	// delivery stays pending until the clock is advanced by an hour.
	rcv := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	env := newEnv(t, withMaxPendingForRedeliver(max),
		withWebhooks([]time.Duration{time.Hour}, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	eventOf := func(key string) string {
		id := env.create(key, nil)
		if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", key, nil); st != http.StatusOK {
			t.Fatalf("complete: %d %v", st, body)
		}
		env.advance(key, 0) // the first attempts are made, and fail
		evs := env.events(key)
		if len(evs) != 1 {
			t.Fatalf("events %v, want the completion's alone", evs)
		}
		return evs[0]["id"].(string)
	}
	evA, evB := eventOf(keyA), eventOf(keyB)

	for _, step := range []struct {
		name    string
		key, ev string
		advance int // seconds the clock is advanced first
		status  int
		want    int // deliveries of the event afterwards
	}{
		{name: "below the cap a round is added", key: keyA, ev: evA, status: http.StatusAccepted, want: 2},
		{name: "one below the cap still is", key: keyA, ev: evA, status: http.StatusAccepted, want: 3},
		{name: "at the cap nothing is added", key: keyA, ev: evA, status: http.StatusBadRequest, want: 3},
		{name: "another merchant has its own room", key: keyB, ev: evB, status: http.StatusAccepted, want: 2},
		{name: "deliveries that ended make room", key: keyA, ev: evA, advance: 3600, status: http.StatusAccepted, want: 4},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.advance > 0 {
				env.advance(step.key, step.advance)
			}
			st, body, _ := env.do("POST", "/_sandbox/events/"+step.ev+"/redeliver", step.key, nil)
			if st != step.status {
				t.Fatalf("redeliver: %d %v, want %d", st, body, step.status)
			}
			if st == http.StatusBadRequest {
				er := errorOf(t, body)
				if er["type"] != "invalid_request_error" || er["code"] != "delivery_limit" {
					t.Errorf("redeliver at the cap: %v, want invalid_request_error delivery_limit", er)
				}
				msg, _ := er["message"].(string)
				for _, want := range []string{"stops at " + itoa(max) + " webhook deliveries pending", "POST /_sandbox/reset"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not say %q", msg, want)
					}
				}
			}
			if n := env.deliveriesOf(step.key, step.ev); n != step.want {
				t.Errorf("%d deliveries of %s, want %d", n, step.ev, step.want)
			}
		})
	}
}

func TestRedeliverLimit_TheDashboardSaysWhyNothingWasSent(t *testing.T) {
	rcv := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	env := newEnv(t, withMaxPendingForRedeliver(1),
		withWebhooks([]time.Duration{time.Hour}, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	env.advance(keyA, 0)
	ev := env.events(keyA)[0]["id"].(string)

	d := env.dashClient()
	if !d.signIn(keyA) {
		t.Fatal("the dashboard did not take the key")
	}
	if st, _ := d.get("/dashboard/webhooks"); st != http.StatusOK {
		t.Fatalf("GET /dashboard/webhooks: %d", st)
	}
	st, to, page := d.postPage("/dashboard/events/"+ev+"/redeliver", url.Values{"next": {"/dashboard/webhooks"}})
	if st != http.StatusSeeOther || to != "/dashboard/webhooks?refused=1" {
		t.Fatalf("redeliver at the cap from the dashboard: %d to %q, want 303 back to the page, refused:\n%s", st, to, page)
	}
	_, page = d.get(to)
	for _, want := range []string{"was not redelivered", "stops at 1 webhook deliveries pending", "POST /_sandbox/reset", "Nothing was sent."} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q:\n%s", want, page)
		}
	}
	if n := env.deliveriesOf(keyA, ev); n != 1 {
		t.Errorf("%d deliveries after a refused redelivery, want 1", n)
	}
}
