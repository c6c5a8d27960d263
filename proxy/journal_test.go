// Tests of the proxy's journal: its counters stay bounded.

package proxy

import (
	"fmt"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

func TestJournal_EverNewViolationsKeepAtMostFiftyPerOperation(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		calls        int
		wantListed   int
		wantUnlisted int
	}{
		// Each call makes one violation every call makes, and one new.
		{"under the bound", 10, 11, 0},
		{"one past the bound", 50, 50, 1},
		{"far past the bound", 1000, 50, 951},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJournal(docs.Service, 10)
			for i := range tc.calls {
				// A client that sends a field of a new name every time,
				// and one it always gets wrong.
				j.Record("c", Entry{Operation: "createPayment", Status: 400, Violations: []Violation{
					{Side: SideClient, Code: "parameter_missing", Param: "amount", Message: "amount is required"},
					{Side: SideClient, Code: "parameter_unknown", Param: fmt.Sprintf("f%d", i), Message: "not a known field"},
				}})
			}
			if n := len(j.callers["c"].ops["createPayment"].Violations); n > paymock.MaxDistinctViolations {
				t.Errorf("%d distinct violations kept, want at most %d", n, paymock.MaxDistinctViolations)
			}
			r := j.Report("c")
			for _, op := range r.Operations {
				if op.OperationID != "createPayment" {
					continue
				}
				listed := 0
				for _, v := range op.Violations {
					listed++
					if v.Param == "amount" && v.Count != tc.calls {
						t.Errorf("the violation of every call counted %d times, want %d", v.Count, tc.calls)
					}
				}
				if listed != tc.wantListed || op.UnlistedViolations != tc.wantUnlisted || op.ViolatingCalls != tc.calls {
					t.Errorf("listed %d, unlisted %d, violating calls %d; want %d, %d, %d", listed, op.UnlistedViolations, op.ViolatingCalls, tc.wantListed, tc.wantUnlisted, tc.calls)
				}
			}
		})
	}
}
