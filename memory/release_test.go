// The conformance suite of the Backend's release, on the memory backend:
// only this process can reach what it holds, so a released merchant's
// state goes.

package memory_test

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/releasetest"
	"github.com/paymock/paymock/memory"
)

func TestRelease_Conformance(t *testing.T) {
	releasetest.Run(t, func(*testing.T) paymock.Backend { return memory.New() }, false)
}
