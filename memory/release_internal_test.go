// Tests that a merchant the process released leaves nothing behind in the
// payments store: open mode makes a merchant of every token, so what one
// leaves adds up without end.

package memory

import (
	"fmt"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/storetest"
)

// heldBooks counts the books the store holds, by name and by number; the
// second is what the sweep of due work walks.
func heldBooks(s *Payments) (named, numbered int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, b := range s.byNum {
		if b != nil {
			numbered++
		}
	}
	return len(s.books), numbered
}

// TestRelease_LeavesNoBookOfTheMerchant churns merchants through the
// backend's release, as eviction at the merchant cap and the idle TTL do,
// in the states a merchant can be released in. None may keep a book, and
// the slots the sweep walks stay as many as the books ever held at once.
func TestRelease_LeavesNoBookOfTheMerchant(t *testing.T) {
	const merchants = 200
	for _, tc := range []struct {
		name string
		// use leaves the merchant as it is when released.
		use func(t *testing.T, b paymock.Backend, merchantID string)
	}{
		{"emptied by a reset, then evicted", func(t *testing.T, b paymock.Backend, m string) {
			storetest.Fill(t, b.Payments, m, 1)
			if err := b.Payments.Reset(t.Context(), m); err != nil {
				t.Fatal(err)
			}
		}},
		{"holding pending payments and a customer, then forgotten", func(t *testing.T, b paymock.Backend, m string) {
			storetest.Fill(t, b.Payments, m, 3)
			if _, err := b.Payments.CustomerID(t.Context(), m, "jane@example.com", func() string { return "cus_" + m }, -1); err != nil {
				t.Fatal(err)
			}
		}},
		{"with a customer only", func(t *testing.T, b paymock.Backend, m string) {
			if _, err := b.Payments.CustomerID(t.Context(), m, "jane@example.com", func() string { return "cus_" + m }, -1); err != nil {
				t.Fatal(err)
			}
		}},
		{"with nothing ever stored", func(*testing.T, paymock.Backend, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New()
			s := b.Payments.(*Payments)
			storetest.Fill(t, s, "kept", 2) // a merchant still held, throughout
			for i := range merchants {
				m := fmt.Sprintf("key_churned_%04d", i)
				tc.use(t, b, m)
				if err := b.Release(t.Context(), m); err != nil {
					t.Fatal(err)
				}
			}
			if named, numbered := heldBooks(s); named != 1 || numbered != 1 {
				t.Errorf("after %d merchants released: %d books by name, %d by number; want only the kept merchant's", merchants, named, numbered)
			}
			s.mu.RLock()
			slots := len(s.byNum)
			s.mu.RUnlock()
			if slots > 2 {
				t.Errorf("%d book slots for at most 2 books held at once", slots)
			}
			if _, total, err := s.List(t.Context(), "kept", 0, 10); err != nil || total != 2 {
				t.Errorf("the kept merchant lists %d payments, %v; want 2", total, err)
			}
		})
	}
}
