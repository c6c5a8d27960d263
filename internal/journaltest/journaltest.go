// Package journaltest is the conformance suite of paymock.JournalStore:
// every backend runs the same tests through Run, so that the request
// journal lists, bounds and counts the same on memory and on PostgreSQL.
package journaltest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/paymock/paymock"
)

// Run runs the suite. open returns an empty store for one subtest; it
// registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.JournalStore) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s paymock.JournalStore)
	}{
		{"EntriesComeBackExactlyNewestFirst", entriesComeBackExactly},
		{"ListsFilterAndPageTheNewestKeep", listsFilterAndPage},
		{"TrimKeepsTheNewestAndCountsEveryRequestOnce", trimKeepsNewest},
		{"TrimToALargerSizeKeepsOrder", trimLarger},
		{"CountsUnmatchedInjectedAndLongViolationsApart", countsApart},
		{"TellsApartTheFirstDistinctViolationsAndCountsTheRestTogether", boundsDistinctViolations},
		{"ConcurrentAppendsAndTrimsCountEachRequestOnce", concurrentAppends},
		{"MerchantsAreIsolated", merchantsIsolated},
		{"ForgetLeavesOtherMerchantsAlone", forgetLeavesOthers},
		{"RefusesANegativeWindow", refusesNegative},
		{"ReplaceTakesTheEntrysPlaceAndItsCounts", replaceTakesPlace},
		{"ReplaceOfARequestNotHeldChangesNothing", replaceNotHeld},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// Record is a counted call of op answered with status; a status of
// 400 carries one violation, the contract's refusal.
func Record(id, op string, status int) paymock.JournalRecord {
	e := paymock.JournalEntry{ID: id, At: "2026-03-14T15:09:26Z", Method: "POST", Path: "/api/v1/payments",
		Operation: op, Status: status, DurationMS: 0.125}
	r := paymock.JournalRecord{Entry: e, Counted: true}
	if status == 400 {
		r.Entry.Violations = []paymock.Violation{{Param: "currency", Code: "parameter_invalid", Message: "currency must be one of USD, EUR"}}
		r.Violating = true
	}
	return r
}

func appendAll(t *testing.T, s paymock.JournalStore, merchant string, rs ...paymock.JournalRecord) {
	t.Helper()
	for _, r := range rs {
		if err := s.AppendRequest(t.Context(), merchant, r); err != nil {
			t.Fatal(err)
		}
	}
}

// IDs lists the ids of the merchant's entries that q selects, and the
// total it matches.
func IDs(t *testing.T, s paymock.JournalStore, merchant string, q paymock.JournalQuery) ([]string, int) {
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

// Calls adds up the counted calls of CountRequests by operation and
// status ("op 201"), and the distinct violations ("op param/code") and
// those not told apart ("op (unlisted)").
func Calls(t *testing.T, s paymock.JournalStore, merchant string) (calls map[string]int, violations map[string]int) {
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
	for _, u := range c.Unlisted {
		violations[u.Operation+" (unlisted)"] += u.Violations
	}
	return calls, violations
}

func entriesComeBackExactly(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	odd := paymock.JournalEntry{ID: "req_odd", At: "not a time", Method: "BREW",
		// What a request can carry that text columns would refuse or
		// change: a NUL, quotes, SQL, and a duration no microsecond
		// count gives back.
		Path: "/api/v1/payments/x\x00'; DROP TABLE request_journal; --", Query: `a="b"&c=%00`,
		Operation: "", Status: 0, DurationMS: 1.0000001, Variant: "amount-string", InjectedFault: "flt_1",
		Violations: []paymock.Violation{{Code: "route_not_found", Message: "no such route \x00"}}}
	appendAll(t, s, "acme", Record("req_1", "createPayment", 201), paymock.JournalRecord{Entry: odd, Counted: true})
	appendAll(t, s, "globex", Record("req_g", "listPayments", 200))

	items, total, err := s.ListRequests(ctx, "acme", paymock.JournalQuery{Keep: 100, Limit: 10})
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
	if ids, total := IDs(t, s, "nobody", paymock.JournalQuery{Keep: 100, Limit: 10}); len(ids) != 0 || total != 0 {
		t.Errorf("a merchant with no requests: %v, %d", ids, total)
	}
}

func listsFilterAndPage(t *testing.T, s paymock.JournalStore) {
	for i := range 10 {
		status := 201
		if i%3 == 0 {
			status = 400
		}
		appendAll(t, s, "acme", Record(fmt.Sprint("req_", i), "createPayment", status))
	}
	for _, tc := range []struct {
		name  string
		q     paymock.JournalQuery
		want  []string
		total int
	}{
		{"all, newest first", paymock.JournalQuery{Keep: 100, Limit: 100},
			[]string{"req_9", "req_8", "req_7", "req_6", "req_5", "req_4", "req_3", "req_2", "req_1", "req_0"}, 10},
		{"a page", paymock.JournalQuery{Keep: 100, Offset: 2, Limit: 3}, []string{"req_7", "req_6", "req_5"}, 10},
		{"past the last", paymock.JournalQuery{Keep: 100, Offset: 50, Limit: 3}, []string{}, 10},
		{"only the newest keep", paymock.JournalQuery{Keep: 4, Limit: 100}, []string{"req_9", "req_8", "req_7", "req_6"}, 4},
		{"by status", paymock.JournalQuery{Keep: 100, Status: 400, Limit: 100}, []string{"req_9", "req_6", "req_3", "req_0"}, 4},
		{"with violations, among the newest keep", paymock.JournalQuery{Keep: 5, Violations: true, Limit: 100}, []string{"req_9", "req_6"}, 2},
		{"a status never answered", paymock.JournalQuery{Keep: 100, Status: 404, Limit: 100}, []string{}, 0},
	} {
		ids, total := IDs(t, s, "acme", tc.q)
		if !slices.Equal(ids, tc.want) || total != tc.total {
			t.Errorf("%s: %v (%d), want %v (%d)", tc.name, ids, total, tc.want, tc.total)
		}
	}
}

func countsApart(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	long := paymock.Violation{Param: "description", Code: "parameter_invalid", Message: string(make([]byte, 9000)) + "\u00e9"}
	refusedLong := Record("req_long", "createPayment", 400)
	refusedLong.Entry.Violations = []paymock.Violation{long, {Code: "parameter_invalid", Message: "no param"}}
	injected := Record("req_inj", "createPayment", 503)
	injected.Entry.InjectedFault = "flt_1"
	unmatched := Record("req_404", "", 404)
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

// boundsDistinctViolations: a client that makes up a new violation with
// every request (an unknown field of a new name each time) has the first
// paymock.MaxDistinctViolations of each operation told apart, in the order
// made, and the rest counted together; the calls are counted exactly all
// along, as rows, trimmed, or both.
func boundsDistinctViolations(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	const most = paymock.MaxDistinctViolations
	refused := func(id, op string, kinds ...int) paymock.JournalRecord {
		r := Record(id, op, 400)
		r.Entry.Violations = nil
		for _, k := range kinds {
			r.Entry.Violations = append(r.Entry.Violations, paymock.Violation{Param: fmt.Sprintf("f%03d", k),
				Code: "parameter_unknown", Message: fmt.Sprintf("f%03d is not a field of the request", k)})
		}
		return r
	}
	kinds := func(from, to int) []int { // from to to-1
		var out []int
		for k := from; k < to; k++ {
			out = append(out, k)
		}
		return out
	}
	// most-10 new, then 20 new of which 10 find room, then one told apart
	// and one not, and another operation's, which has room of its own.
	appendAll(t, s, "acme", refused("req_1", "createPayment", kinds(0, most-10)...),
		refused("req_2", "createPayment", kinds(most-10, most+10)...),
		refused("req_3", "createPayment", 0, most+5),
		refused("req_4", "listPayments", 1000),
		Record("req_5", "createPayment", 201))
	want := map[string]int{"createPayment (unlisted)": 11, "listPayments f1000/parameter_unknown": 1}
	for k := range most {
		want[fmt.Sprintf("createPayment f%03d/parameter_unknown", k)] = 1
	}
	want["createPayment f000/parameter_unknown"] = 2
	violating := 4
	check := func(when string) {
		t.Helper()
		calls, violations := Calls(t, s, "acme")
		if calls["violating"] != violating || calls["createPayment 400"] != violating-1 || calls["createPayment 201"] != 1 {
			t.Errorf("%s: calls %v, want %d violating", when, calls, violating)
		}
		if !maps.Equal(violations, want) {
			t.Errorf("%s: violations\n%v\nwant\n%v", when, violations, want)
		}
	}
	check("as rows")
	if err := s.TrimRequests(ctx, "acme", 3); err != nil { // req_1 and req_2 trimmed, the others rows
		t.Fatal(err)
	}
	check("partly trimmed")
	if err := s.TrimRequests(ctx, "acme", 0); err != nil {
		t.Fatal(err)
	}
	check("all trimmed")

	// No room comes back but by a correction: a new violation is
	// counted with the others, an old one apart still.
	appendAll(t, s, "acme", refused("req_6", "createPayment", most+20, 3))
	violating++
	want["createPayment (unlisted)"]++
	want["createPayment f003/parameter_unknown"]++
	check("made after the trim")
	if err := s.TrimRequests(ctx, "acme", 0); err != nil {
		t.Fatal(err)
	}
	check("that trimmed too")
	if _, violations := Calls(t, s, "globex"); len(violations) != 0 {
		t.Errorf("another merchant counts %v", violations)
	}
}

func refusesNegative(t *testing.T, s paymock.JournalStore) {
	if err := s.TrimRequests(t.Context(), "acme", -1); err == nil {
		t.Error("trimming to -1 succeeded")
	}
	if _, _, err := s.ListRequests(t.Context(), "acme", paymock.JournalQuery{Keep: 10, Offset: -1, Limit: 10}); err == nil {
		t.Error("listing from -1 succeeded")
	}
}

func trimKeepsNewest(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	for i := range 12 {
		status := 201
		if i%4 == 0 {
			status = 400
		}
		appendAll(t, s, "acme", Record(fmt.Sprint("req_", i), "createPayment", status))
		if i == 5 {
			if err := s.TrimRequests(ctx, "acme", 5); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendAll(t, s, "acme", paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_ctl", Operation: "getReport", Status: 200}})
	appendAll(t, s, "globex", Record("req_g", "createPayment", 201))
	for range 2 { // the second has nothing more to trim
		if err := s.TrimRequests(ctx, "acme", 5); err != nil {
			t.Fatal(err)
		}
	}
	ids, total := IDs(t, s, "acme", paymock.JournalQuery{Keep: 100, Limit: 100})
	if want := []string{"req_ctl", "req_11", "req_10", "req_9", "req_8"}; !slices.Equal(ids, want) || total != 5 {
		t.Errorf("after trimming to 5 listed %v (%d), want %v", ids, total, want)
	}
	// Twelve counted calls, three of them refused with one violation each,
	// whether trimmed or still listed; the control call is not counted.
	calls, violations := Calls(t, s, "acme")
	want := map[string]int{"createPayment 201": 9, "createPayment 400": 3, "violating": 3}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if violations["createPayment currency/parameter_invalid"] != 3 || len(violations) != 1 {
		t.Errorf("violations %v", violations)
	}
	if ids, _ := IDs(t, s, "globex", paymock.JournalQuery{Keep: 100, Limit: 100}); !slices.Equal(ids, []string{"req_g"}) {
		t.Errorf("trimming acme touched globex: %v", ids)
	}
}

func trimLarger(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	for i := range 7 {
		appendAll(t, s, "acme", Record(fmt.Sprint("req_", i), "createPayment", 201))
		if i == 0 {
			if err := s.TrimRequests(ctx, "acme", 3); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.TrimRequests(ctx, "acme", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.TrimRequests(ctx, "acme", 4); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, "acme", Record("req_7", "createPayment", 201), Record("req_8", "createPayment", 201))
	if err := s.TrimRequests(ctx, "acme", 4); err != nil {
		t.Fatal(err)
	}
	ids, _ := IDs(t, s, "acme", paymock.JournalQuery{Keep: 100, Limit: 100})
	if want := []string{"req_8", "req_7", "req_6", "req_5"}; !slices.Equal(ids, want) {
		t.Errorf("listed %v, want %v", ids, want)
	}
	if calls, _ := Calls(t, s, "acme"); calls["createPayment 201"] != 9 {
		t.Errorf("counted %v, want 9 calls", calls)
	}
}

func concurrentAppends(t *testing.T, s paymock.JournalStore) {
	const writers, each, keep = 4, 40, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				status := 201
				if i%5 == 0 {
					status = 400
				}
				if err := s.AppendRequest(context.Background(), "acme", Record(fmt.Sprintf("req_%d_%d", w, i), "createPayment", status)); err != nil {
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
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.TrimRequests(t.Context(), "acme", keep); err != nil {
		t.Fatal(err)
	}
	ids, total := IDs(t, s, "acme", paymock.JournalQuery{Keep: keep, Limit: 100})
	if len(ids) != keep || total != keep {
		t.Errorf("listed %d of %d, want the newest %d", len(ids), total, keep)
	}
	calls, violations := Calls(t, s, "acme")
	if calls["createPayment 201"]+calls["createPayment 400"] != writers*each || calls["createPayment 400"] != writers*each/5 {
		t.Errorf("counted %v, want %d calls, %d refused", calls, writers*each, writers*each/5)
	}
	if violations["createPayment currency/parameter_invalid"] != writers*each/5 {
		t.Errorf("violations %v", violations)
	}
}

func merchantsIsolated(t *testing.T, s paymock.JournalStore) {
	appendAll(t, s, "acme", Record("req_a1", "createPayment", 201), Record("req_a2", "createPayment", 400))
	appendAll(t, s, "globex", Record("req_g1", "listPayments", 200))
	if err := s.TrimRequests(t.Context(), "globex", 0); err != nil {
		t.Fatal(err)
	}
	if ids, _ := IDs(t, s, "acme", paymock.JournalQuery{Keep: 10, Limit: 10}); !slices.Equal(ids, []string{"req_a2", "req_a1"}) {
		t.Errorf("acme lists %v after globex was trimmed", ids)
	}
	if ids, total := IDs(t, s, "globex", paymock.JournalQuery{Keep: 10, Limit: 10}); len(ids) != 0 || total != 0 {
		t.Errorf("globex trimmed to 0 lists %v (%d)", ids, total)
	}
	calls, _ := Calls(t, s, "globex")
	if want := map[string]int{"listPayments 200": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("globex counts %v, want %v", calls, want)
	}
	if calls, _ := Calls(t, s, "nobody"); len(calls) != 0 {
		t.Errorf("a merchant with no requests counts %v", calls)
	}
}

// forgetLeavesOthers: what ForgetRequests drops of the merchant depends on
// the store (everything in memory, nothing a shared store holds), but it
// never touches another merchant.
func forgetLeavesOthers(t *testing.T, s paymock.JournalStore) {
	appendAll(t, s, "acme", Record("req_a1", "createPayment", 201))
	appendAll(t, s, "globex", Record("req_g1", "listPayments", 200))
	if err := s.ForgetRequests(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := IDs(t, s, "globex", paymock.JournalQuery{Keep: 10, Limit: 10}); !slices.Equal(ids, []string{"req_g1"}) {
		t.Errorf("globex lists %v after acme was forgotten", ids)
	}
	if ids, _ := IDs(t, s, "acme", paymock.JournalQuery{Keep: 10, Limit: 10}); len(ids) > 1 {
		t.Errorf("acme lists %v after it was forgotten", ids)
	}
	if err := s.ForgetRequests(t.Context(), "nobody"); err != nil {
		t.Errorf("forgetting a merchant with no journal: %v", err)
	}
}

func replaceTakesPlace(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	was := Record("req_2", "createPayment", 201)
	appendAll(t, s, "acme", Record("req_1", "createPayment", 201), was, Record("req_3", "listPayments", 200))
	appendAll(t, s, "globex", Record("req_2", "createPayment", 201)) // ids are the merchant's own

	// The answer turned out a refusal: the entry says so, in its place,
	// and is counted as one, not as what it replaced.
	bad := Record("req_2", "createPayment", 400)
	bad.Entry.DurationMS = 2.5
	if err := s.ReplaceRequest(ctx, "acme", was, bad); err != nil {
		t.Fatal(err)
	}
	items, total, err := s.ListRequests(ctx, "acme", paymock.JournalQuery{Keep: 100, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(items) != 3 || items[0].ID != "req_3" || items[1].ID != "req_2" || items[2].ID != "req_1" {
		t.Fatalf("after the replace: %d, %+v", total, items)
	}
	if got := items[1]; got.Status != 400 || got.DurationMS != 2.5 || !slices.Equal(got.Violations, bad.Entry.Violations) {
		t.Errorf("replaced entry: %+v", got)
	}
	calls, violations := Calls(t, s, "acme")
	wantCalls := map[string]int{"createPayment 201": 1, "createPayment 400": 1, "listPayments 200": 1, "violating": 1}
	wantViolations := map[string]int{"createPayment currency/parameter_invalid": 1}
	if !maps.Equal(calls, wantCalls) || !maps.Equal(violations, wantViolations) {
		t.Errorf("counts after the replace: %v %v, want %v %v", calls, violations, wantCalls, wantViolations)
	}
	if ids, _ := IDs(t, s, "acme", paymock.JournalQuery{Keep: 100, Violations: true, Limit: 10}); !slices.Equal(ids, []string{"req_2"}) {
		t.Errorf("requests with violations: %v", ids)
	}

	// And back: the violation's count goes with it.
	if err := s.ReplaceRequest(ctx, "acme", bad, was); err != nil {
		t.Fatal(err)
	}
	calls, violations = Calls(t, s, "acme")
	wantCalls = map[string]int{"createPayment 201": 2, "listPayments 200": 1}
	if !maps.Equal(calls, wantCalls) || len(violations) != 0 {
		t.Errorf("counts after replacing back: %v %v, want %v and no violation", calls, violations, wantCalls)
	}
	if calls, _ := Calls(t, s, "globex"); !maps.Equal(calls, map[string]int{"createPayment 201": 1}) {
		t.Errorf("another merchant's request of the same id: %v", calls)
	}
}

func replaceNotHeld(t *testing.T, s paymock.JournalStore) {
	ctx := t.Context()
	appendAll(t, s, "acme", Record("req_1", "createPayment", 201))
	for _, tc := range []struct {
		name, merchant string
		was, r         paymock.JournalRecord
		notFound       bool
	}{
		{"an unknown request", "acme", Record("req_9", "createPayment", 201), Record("req_9", "createPayment", 500), true},
		{"another merchant's", "globex", Record("req_1", "createPayment", 201), Record("req_1", "createPayment", 500), true},
		{"two requests' records", "acme", Record("req_1", "createPayment", 201), Record("req_2", "createPayment", 500), false},
	} {
		err := s.ReplaceRequest(ctx, tc.merchant, tc.was, tc.r)
		if err == nil || errors.Is(err, paymock.ErrNotFound) != tc.notFound {
			t.Errorf("%s: %v (want an error, ErrNotFound %v)", tc.name, err, tc.notFound)
		}
	}
	// A request trimmed away is no longer held, and its count stays.
	if err := s.TrimRequests(ctx, "acme", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceRequest(ctx, "acme", Record("req_1", "createPayment", 201), Record("req_1", "createPayment", 500)); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("a trimmed request: %v, want ErrNotFound", err)
	}
	if calls, _ := Calls(t, s, "acme"); !maps.Equal(calls, map[string]int{"createPayment 201": 1}) {
		t.Errorf("counts: %v", calls)
	}
}
