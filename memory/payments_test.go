// The payments conformance suite, run against the memory store.

package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/storetest"
	"github.com/paymock/paymock/memory"
)

var _ paymock.Store = (*memory.Payments)(nil)

func TestPayments_Conformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) paymock.Store { return memory.NewPayments() })
}

// BenchmarkPayments_List shows that a page costs the same whatever the
// number of payments stored.
func BenchmarkPayments_List(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			s := memory.NewPayments()
			storetest.Fill(b, s, "acme", n)
			storetest.Fill(b, s, "globex", 10)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				items, _, err := s.List(ctx, "acme", 50, 10)
				if err != nil || len(items) != 10 {
					b.Fatalf("List: %d items, %v", len(items), err)
				}
			}
		})
	}
}
