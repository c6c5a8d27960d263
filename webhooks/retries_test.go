// Tests of what a failed attempt leads to: retries on the schedule, and when they stop.

package webhooks

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestFailingTwiceThenSucceedingTakesThreeAttemptsOnTheRetrySchedule(t *testing.T) {
	rcv := newReceiver(t, func(_ hit, n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	clock := newFakeClock()
	retry := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute}
	d := newDispatcher(t, clock, Config{Retry: retry})
	ev := event(t, "acme", "evt_retry", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryPending || del.NextAttemptAt != paymock.FormatTime(clockStart.Add(5*time.Second)) {
		t.Fatalf("after the first 500: %+v, want pending with the next attempt at +5s", del)
	}
	for _, step := range retry[:2] {
		clock.Advance("acme", step)
		idle(t, d, "acme")
	}

	hits := rcv.got(t)
	if got := ids(hits); !slices.Equal(got, []string{ev.ID, ev.ID, ev.ID}) {
		t.Errorf("receiver got ids %v, want %s three times", got, ev.ID)
	}
	del = only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryDelivered || del.NextAttemptAt != "" {
		t.Errorf("state %s, next %q, want delivered with nothing scheduled", del.State, del.NextAttemptAt)
	}
	wantAt := []time.Time{clockStart, clockStart.Add(5 * time.Second), clockStart.Add(35 * time.Second)}
	wantStatus := []int{500, 500, 200}
	if len(del.Attempts) != 3 {
		t.Fatalf("attempts = %+v, want 3", del.Attempts)
	}
	for i, a := range del.Attempts {
		if a.Attempt != i+1 || a.At != paymock.FormatTime(wantAt[i]) || a.StatusCode != wantStatus[i] {
			t.Errorf("attempt %d = %+v, want number %d at %s with %d", i, a, i+1, paymock.FormatTime(wantAt[i]), wantStatus[i])
		}
		if (a.Error != "") != (wantStatus[i] != 200) {
			t.Errorf("attempt %d error = %q", i+1, a.Error)
		}
	}
	if n := clock.Pending("acme"); n != 0 {
		t.Errorf("%d retries still scheduled after delivery", n)
	}
}

func TestUnreachableEndpointFailsAfterEveryAttempt(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL + "/hooks"
	down.Close() // connection refused from now on

	clock := newFakeClock()
	retry := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	d := newDispatcher(t, clock, Config{Retry: retry})
	ev := event(t, "acme", "evt_down", "pay_1")
	publish(t, d, merchant("acme", paymock.WebhookEndpoint{URL: url, Secret: testSecret}), ev)
	idle(t, d, "acme")
	for _, step := range retry {
		clock.Advance("acme", step)
		idle(t, d, "acme")
	}

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryFailed || len(del.Attempts) != 1+len(retry) {
		t.Fatalf("delivery = %+v, want failed after %d attempts", del, 1+len(retry))
	}
	for _, a := range del.Attempts {
		if a.Error == "" || a.StatusCode != 0 {
			t.Errorf("attempt %+v: want an error and no status", a)
		}
	}
	if !strings.Contains(del.Error, "4 attempts") {
		t.Errorf("delivery error = %q, want it to count the attempts", del.Error)
	}
	if clock.Pending("acme") != 0 {
		t.Error("a retry is still scheduled after the last attempt")
	}
	// Advancing further changes nothing: the failure stays visible.
	clock.Advance("acme", time.Hour)
	idle(t, d, "acme")
	if again := only(t, record(t, d, "acme", ev.ID)); again.State != paymock.DeliveryFailed || len(again.Attempts) != 4 {
		t.Errorf("after more time: %+v", again)
	}
}

func TestTimeoutCountsAsFailedAttempt(t *testing.T) {
	// The handler holds the request until the sender gives up, or until the
	// test ends: a server never notices a dropped connection on its own if
	// it reads nothing more from it, and Close would wait forever.
	release := make(chan struct{})
	rcv := newReceiver(t, func(h hit, _ int) int {
		select {
		case <-h.ctx.Done():
		case <-release:
		}
		return http.StatusOK
	})
	t.Cleanup(func() { close(release) }) // runs before the receiver's Close
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{Timeout: 20 * time.Millisecond, Retry: []time.Duration{time.Minute}})
	ev := event(t, "acme", "evt_slow", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryPending || len(del.Attempts) != 1 || del.NextAttemptAt == "" {
		t.Fatalf("delivery = %+v, want a retry scheduled after the timeout", del)
	}
	if a := del.Attempts[0]; !strings.Contains(a.Error, "timeout") || a.StatusCode != 0 {
		t.Errorf("attempt = %+v, want a timeout error", a)
	}
}

func TestGoneStopsRetrying(t *testing.T) {
	rcv := newReceiver(t, func(hit, int) int { return http.StatusGone })
	clock := newFakeClock()
	d := newDispatcher(t, clock, Config{})
	ev := event(t, "acme", "evt_gone", "pay_1")
	publish(t, d, merchant("acme", rcv.endpoint()), ev)
	idle(t, d, "acme")

	del := only(t, record(t, d, "acme", ev.ID))
	if del.State != paymock.DeliveryFailed || len(del.Attempts) != 1 || del.Attempts[0].StatusCode != http.StatusGone {
		t.Fatalf("delivery = %+v, want failed after one 410", del)
	}
	if want := "endpoint answered 410 Gone: retries stopped"; del.Error != want || del.Attempts[0].Error != want {
		t.Errorf("errors %q / %q, want %q", del.Error, del.Attempts[0].Error, want)
	}
	if clock.Pending("acme") != 0 || del.NextAttemptAt != "" {
		t.Error("a retry was scheduled after 410")
	}
}

func TestNon2xxAnswersAreRetried(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusBadRequest, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			rcv := newReceiver(t, func(_ hit, n int) int {
				if n == 1 {
					return code
				}
				return http.StatusAccepted
			})
			clock := newFakeClock()
			d := newDispatcher(t, clock, Config{Retry: []time.Duration{time.Second}})
			ev := event(t, "acme", "evt_1", "pay_1")
			publish(t, d, merchant("acme", rcv.endpoint()), ev)
			idle(t, d, "acme")
			clock.Advance("acme", time.Second)
			idle(t, d, "acme")
			del := only(t, record(t, d, "acme", ev.ID))
			if del.State != paymock.DeliveryDelivered || len(del.Attempts) != 2 || del.Attempts[0].StatusCode != code || del.Attempts[0].Error == "" {
				t.Errorf("delivery = %+v, want a failed %d then delivered", del, code)
			}
		})
	}
}
