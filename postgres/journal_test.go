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
	"github.com/paymock/paymock/mockserver"
)

// journalRecord is a counted call of op answered with status; a status of
// 400 carries one violation, the contract's refusal.
func journalRecord(id, op string, status int) mockserver.JournalRecord {
	e := mockserver.JournalEntry{ID: id, At: "2026-03-14T15:09:26Z", Method: "POST", Path: "/api/v1/payments",
		Operation: op, Status: status, DurationMS: 0.125}
	r := mockserver.JournalRecord{Entry: e, Counted: true}
	if status == 400 {
		r.Entry.Violations = []paymock.Violation{{Param: "currency", Code: "parameter_invalid", Message: "currency must be one of USD, EUR"}}
		r.Violating = true
	}
	return r
}

func appendAll(t *testing.T, s *Store, merchant string, rs ...mockserver.JournalRecord) {
	t.Helper()
	for _, r := range rs {
		if err := s.AppendRequest(t.Context(), merchant, r); err != nil {
			t.Fatal(err)
		}
	}
}

func listIDs(t *testing.T, s *Store, merchant string, q mockserver.JournalQuery) ([]string, int) {
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

func TestJournal_EntriesComeBackExactlyNewestFirst(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	odd := mockserver.JournalEntry{ID: "req_odd", At: "not a time", Method: "BREW",
		// What a request can carry that text columns would refuse or
		// change: a NUL, quotes, SQL, and a duration no microsecond
		// count gives back.
		Path: "/api/v1/payments/x\x00'; DROP TABLE request_journal; --", Query: `a="b"&c=%00`,
		Operation: "", Status: 0, DurationMS: 1.0000001, Variant: "amount-string", InjectedFault: "flt_1",
		Violations: []paymock.Violation{{Code: "route_not_found", Message: "no such route \x00"}}}
	appendAll(t, s, "acme", journalRecord("req_1", "createPayment", 201), mockserver.JournalRecord{Entry: odd, Counted: true})
	appendAll(t, s, "globex", journalRecord("req_g", "listPayments", 200))

	items, total, err := s.ListRequests(ctx, "acme", mockserver.JournalQuery{Keep: 100, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(items) != 2 || items[1].ID != "req_1" {
		t.Fatalf("acme's journal: %d, %+v", total, items)
	}
	got := items[0]
	if got.Path != odd.Path || got.Query != odd.Query || got.At != odd.At || got.Method != odd.Method ||
		got.DurationMS != odd.DurationMS || got.Variant != odd.Variant || got.InjectedFault != odd.InjectedFault ||
		!slices.Equal(got.Violations, odd.Violations) {
		t.Errorf("stored %+v\nread   %+v", odd, got)
	}
	if ids, total := listIDs(t, s, "nobody", mockserver.JournalQuery{Keep: 100, Limit: 10}); len(ids) != 0 || total != 0 {
		t.Errorf("a merchant with no requests: %v, %d", ids, total)
	}
}

func TestJournal_ListsFilterAndPageTheNewestKeep(t *testing.T) {
	s, _ := openStore(t)
	for i := range 10 {
		status := 201
		if i%3 == 0 {
			status = 400
		}
		appendAll(t, s, "acme", journalRecord(fmt.Sprint("req_", i), "createPayment", status))
	}
	for _, tc := range []struct {
		name  string
		q     mockserver.JournalQuery
		want  []string
		total int
	}{
		{"all, newest first", mockserver.JournalQuery{Keep: 100, Limit: 100},
			[]string{"req_9", "req_8", "req_7", "req_6", "req_5", "req_4", "req_3", "req_2", "req_1", "req_0"}, 10},
		{"a page", mockserver.JournalQuery{Keep: 100, Offset: 2, Limit: 3}, []string{"req_7", "req_6", "req_5"}, 10},
		{"past the last", mockserver.JournalQuery{Keep: 100, Offset: 50, Limit: 3}, []string{}, 10},
		{"only the newest keep", mockserver.JournalQuery{Keep: 4, Limit: 100}, []string{"req_9", "req_8", "req_7", "req_6"}, 4},
		{"by status", mockserver.JournalQuery{Keep: 100, Status: 400, Limit: 100}, []string{"req_9", "req_6", "req_3", "req_0"}, 4},
		{"with violations, among the newest keep", mockserver.JournalQuery{Keep: 5, Violations: true, Limit: 100}, []string{"req_9", "req_6"}, 2},
		{"a status never answered", mockserver.JournalQuery{Keep: 100, Status: 404, Limit: 100}, []string{}, 0},
	} {
		ids, total := listIDs(t, s, "acme", tc.q)
		if !slices.Equal(ids, tc.want) || total != tc.total {
			t.Errorf("%s: %v (%d), want %v (%d)", tc.name, ids, total, tc.want, tc.total)
		}
	}
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
	appendAll(t, s, "acme", mockserver.JournalRecord{Entry: mockserver.JournalEntry{ID: "req_ctl", Operation: "getReport", Status: 200}})
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
	ids, total := listIDs(t, s, "acme", mockserver.JournalQuery{Keep: 100, Limit: 100})
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
	if ids, _ := listIDs(t, s, "globex", mockserver.JournalQuery{Keep: 100, Limit: 100}); !slices.Equal(ids, []string{"req_g"}) {
		t.Errorf("trimming acme touched globex: %v", ids)
	}
}

func TestJournal_CountsUnmatchedInjectedAndLongViolationsApart(t *testing.T) {
	s, _ := openStore(t)
	ctx := t.Context()
	long := paymock.Violation{Param: "description", Code: "parameter_invalid", Message: string(make([]byte, 9000)) + "\u00e9"}
	refusedLong := journalRecord("req_long", "createPayment", 400)
	refusedLong.Entry.Violations = []paymock.Violation{long, {Code: "parameter_invalid", Message: "no param"}}
	injected := journalRecord("req_inj", "createPayment", 503)
	injected.Entry.InjectedFault = "flt_1"
	unmatched := journalRecord("req_404", "", 404)
	unmatched.Violating = true
	unmatched.Entry.Violations = []paymock.Violation{{Code: "route_not_found", Message: "no such route"}}
	for round := range 2 { // once counted as rows, once as trimmed counts
		appendAll(t, s, "acme", refusedLong, injected, unmatched)
		if round == 0 {
			if err := s.TrimRequests(ctx, "acme", 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := s.CountRequests(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]int{}
	for _, cc := range c.Calls {
		byKey[fmt.Sprintf("%q %d violating=%v injected=%v", cc.Operation, cc.Status, cc.Violating, cc.Injected)] += cc.Calls
	}
	want := map[string]int{
		`"createPayment" 400 violating=true injected=false`: 2,
		`"createPayment" 503 violating=false injected=true`: 2,
		`"" 404 violating=true injected=false`:              2,
	}
	if fmt.Sprint(byKey) != fmt.Sprint(want) {
		t.Errorf("calls %v\nwant  %v", byKey, want)
	}
	// The unmatched call's violation has no operation to count under.
	got := map[paymock.Violation]int{}
	for _, vc := range c.Violations {
		if vc.Operation != "createPayment" {
			t.Errorf("a violation counted under %q", vc.Operation)
		}
		got[vc.Violation] += vc.Calls
	}
	if len(got) != 2 || got[long] != 2 || got[paymock.Violation{Code: "parameter_invalid", Message: "no param"}] != 2 {
		t.Errorf("violations %v", got)
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
	ids, total := listIDs(t, a, "acme", mockserver.JournalQuery{Keep: keep, Limit: 100})
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

func TestJournal_RefusesANegativeWindow(t *testing.T) {
	s, _ := openStore(t)
	if err := s.TrimRequests(t.Context(), "acme", -1); err == nil {
		t.Error("trimming to -1 succeeded")
	}
	if _, _, err := s.ListRequests(t.Context(), "acme", mockserver.JournalQuery{Keep: 10, Offset: -1, Limit: 10}); err == nil {
		t.Error("listing from -1 succeeded")
	}
}
