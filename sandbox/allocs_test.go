// Tests that a create and a retrieve allocate no more than they did when
// issue 24's rounds cut them: a change that allocates again on every
// request fails here, not only in a benchmark someone must think to run.

//go:build !race

// (The race detector drops pooled exchanges at random, and allocates for
// itself, so the counts below hold only without it.)

package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/paymock/paymock/lifecycle"
)

func TestRequests_AllocateWithinTheirBudget(t *testing.T) {
	// The binary's defaults on the memory store, whatever backend or wire
	// forms the suite's environment asks the other tests for: the budget
	// is the memory store's, in the default form. The server checks every
	// answer against the contract; one that broke it would be a 500.
	sb, err := New(Config{Clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart}, JournalSize: DefaultJournalSize})
	if err != nil {
		t.Fatal(err)
	}
	// Not started, so that no sweep allocates during the count (and so
	// not closed: Close waits for what Start runs).
	h := sb.Handler()
	body, err := json.Marshal(validCreate())
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, benchRequest("POST", "/api/v1/payments", body))
	var p struct{ ID string }
	if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &p) != nil {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	id := p.ID
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		status             int
		// of ServeHTTP: the server, and the recorder's 4. One is the
		// context that offers the journal entry to the store call
		// (paymock.WithJournalCarry), made for each request: a pooled
		// one was read by pgx's dials after its request had gone.
		budget float64
	}{
		{"create", "POST", "/api/v1/payments", body, http.StatusCreated, 23},
		{"retrieve", "GET", "/api/v1/payments/" + id, nil, http.StatusOK, 17.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reqs []*http.Request
			var recs []*httptest.ResponseRecorder
			prepare := func() {
				reqs, recs = reqs[:0], recs[:0]
				for range 50 {
					reqs = append(reqs, benchRequest(tc.method, tc.path, tc.body))
					recs = append(recs, httptest.NewRecorder())
				}
			}
			prepare()
			for i := range reqs {
				h.ServeHTTP(recs[i], reqs[i]) // warm: pools, caches, the merchant
			}
			// The requests and recorders are made outside the count; only
			// ServeHTTP is counted, 50 requests a run, on one thread as
			// testing.AllocsPerRun counts (which runs its function twice,
			// and a request's body reads once).
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			var served uint64
			for range 5 {
				prepare()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range reqs {
					h.ServeHTTP(recs[i], reqs[i])
				}
				runtime.ReadMemStats(&after)
				served += after.Mallocs - before.Mallocs
				for _, w := range recs {
					if w.Code != tc.status {
						t.Fatalf("%d: %s", w.Code, w.Body)
					}
				}
			}
			perRequest := float64(served) / 5 / float64(len(reqs))
			t.Logf("%.1f allocations a request", perRequest)
			if perRequest > tc.budget {
				t.Errorf("%.1f allocations a request, over the budget of %v", perRequest, tc.budget)
			}
		})
	}
}
