// Webhooks across real paymock processes on one database: a killed
// replica loses no event, and a restart resumes retries.

package postgres_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/pgtest"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookReceiver verifies every delivery with the reference library and
// counts them per webhook-id; fail answers 500 to a delivery's first
// sends while it returns true.
type hookReceiver struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	sent map[string]int // webhook-id -> sends received
	ok   map[string]int // webhook-id -> 2xx answered
	fail func(id string, n int) bool
}

func newHookReceiver(t *testing.T, fail func(id string, n int) bool) *hookReceiver {
	wh, err := standardwebhooks.NewWebhook(hookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{t: t, sent: map[string]int{}, ok: map[string]int{}, fail: fail}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := wh.Verify(body, req.Header); err != nil {
			t.Errorf("a delivery does not verify: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := req.Header.Get("webhook-id")
		r.mu.Lock()
		r.sent[id]++
		n := r.sent[id]
		failing := r.fail != nil && r.fail(id, n)
		if !failing {
			r.ok[id]++
		}
		r.mu.Unlock()
		if failing {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) delivered(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok[id]
}

func (r *hookReceiver) sends(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[id]
}

func hookArgs(r *hookReceiver, extra ...string) []string {
	return append([]string{"--webhook-url", r.srv.URL, "--webhook-secret", hookSecret}, extra...)
}

// allEvents reads every event in r's journal.
func (r replica) allEvents() []map[string]any {
	r.t.Helper()
	var out []map[string]any
	for page := 1; ; page++ {
		st, body := r.call("GET", fmt.Sprintf("/_sandbox/events?per_page=100&page=%d", page), nil)
		if st != http.StatusOK {
			r.t.Fatalf("events: %d %v", st, body)
		}
		items := body["items"].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any))
		}
		if len(items) < 100 {
			return out
		}
	}
}

func TestProcesses_SIGKILLDuringABurstKeepsOneEventPerOutcomeAndDeliversIt(t *testing.T) {
	db := pgtest.URL(t)
	rcv := newHookReceiver(t, nil)
	a, b := startProcess(t, db, hookArgs(rcv)...), startProcess(t, db, hookArgs(rcv)...)
	var (
		mu                   sync.Mutex
		completed, uncertain []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, p := a.call("POST", "/api/v1/payments", createBody(3600, nil))
				if st != http.StatusCreated {
					return // A is gone
				}
				id := p["id"].(string)
				st, _ = a.call("POST", "/_sandbox/payments/"+id+"/complete", nil)
				mu.Lock()
				if st == http.StatusOK {
					completed = append(completed, id)
				} else {
					uncertain = append(uncertain, id) // sent as A died: applied or not
				}
				mu.Unlock()
				if st != http.StatusOK {
					return
				}
			}
		})
	}
	burstUntil(&mu, 10, func() int { return len(completed) })
	a.kill()
	close(stop)
	wg.Wait()
	if len(completed) < 5 {
		t.Fatalf("only %d completions answered before the kill: the burst did not run", len(completed))
	}
	// Every outcome B can see has exactly one event, and every event ends
	// up delivered: those A had not sent, or was sending, are claimed by
	// B once A's claims lapse (a lease of the 10 s timeout plus 5 s).
	deadline := time.Now().Add(40 * time.Second)
	for {
		events := b.allEvents()
		perPayment := map[string]int{}
		pending := 0
		for _, ev := range events {
			perPayment[ev["payment_id"].(string)]++
			for _, d := range ev["deliveries"].([]any) {
				switch s := d.(map[string]any)["state"]; s {
				case "pending":
					pending++
				case "delivered":
				default:
					t.Fatalf("a delivery is %v: %v", s, d)
				}
			}
		}
		for _, id := range completed {
			if perPayment[id] != 1 {
				t.Fatalf("payment %s, completed on A, has %d events on B; want 1", id, perPayment[id])
			}
		}
		for _, id := range uncertain {
			if n, st := perPayment[id], b.status(id); st == "completed" && n != 1 || st != "completed" && n != 0 {
				t.Fatalf("payment %s is %s on B with %d events", id, st, n)
			}
		}
		if pending == 0 {
			for _, ev := range events {
				if n := rcv.delivered(ev["id"].(string)); n < 1 {
					t.Errorf("event %s is delivered in the journal, but the receiver got it %d times", ev["id"], n)
				}
			}
			t.Logf("%d completions answered before SIGKILL, %d events, all delivered", len(completed), len(events))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending 40 s after the kill", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestProcesses_RestartingEveryReplicaResumesRetries(t *testing.T) {
	db := pgtest.URL(t)
	rcv := newHookReceiver(t, func(_ string, n int) bool { return n == 1 })
	args := hookArgs(rcv, append([]string{"--webhook-retry", "30s"}, frozenArgs...)...)
	a, b := startProcess(t, db, args...), startProcess(t, db, args...)
	id := a.create(3600, nil)
	if st, body := a.call("POST", "/_sandbox/payments/"+id+"/complete", nil); st != http.StatusOK {
		t.Fatalf("complete: %d %v", st, body)
	}
	events := b.allEvents()
	if len(events) != 1 {
		t.Fatalf("%d events, want 1", len(events))
	}
	evID := events[0]["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); rcv.sends(evID) < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first send never came")
		}
	}
	a.stop(t)
	b.stop(t)
	a, b = startProcess(t, db, args...), startProcess(t, db, args...)
	b.advance(29)
	if n := rcv.sends(evID); n != 1 {
		t.Fatalf("%d sends before the retry was due, want 1", n)
	}
	a.advance(1)
	if n := rcv.delivered(evID); n != 1 {
		t.Fatalf("the retry after the restart: %d delivered, want 1 (sends: %d)", n, rcv.sends(evID))
	}
	del := b.allEvents()[0]["deliveries"].([]any)[0].(map[string]any)
	if del["state"] != "delivered" || len(del["attempts"].([]any)) != 2 {
		t.Errorf("the delivery after the restart: %v", del)
	}
	if !slices.ContainsFunc(del["attempts"].([]any), func(a any) bool { return a.(map[string]any)["status_code"] == 500.0 }) {
		t.Errorf("the failed first attempt is not in the journal: %v", del)
	}
}
