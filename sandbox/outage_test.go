// A database that goes away while serving: every call that needs it is a
// 503 the contract declares, never a hang or a 500.

package sandbox

import (
	"context"
	"net/http"
	"testing"

	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/postgres"
)

func TestOutage_EveryCallThatNeedsTheDatabaseIsA503(t *testing.T) {
	url := pgtest.URL(t)
	st, err := postgres.Open(context.Background(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	e := newEnv(t, onBackend(st.Backend()), expectingOutage())
	rule := e.addFault(keyA, map[string]any{"operation": "listPayments", "status": 503})
	id := e.create(keyA, nil)

	if st, body, _ := e.do("GET", "/readyz", "", nil); st != http.StatusOK {
		t.Errorf("readyz with the database up: %d %v", st, body)
	}

	// Cut the database off: no new connections, and the pool's closed.
	back := pgtest.CutOff(t, url)

	// Liveness stays: the process is fine; readiness says to send no
	// traffic here.
	if st, body, _ := e.do("GET", "/healthz", "", nil); st != http.StatusOK {
		t.Errorf("healthz with the database down: %d %v, want 200", st, body)
	}
	if st, body, _ := e.do("GET", "/readyz", "", nil); st != http.StatusServiceUnavailable {
		t.Errorf("readyz with the database down: %d %v, want 503", st, body)
	}

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/payments/" + id, nil},
		{"POST", "/api/v1/payments", validCreate()},
		{"GET", "/_sandbox/clock", nil},
		{"POST", "/_sandbox/payments/" + id + "/complete", nil},
		{"GET", "/_sandbox/events", nil},
		{"GET", "/_sandbox/requests", nil},
		{"GET", "/_sandbox/report", nil},
		{"GET", "/_sandbox/faults", nil},
		{"POST", "/_sandbox/faults", map[string]any{"status": 500}},
		{"DELETE", "/_sandbox/faults/" + rule["id"].(string), nil},
		{"DELETE", "/_sandbox/faults", nil},
		{"GET", "/_sandbox/api-keys", nil},
		{"POST", "/_sandbox/api-keys", nil},
		{"GET", "/_sandbox/webhook-endpoints", nil},
		{"POST", "/_sandbox/webhook-endpoints", map[string]any{"url": "https://example.com/hook"}},
		{"POST", "/_sandbox/reset", nil},
	} {
		st, body, _ := e.do(c.method, c.path, keyA, c.body)
		if st != http.StatusServiceUnavailable {
			t.Errorf("%s %s with the database down: %d %v, want 503", c.method, c.path, st, body)
		}
	}

	back()
	if st, body, _ := e.do("GET", "/readyz", "", nil); st != http.StatusOK {
		t.Errorf("readyz once the database is back: %d %v", st, body)
	}
	// Back by itself: the pool reconnects on the next call.
	if st, body, _ := e.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusOK {
		t.Errorf("once the database is back: %d %v", st, body)
	}
	if evs := e.events(keyA); len(evs) != 0 {
		t.Errorf("the completion refused during the outage left %d events", len(evs))
	}
}
