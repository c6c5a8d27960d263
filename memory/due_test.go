// The in-memory due work runs the conformance suite.

package memory

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/duetest"
)

func TestDue_Conformance(t *testing.T) {
	duetest.Run(t, func(*testing.T) paymock.Backend { return New() })
}
