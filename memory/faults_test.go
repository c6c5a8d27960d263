// The conformance suite of fault rules, and the cost of a call no rule is
// for, on the memory backend.

package memory_test

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/faultstest"
	"github.com/paymock/paymock/memory"
)

func TestFaultRules_Conformance(t *testing.T) {
	faultstest.Run(t, func(*testing.T) paymock.FaultRules { return memory.NewFaultRules() })
}
