// Tests of the shared request journal: the conformance suite, and what
// only a database shared by replicas has (trims deleting rows, appends
// and trims from two replicas at once).

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
					rec := journaltest.Record(fmt.Sprintf("req_%d_%d_%d", r, w, i), "createPayment", status)
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
	ids, total := journaltest.IDs(t, a, "acme", paymock.JournalQuery{Keep: keep, Limit: 100})
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
	calls, violations := journaltest.Calls(t, b, "acme")
	if n := calls["createPayment 201"] + calls["createPayment 400"]; n != 2*perReplica || calls["createPayment 400"] != 2*3*10 {
		t.Errorf("counted %v, want %d calls, %d refused", calls, 2*perReplica, 2*3*10)
	}
	if violations["createPayment currency/parameter_invalid"] != 2*3*10 {
		t.Errorf("violations %v", violations)
	}
}

// TestJournal_TrimsOfOneMerchantOnTwoReplicasNeverDeadlock: twelve
// writers on two replicas trimming one merchant's journal every third
// append. Before the trim locked its rows in seq order, two trims could
// each hold rows the other wanted, and PostgreSQL cancelled one
// ("deadlock detected") in two runs of six.
func TestJournal_TrimsOfOneMerchantOnTwoReplicasNeverDeadlock(t *testing.T) {
	a, url := openStore(t)
	b, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const writers, each = 6, 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for r, s := range []*Store{a, b} {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					rec := journaltest.Record(fmt.Sprintf("req_%d_%d_%d", r, w, i), "createPayment", 201)
					if err := s.AppendRequest(context.Background(), "acme", rec); err != nil {
						errs <- err
						continue
					}
					if i%3 == 0 {
						if err := s.TrimRequests(context.Background(), "acme", 20); err != nil {
							errs <- err
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
	if calls, _ := journaltest.Calls(t, a, "acme"); calls["createPayment 201"] != 2*writers*each {
		t.Errorf("counted %v, want %d calls", calls, 2*writers*each)
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
			if err := s.AppendRequest(context.Background(), "acme", journaltest.Record(fmt.Sprintf("req_%02d", i), "createPayment", status)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ids, total := journaltest.IDs(t, s, "acme", paymock.JournalQuery{Keep: 1000, Limit: 100})
	slices.Sort(ids)
	if total != n || len(slices.Compact(ids)) != n {
		t.Fatalf("listed %d distinct of %d, want %d", len(ids), total, n)
	}
	if _, total := journaltest.IDs(t, s, "acme", paymock.JournalQuery{Keep: 1000, Limit: 100, Violations: true}); total != n/4 {
		t.Errorf("%d requests listed with violations, want %d", total, n/4)
	}
	if _, violations := journaltest.Calls(t, s, "acme"); violations["createPayment currency/parameter_invalid"] != n/4 {
		t.Errorf("violations %v", violations)
	}
}

// BenchmarkJournal_Append is one request's entry appended alone, as a
// lone request's is: one INSERT.
func BenchmarkJournal_Append(b *testing.B) {
	s, url := openStore(b)
	ctx := context.Background()
	r := paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_bench", At: "2026-11-24T10:08:31Z", Method: "GET",
		Path: "/api/v1/payments/pay_7CbYlc2JOWfKTDIFpZpiUhD4", Operation: "retrievePayment", Status: 200,
		DurationMS: 1.25, Variant: "default"}, Counted: true}
	defer reportServerCPU(b, url)()
	for b.Loop() {
		if err := s.AppendRequest(ctx, "acme", r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestJournal_ViolationsMadeUpWithEveryRequestAddNoRowsPastTheBound: a
// client that sends a new unknown field with every request, trimmed
// again and again, leaves one row per violation told apart and one for
// the rest, whatever it sends.
func TestJournal_ViolationsMadeUpWithEveryRequestAddNoRowsPastTheBound(t *testing.T) {
	s, _ := openStore(t)
	const requests, each = 40, 10
	for i := range requests {
		r := journaltest.Record(fmt.Sprintf("req_%d", i), "createPayment", 400)
		r.Entry.Violations = nil
		for k := range each {
			r.Entry.Violations = append(r.Entry.Violations, paymock.Violation{Param: fmt.Sprintf("x%d_%d", i, k),
				Code: "parameter_unknown", Message: "not a field"})
		}
		if err := s.AppendRequest(t.Context(), "acme", r); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := s.TrimRequests(t.Context(), "acme", 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.TrimRequests(t.Context(), "acme", 0); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM request_journal_violations WHERE merchant_id = 'acme'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != paymock.MaxDistinctViolations+1 {
		t.Errorf("%d rows of violations kept for %d distinct made, want %d", rows, requests*each, paymock.MaxDistinctViolations+1)
	}
	calls, violations := journaltest.Calls(t, s, "acme")
	if calls["violating"] != requests || violations["createPayment (unlisted)"] != requests*each-paymock.MaxDistinctViolations {
		t.Errorf("counted %v and %d unlisted, want %d violating and %d unlisted", calls, violations["createPayment (unlisted)"],
			requests, requests*each-paymock.MaxDistinctViolations)
	}
}
