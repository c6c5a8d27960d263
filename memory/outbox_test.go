// The in-memory outbox passes the outbox and event store conformance
// suites.

package memory_test

import (
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/outboxtest"
	"github.com/paymock/paymock/memory"
)

func TestOutbox_Conformance(t *testing.T) {
	outboxtest.Run(t, func(*testing.T) paymock.Outbox { return memory.NewOutbox(memory.NewPayments()) })
}

func TestOutbox_EventStoreConformance(t *testing.T) {
	outboxtest.RunEventStore(t, func(*testing.T) paymock.Backend { return memory.New() })
}
