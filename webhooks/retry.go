// The retry schedule: how many sends a delivery gets, when the next one is
// due, and where a send's answer leaves the delivery.

package webhooks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/paymock/paymock"
)

// DefaultRetry is the delay schedule used when Config.Retry is nil.
func DefaultRetry() []time.Duration {
	return []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour}
}

// retrySchedule checks Config.Retry and fills the default.
func retrySchedule(cfg []time.Duration) ([]time.Duration, error) {
	if cfg == nil {
		return DefaultRetry(), nil
	}
	retry := append([]time.Duration{}, cfg...)
	for i, r := range retry {
		if r <= 0 {
			return nil, fmt.Errorf("webhooks: retry delay %d is %s: must be greater than 0", i+1, r)
		}
	}
	return retry, nil
}

// msgGone ends a delivery whose endpoint answered 410.
const msgGone = "endpoint answered 410 Gone: retries stopped"

// next is where send n of a delivery leaves it, given its answer (status
// and errMsg, "" for a 2xx) and the merchant clock when the send started
// (at): delivered, failed for good, or pending with its next send due on
// the schedule. The schedule is measured from the send's start, so it does
// not drift with how long sends take, nor with a clock advanced while one
// was under way. It returns the outcome's name for the Observer too.
func (d *Dispatcher) next(n, status int, errMsg string, oneShot bool, at time.Time) (paymock.Outcome, string) {
	retries := len(d.retry)
	if oneShot {
		retries = 0
	}
	out := paymock.Outcome{Sends: n}
	switch {
	case errMsg == "":
		out.State = paymock.DeliveryDelivered
		return out, string(paymock.DeliveryDelivered)
	case status == http.StatusGone:
		out.State, out.Error = paymock.DeliveryFailed, msgGone
		return out, string(paymock.DeliveryFailed)
	case n > retries:
		out.State = paymock.DeliveryFailed
		out.Error = fmt.Sprintf("no 2xx answer after %d attempts", n)
		if n == 1 {
			out.Error = "no 2xx answer to its single attempt"
		}
		return out, string(paymock.DeliveryFailed)
	}
	out.State, out.NextAt = paymock.DeliveryPending, paymock.NoLaterThanLastSecond(at.Add(d.retry[n-1]))
	return out, "retrying"
}
