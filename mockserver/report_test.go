// Tests of the report's forms: the calls of no operation, and resets.

package mockserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

func TestListUnmatched_GroupsTheServiceCallsOfNoOperation(t *testing.T) {
	notFound := func(method, path string) JournalEntry {
		return JournalEntry{Method: method, Path: path, Status: 404,
			Violations: []paymock.Violation{{Code: "route_not_found", Message: "no such route: " + method + " " + path}}}
	}
	entries := []JournalEntry{
		notFound("GET", "/api/v1/payment"),
		{Method: "GET", Path: "/api/v1/payments", Operation: "listPayments", Status: 400,
			Violations: []paymock.Violation{{Param: "page", Code: "parameter_invalid", Message: "page"}}},
		notFound("GET", "/_sandbox/nope"), // the control API's: not counted
		notFound("POST", "/api/v1/refunds"),
		notFound("GET", "/api/v1/payment"),
	}
	got := listUnmatched(entries)
	want := []ReportUnmatched{
		{Method: "GET", Path: "/api/v1/payment", Status: 404, Code: "route_not_found", Message: "no such route: GET /api/v1/payment", Count: 2},
		{Method: "POST", Path: "/api/v1/refunds", Status: 404, Code: "route_not_found", Message: "no such route: POST /api/v1/refunds", Count: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listUnmatched =\n%v\nwant\n%v", got, want)
	}

	var many []JournalEntry
	for i := range 2 * maxUnmatchedListed {
		many = append(many, notFound("GET", fmt.Sprintf("/api/v1/x%d", i)))
	}
	if got := listUnmatched(many); len(got) != maxUnmatchedListed {
		t.Errorf("listUnmatched of %d paths lists %d, want at most %d", len(many), len(got), maxUnmatchedListed)
	}
}

func TestJUnit_EveryViolatingCallIsAFailure(t *testing.T) {
	r := Report{Calls: 4, ViolatingCalls: 3, UnmatchedCalls: 3, Operations: []ReportOperation{{
		OperationID: "listPayments", Method: "GET", Path: "/api/v1/payments", Calls: 1,
		Statuses: []ReportStatus{{Status: 200, Declared: true, Count: 1}},
	}}, Unmatched: []ReportUnmatched{{Method: "GET", Path: "/api/v1/payment", Status: 404, Code: "route_not_found",
		Message: "no such route: GET /api/v1/payment; did you mean /api/v1/payments?", Count: 2}}}
	b, err := JUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{
		`<testsuites name="paymock" tests="2" failures="1">`,
		`<testcase name="calls that matched no operation" classname="paymock.contract">`,
		`<failure message="GET /api/v1/payment: route_not_found" type="route_not_found">no such route: GET /api/v1/payment; did you mean /api/v1/payments? (2×)</failure>`,
		// The third, trimmed from the journal, is a failure too.
		`<failure message="calls that matched no operation, not listed by path" type="route_not_found">1 call matched no operation`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, doc)
		}
	}
}

func TestFillReport_ListsAResetLast(t *testing.T) {
	var r Report
	counts := NewOperationCounts()
	counts.Calls, counts.Statuses[ResetStatus], counts.Statuses[200] = 2, 1, 1
	FillReport(&r, []contract.Operation{{ID: "listPayments", Method: "GET", Path: "/api/v1/payments", Statuses: []int{200}}},
		map[string]*OperationCounts{"listPayments": counts})
	b, err := JUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "statuses seen: 200 reset") {
		t.Errorf("JUnit does not name the reset last:\n%s", b)
	}
}

// TestFillReport_ListsTheMostFrequentDistinctViolationsAndCountsTheRest:
// counts that tell apart more violations than a report lists (a proxy's)
// list the most frequent, and the others' calls are counted as unlisted,
// with those the store counted so already; JUnit says so in a failure.
func TestFillReport_ListsTheMostFrequentDistinctViolationsAndCountsTheRest(t *testing.T) {
	const most = paymock.MaxDistinctViolations
	tests := []struct {
		name         string
		kinds        int // distinct violations counted, kind k made k+1 times
		unlisted     int // counted unlisted already
		wantListed   int
		wantUnlisted int
	}{
		{"as many as are listed", most, 0, most, 0},
		{"one more, made least often", most + 1, 0, most, 1},
		{"ten more, and the store's unlisted", most + 10, 7, most, 7 + 10*11/2},
		{"none apart, some unlisted", 0, 3, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counts := NewOperationCounts()
			for k := range tc.kinds {
				v := ReportViolation{Param: fmt.Sprintf("f%03d", k), Code: "parameter_unknown", Message: "not a field"}
				counts.Violations[v] = tc.kinds - k // f000 most often
				counts.ViolatingCalls += tc.kinds - k
			}
			counts.Unlisted = tc.unlisted
			counts.Calls = counts.ViolatingCalls
			var r Report
			FillReport(&r, []contract.Operation{{ID: "createPayment", Method: "POST", Path: "/api/v1/payments", Statuses: []int{400}}},
				map[string]*OperationCounts{"createPayment": counts})
			op := r.Operations[0]
			if len(op.Violations) != tc.wantListed || op.UnlistedViolations != tc.wantUnlisted {
				t.Fatalf("lists %d violations and %d unlisted, want %d and %d", len(op.Violations), op.UnlistedViolations, tc.wantListed, tc.wantUnlisted)
			}
			for i, v := range op.Violations {
				if want := fmt.Sprintf("f%03d", i); v.Param != want { // the most frequent, in order
					t.Errorf("listed #%d is %s, want %s", i, v.Param, want)
				}
			}
			b, err := JUnit(r)
			if err != nil {
				t.Fatal(err)
			}
			more := strings.Contains(string(b), `<failure message="more violations, not listed" type="more_violations">`+
				fmt.Sprint(tc.wantUnlisted)+" more violation")
			if more != (tc.wantUnlisted > 0) {
				t.Errorf("JUnit's failure for the unlisted violations: %v, want %v:\n%s", more, tc.wantUnlisted > 0, b)
			}
		})
	}
}
