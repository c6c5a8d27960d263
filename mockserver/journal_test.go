// Unit tests of the request journal.

package mockserver

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/paymock/paymock"
)

func TestJournal_IsBounded(t *testing.T) {
	j := newJournal(5)
	for i := range 12 {
		j.record("m", JournalEntry{ID: fmt.Sprint(i), Operation: "op", Status: 200}, false, true)
	}
	items, total := j.list("m", requestFilter{}, 0, 100)
	if total != 5 || len(items) != 5 || items[0].ID != "11" || items[4].ID != "7" {
		t.Errorf("ring holds %d (%d): %v", len(items), total, items)
	}
	if len(j.merchants["m"].ring) != 5 {
		t.Errorf("ring grew to %d", len(j.merchants["m"].ring))
	}
	// The counters still cover all twelve.
	if snap := j.snapshot("m"); snap.calls != 12 || snap.ops["op"].statuses[200] != 12 {
		t.Errorf("counters %+v", snap)
	}
}

// BenchmarkJournal_Record is the cost the journal adds to each request on
// the memory store: one entry into a full ring and the counters.
func BenchmarkJournal_Record(b *testing.B) {
	j := newJournal(DefaultJournalSize)
	e := JournalEntry{ID: "req_0123456789abcdef", At: "2026-03-14T15:09:26Z", Method: "POST", Path: "/api/v1/payments",
		Operation: "createPayment", Status: 201, DurationMS: 0.125, Variant: "default"}
	for range DefaultJournalSize {
		j.record("m", e, false, true)
	}
	b.ReportAllocs()
	for b.Loop() {
		j.record("m", e, false, true)
	}
}

// TestJournal_SharedCountsAddUpAsTheRingsCounters checks that the counts
// a JournalStore returns, grouped as package postgres groups them, make
// the same report counters as the memory journal's for the same requests.
func TestJournal_SharedCountsAddUpAsTheRingsCounters(t *testing.T) {
	bad := []paymock.Violation{{Param: "currency", Code: "parameter_invalid", Message: "no"}, {Code: "x", Message: "y"}}
	records := []JournalRecord{
		{Entry: JournalEntry{Operation: "createPayment", Status: 201}, Counted: true},
		{Entry: JournalEntry{Operation: "createPayment", Status: 201}, Counted: true},
		{Entry: JournalEntry{Operation: "createPayment", Status: 400, Violations: bad}, Counted: true, Violating: true},
		{Entry: JournalEntry{Operation: "createPayment", Status: 400, Violations: bad[:1]}, Counted: true, Violating: true},
		{Entry: JournalEntry{Operation: "createPayment", Status: 503, InjectedFault: "flt_1"}, Counted: true},
		{Entry: JournalEntry{Operation: "", Status: 404, Violations: bad[1:]}, Counted: true, Violating: true},
		{Entry: JournalEntry{Operation: "", Status: 0, InjectedFault: "header"}, Counted: true},
		{Entry: JournalEntry{Operation: "listPayments", Status: 200}, Counted: true},
		{Entry: JournalEntry{Operation: "getReport", Status: 200}}, // control API: listed, not counted
	}
	j := newJournal(3) // the counters outlive the ring
	type callKey struct {
		op                  string
		status              int
		violating, injected bool
	}
	type violationKey struct {
		op string
		v  paymock.Violation
	}
	calls, violations := map[callKey]int{}, map[violationKey]int{}
	for _, r := range records {
		j.record("m", r.Entry, r.Violating, r.Counted)
		if !r.Counted {
			continue
		}
		calls[callKey{r.Entry.Operation, r.Entry.Status, r.Violating, r.Entry.InjectedFault != ""}]++
		if r.Violating && r.Entry.Operation != "" {
			for _, v := range r.Entry.Violations {
				violations[violationKey{r.Entry.Operation, v}]++
			}
		}
	}
	var counts JournalCounts
	for k, n := range calls {
		counts.Calls = append(counts.Calls, JournalCallCount{Operation: k.op, Status: k.status, Violating: k.violating, Injected: k.injected, Calls: n})
	}
	for k, n := range violations {
		counts.Violations = append(counts.Violations, JournalViolationCount{Operation: k.op, Violation: k.v, Calls: n})
	}
	got, want := countedJournal(counts), j.snapshot("m")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from the shared counts %+v\nfrom the ring        %+v", got, want)
	}
	for op, oc := range want.ops {
		if !reflect.DeepEqual(got.ops[op], oc) {
			t.Errorf("%s: shared %+v, ring %+v", op, got.ops[op], oc)
		}
	}
}
