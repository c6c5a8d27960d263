// Tests of the shared request journal: appended, listed newest first,
// bounded, counted once across trims and across replicas.

package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/journaltest"
)

// journalRecord is a counted call of op answered with status; a status of
// 400 carries one violation, the contract's refusal.
func journalRecord(id, op string, status int) paymock.JournalRecord {
	e := paymock.JournalEntry{ID: id, At: "2026-03-14T15:09:26Z", Method: "POST", Path: "/api/v1/payments",
		Operation: op, Status: status, DurationMS: 0.125}
	r := paymock.JournalRecord{Entry: e, Counted: true}
	if status == 400 {
		r.Entry.Violations = []paymock.Violation{{Param: "currency", Code: "parameter_invalid", Message: "currency must be one of USD, EUR"}}
		r.Violating = true
	}
	return r
}

func appendAll(t *testing.T, s *Store, merchant string, rs ...paymock.JournalRecord) {
	t.Helper()
	for _, r := range rs {
		if err := s.AppendRequest(t.Context(), merchant, r); err != nil {
			t.Fatal(err)
		}
	}
}

func listIDs(t *testing.T, s *Store, merchant string, q paymock.JournalQuery) ([]string, int) {
	t.Helper()
	items, total, err := s.ListRequests(t.Context(), merchant, q)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(items))
	for _, e := range items {
		ids = append(ids, e.ID)
	}
	return ids, total
}

// callsOf adds up the counted calls of CountRequests by operation and
// status ("op 201"), and the distinct violations ("op param/code").
func callsOf(t *testing.T, s *Store, merchant string) (calls map[string]int, violations map[string]int) {
	t.Helper()
	c, err := s.CountRequests(t.Context(), merchant)
	if err != nil {
		t.Fatal(err)
	}
	calls, violations = map[string]int{}, map[string]int{}
	for _, cc := range c.Calls {
		calls[fmt.Sprintf("%s %d", cc.Operation, cc.Status)] += cc.Calls
		if cc.Violating {
			calls["violating"] += cc.Calls
		}
		if cc.Injected {
			calls["injected"] += cc.Calls
		}
	}
	for _, vc := range c.Violations {
		violations[vc.Operation+" "+vc.Violation.Param+"/"+vc.Violation.Code] += vc.Calls
	}
	return calls, violations
}

func TestJournal_TrimKeepsTheNewestAndCountsEveryRequest(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	for i := range 12 {
		status := 201
		if i%4 == 0 {
			status = 400
		}
		appendAll(t, s, "acme", journalRecord(fmt.Sprint("req_", i), "createPayment", status))
		if i == 5 {
			if err := s.TrimRequests(ctx, "acme", 3); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendAll(t, s, "acme", paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_ctl", Operation: "getReport", Status: 200}})
	appendAll(t, s, "globex", journalRecord("req_g", "createPayment", 201))
	if err := s.TrimRequests(ctx, "acme", 5); err != nil {
		t.Fatal(err)
	}
	if err := s.TrimRequests(ctx, "acme", 5); err != nil { // nothing more to trim
		t.Fatal(err)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM request_journal WHERE merchant_id = 'acme'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	ids, total := listIDs(t, s, "acme", paymock.JournalQuery{Keep: 100, Limit: 100})
	if rows != 5 || total != 5 || ids[0] != "req_ctl" || ids[4] != "req_8" {
		t.Errorf("after trimming to 5: %d rows, listed %v (%d)", rows, ids, total)
	}
	// Twelve counted calls, three of them refused with one violation each,
	// whether trimmed or still listed; the control call is not counted.
	calls, violations := callsOf(t, s, "acme")
	want := map[string]int{"createPayment 201": 9, "createPayment 400": 3, "violating": 3}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if violations["createPayment currency/parameter_invalid"] != 3 || len(violations) != 1 {
		t.Errorf("violations %v", violations)
	}
	if ids, _ := listIDs(t, s, "globex", paymock.JournalQuery{Keep: 100, Limit: 100}); !slices.Equal(ids, []string{"req_g"}) {
		t.Errorf("trimming acme touched globex: %v", ids)
	}
}

func TestJournal_TwoReplicasAppendingAndTrimmingCountEachRequestOnce(t *testing.T) {
	a, url := openStore(t)
	b, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const perReplica, keep = 150, 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	for r, s := range []*Store{a, b} {
		for w := range 3 { // a few writers on each replica
			wg.Go(func() {
				for i := range perReplica / 3 {
					status := 201
					if i%5 == 0 {
						status = 400
					}
					rec := journalRecord(fmt.Sprintf("req_%d_%d_%d", r, w, i), "createPayment", status)
					if err := s.AppendRequest(context.Background(), "acme", rec); err != nil {
						errs <- err
						return
					}
					if i%7 == 0 {
						if err := s.TrimRequests(context.Background(), "acme", keep); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.TrimRequests(t.Context(), "acme", keep); err != nil {
		t.Fatal(err)
	}
	ids, total := listIDs(t, a, "acme", paymock.JournalQuery{Keep: keep, Limit: 100})
	if len(ids) != keep || total != keep {
		t.Errorf("listed %d of %d, want the newest %d", len(ids), total, keep)
	}
	var rows int
	if err := a.pool.QueryRow(t.Context(), `SELECT count(*) FROM request_journal`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != keep {
		t.Errorf("%d rows kept, want %d", rows, keep)
	}
	calls, violations := callsOf(t, b, "acme")
	if n := calls["createPayment 201"] + calls["createPayment 400"]; n != 2*perReplica || calls["createPayment 400"] != 2*3*10 {
		t.Errorf("counted %v, want %d calls, %d refused", calls, 2*perReplica, 2*3*10)
	}
	if violations["createPayment currency/parameter_invalid"] != 2*3*10 {
		t.Errorf("violations %v", violations)
	}
}

func TestJournal_Conformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) paymock.JournalStore {
		s, _ := openStore(t)
		return s
	})
}

func TestJournal_ConcurrentAppendsAreEachStoredOnceWithTheirViolations(t *testing.T) {
	s, _ := openStore(t)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			status := 201
			if i%4 == 0 {
				status = 400
			}
			if err := s.AppendRequest(context.Background(), "acme", journalRecord(fmt.Sprintf("req_%02d", i), "createPayment", status)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ids, total := listIDs(t, s, "acme", paymock.JournalQuery{Keep: 1000, Limit: 100})
	slices.Sort(ids)
	if total != n || len(slices.Compact(ids)) != n {
		t.Fatalf("listed %d distinct of %d, want %d", len(ids), total, n)
	}
	if _, total := listIDs(t, s, "acme", paymock.JournalQuery{Keep: 1000, Limit: 100, Violations: true}); total != n/4 {
		t.Errorf("%d requests listed with violations, want %d", total, n/4)
	}
	if _, violations := callsOf(t, s, "acme"); violations["createPayment currency/parameter_invalid"] != n/4 {
		t.Errorf("violations %v", violations)
	}
}
