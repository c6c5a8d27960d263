// The conformance suite of the Backend's release, on PostgreSQL: replicas
// share the database, so a merchant one replica released stays whole for
// the others.

package postgres

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/releasetest"
)

func TestRelease_Conformance(t *testing.T) {
	releasetest.Run(t, func(t *testing.T) paymock.Backend {
		s, _ := openStore(t)
		return s.Backend()
	}, true)
}
