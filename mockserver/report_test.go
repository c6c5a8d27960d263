// Tests of the report's forms: resets.

package mockserver

import (
	"strings"
	"testing"

	"github.com/paymock/paymock/contract"
)

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
