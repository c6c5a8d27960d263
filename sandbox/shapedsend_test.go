// A send a webhook fault shapes, to an endpoint that never answers, ends
// within its claim's lease: it is recorded once and not sent again
// meanwhile, on either backend.

package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestShapedSend_DuplicateToAnEndpointThatNeverAnswersIsRecordedAndNotClaimedAgain(t *testing.T) {
	// Real clocks, so the sweep looks every second for claims that have
	// lapsed. Ten copies at the 1 s timeout each took 10 s, past the
	// 6 s lease: senders claimed the delivery again and again, and its
	// first send was never recorded.
	for _, tc := range []struct {
		name, rule string
		copies     int
	}{
		{"duplicate", `{"target": "webhooks", "duplicate": 10, "times": 1}`, 10},
		{"two copies", `{"target": "webhooks", "duplicate": 2, "times": 1}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, withRealClock(), withWebhookTimeout(time.Second), withWebhooks([]time.Duration{time.Hour}))
			hung := newHungListener(t)
			if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": hung.url()}); st != http.StatusCreated {
				t.Fatalf("add the endpoint: %d %v", st, body)
			}
			if st, body, _ := env.do("POST", "/_sandbox/faults", keyA, tc.rule); st != http.StatusCreated {
				t.Fatalf("add the fault: %d %v", st, body)
			}
			id := env.create(keyA, nil)
			if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
				t.Fatalf("complete: %d %v", st, body)
			}

			attempts := func() []any {
				st, body, _ := env.do("GET", "/_sandbox/events?per_page=1", keyA, nil)
				if st != http.StatusOK {
					t.Fatalf("events: %d %v", st, body)
				}
				items := body["items"].([]any)
				if len(items) != 1 {
					t.Fatalf("events = %v, want the payment.completed", items)
				}
				dels := items[0].(map[string]any)["deliveries"].([]any)
				if len(dels) != 1 {
					t.Fatalf("deliveries = %v, want one", dels)
				}
				del := dels[0].(map[string]any)
				if del["state"] != "pending" {
					t.Fatalf("delivery = %v, want pending", del)
				}
				return del["attempts"].([]any)
			}
			waitFor(t, func() bool { return len(attempts()) > 0 }, "the shaped send to be recorded")

			// Past the lease, with the sweep looking every second: a
			// claim that lapsed under a live send would be taken again.
			time.Sleep(8 * time.Second)
			recorded := attempts()
			if got := hung.accepted(); got != len(recorded) {
				t.Errorf("the endpoint got %d connections for %d recorded attempts: the delivery was sent again", got, len(recorded))
			}
			last := recorded[len(recorded)-1].(map[string]any)
			if msg, _ := last["error"].(string); !strings.Contains(msg, "timeout") {
				t.Errorf("last attempt = %v, want a timeout", last)
			}
			fault, _ := last["fault"].(map[string]any)
			if effect, _ := fault["effect"].(string); fault == nil || fault["duplicate"] != float64(tc.copies) ||
				!strings.Contains(effect, "were not sent") {
				t.Errorf("last attempt's fault = %v, want copy 1 of %d saying the others were not sent", fault, tc.copies)
			}
			if strings.Contains(env.logs.String(), "not recorded") {
				t.Errorf("the log says an attempt was not recorded:\n%s", env.logs.String())
			}
		})
	}
}
