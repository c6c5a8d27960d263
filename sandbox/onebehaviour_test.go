// One behaviour on both backends: a seeded session of faults drawn by
// probability, a failing endpoint with retries, clock advances and a stop
// and start, played on memory and on PostgreSQL, leaves the same events,
// deliveries, journal and fault counts.

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgbackendtest"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/memory"
)

func TestOneBehaviour_ASeededSessionIsTheSameOnBothBackends(t *testing.T) {
	if os.Getenv("PAYMOCK_SKIP_POSTGRES") == "1" {
		t.Skip("PAYMOCK_SKIP_POSTGRES=1: no PostgreSQL to compare memory with")
	}
	onMemory := playSeededSession(t, memory.New())
	onPostgres := playSeededSession(t, pgbackendtest.Backend(t))

	if !reflect.DeepEqual(onMemory, onPostgres) {
		m, _ := json.MarshalIndent(onMemory, "", "  ")
		p, _ := json.MarshalIndent(onPostgres, "", "  ")
		t.Errorf("the same seeded session differs between the backends:\nmemory:\n%s\npostgres:\n%s", m, p)
	}
	// The session did what it is for: faults hit and missed, sends
	// failed and were retried across the restart, and all ended delivered.
	if onMemory.Faults == "" || !strings.Contains(onMemory.Retrieves, "503") || !strings.Contains(onMemory.Retrieves, "200") {
		t.Errorf("the fault drew no mix of hits and misses: %q (hits %q)", onMemory.Retrieves, onMemory.Faults)
	}
	if len(onMemory.Sends) < 9 {
		t.Errorf("the receiver saw %d sends, want three per event", len(onMemory.Sends))
	}
}

// session is what a seeded session leaves, with ids and wall-clock
// instants replaced by what does not depend on the backend.
type session struct {
	Retrieves string   // each retrieve's status, in order
	Faults    string   // the rule's hits and what remains
	Events    []string // type, payment, created_at; then each delivery's state and attempts
	Sends     []string // what the receiver saw
	Journal   []string // method, path, status and fault of every request, newest first
}

// playSeededSession plays the session on b: one sandbox, then a second on
// the same backend after the first has stopped.
func playSeededSession(t *testing.T, b paymock.Backend) session {
	t.Helper()
	ids := newOrdinals()
	var mu sync.Mutex
	var sends []string
	seen := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Type string
			Data struct{ ID string }
		}
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get("webhook-id")
		seen[id]++
		status := http.StatusInternalServerError // the first two sends of each event fail
		if seen[id] > 2 {
			status = http.StatusNoContent
		}
		sends = append(sends, fmt.Sprintf("%s of %s, send %d: %d", ev.Type, ids.of(ev.Data.ID), seen[id], status))
		w.WriteHeader(status)
	}))
	defer recv.Close()

	seed := uint64(7)
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	cfg := Config{
		Backend: b,
		Seed:    &seed,
		Clock:   lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: start},
		Merchants: []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme_one_behaviour"},
			Webhooks: []paymock.WebhookEndpoint{{URL: recv.URL + "/hooks", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}}},
		Webhooks:    WebhookConfig{Retry: []time.Duration{10 * time.Second, 20 * time.Second}, Timeout: 5 * time.Second},
		JournalSize: 100,
	}
	var out session
	run := func(steps func(call func(method, path string, body any) (int, map[string]any))) {
		sb, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sb.Start()
		srv := httptest.NewServer(sb.Handler())
		call := func(method, path string, body any) (int, map[string]any) {
			t.Helper()
			var rd io.Reader
			if body != nil {
				raw, _ := json.Marshal(body)
				rd = strings.NewReader(string(raw))
			}
			req, _ := http.NewRequest(method, srv.URL+path, rd)
			req.Header.Set("Authorization", "Bearer sk_test_acme_one_behaviour")
			if rd != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			return resp.StatusCode, m
		}
		steps(call)
		srv.Close()
		if err := sb.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	var pays []string
	run(func(call func(string, string, any) (int, map[string]any)) {
		if st, r := call("POST", "/_sandbox/faults", map[string]any{"operation": "retrievePayment", "status": 503, "probability": 0.5}); st != 201 {
			t.Fatalf("fault rule: %d %v", st, r)
		}
		for range 3 {
			body := validCreate()
			body["expires_in"] = 600
			st, p := call("POST", "/api/v1/payments", body)
			if st != 201 {
				t.Fatalf("create: %d %v", st, p)
			}
			pays = append(pays, p["id"].(string))
			ids.of(p["id"].(string)) // payments are named in the order they were made
		}
		var statuses []string
		for i := range 12 {
			st, _ := call("GET", "/api/v1/payments/"+pays[i%3], nil)
			statuses = append(statuses, fmt.Sprint(st))
		}
		out.Retrieves = strings.Join(statuses, " ")
		call("POST", "/_sandbox/payments/"+pays[0]+"/complete", nil)
		call("POST", "/_sandbox/payments/"+pays[1]+"/fail", nil)
		call("POST", "/_sandbox/clock/advance", map[string]any{"seconds": 15}) // the first retries, failing again
	})
	run(func(call func(string, string, any) (int, map[string]any)) {
		call("POST", "/_sandbox/clock/advance", map[string]any{"seconds": 30})  // the second retries, delivered
		call("POST", "/_sandbox/clock/advance", map[string]any{"seconds": 600}) // the third payment expires
		call("POST", "/_sandbox/clock/advance", map[string]any{"seconds": 60})  // and its retries run out their failures
		_, fl := call("GET", "/_sandbox/faults", nil)
		for _, it := range fl["items"].([]any) {
			r := it.(map[string]any)
			out.Faults += fmt.Sprintf("%s hits %v remaining %v; ", ids.of(r["id"].(string)), r["hits"], r["remaining"])
		}
		_, evs := call("GET", "/_sandbox/events?per_page=100", nil)
		for _, it := range evs["items"].([]any) {
			e := it.(map[string]any)
			line := fmt.Sprintf("%s of %s at %s:", e["type"], ids.of(fmt.Sprint(e["payment_id"])), e["created_at"])
			for _, d := range e["deliveries"].([]any) {
				d := d.(map[string]any)
				line += fmt.Sprintf(" round %v %s", d["round"], d["state"])
				for _, a := range d["attempts"].([]any) {
					a := a.(map[string]any)
					line += fmt.Sprintf(" [%v at %v: %v]", a["attempt"], a["at"], a["status_code"])
				}
			}
			out.Events = append(out.Events, line)
		}
		_, reqs := call("GET", "/_sandbox/requests?per_page=100", nil)
		for _, it := range reqs["items"].([]any) {
			r := it.(map[string]any)
			out.Journal = append(out.Journal, fmt.Sprintf("%s %s %v %v", r["method"], ids.inPath(r["path"].(string)), r["status"], ids.of(fmt.Sprint(r["injected_fault"]))))
		}
	})
	mu.Lock()
	out.Sends = append([]string(nil), sends...)
	mu.Unlock()
	// Deliveries of different payments go out side by side, in either
	// order; those of one event keep theirs, which the send numbers show.
	slices.Sort(out.Sends)
	return out
}

// ordinals names ids by the order they were first met in, so that two
// runs that draw different ids compare equal when they did the same.
type ordinals struct {
	mu sync.Mutex
	n  map[string]string
}

func newOrdinals() *ordinals { return &ordinals{n: map[string]string{}} }

func (o *ordinals) of(id string) string {
	if id == "" || id == "<nil>" {
		return "-"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if v, ok := o.n[id]; ok {
		return v
	}
	prefix, _, _ := strings.Cut(id, "_")
	v := fmt.Sprintf("%s#%d", prefix, len(o.n)+1)
	o.n[id] = v
	return v
}

// inPath replaces the ids in a request path.
func (o *ordinals) inPath(path string) string {
	return regexp.MustCompile(`(pay|evt|flt)_[0-9A-Za-z]+`).ReplaceAllStringFunc(path, o.of)
}
