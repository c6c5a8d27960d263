// Tests that a merchant the process released leaves nothing behind in the
// payments store: open mode makes a merchant of every token, so what one
// leaves adds up without end.

package memory

import (
	"fmt"
	"runtime"
	"strings"
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
		for _, hashes := range []struct {
			name string
			one  bool
		}{{"", false}, {", every id of one hash", true}} {
			t.Run(tc.name+hashes.name, func(t *testing.T) {
				b := New()
				s := b.Payments.(*Payments)
				if hashes.one {
					// Locate then asks every book, the slots of
					// released ones included.
					s.hash = func(string) uint64 { return 7 }
				}
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
				if p, err := s.Locate(t.Context(), storetest.StoredPayment("kept", 1).ID); err != nil || p.MerchantID != "kept" {
					t.Errorf("Locate of the kept merchant's payment: %s, %v", p.MerchantID, err)
				}
				if _, err := s.Locate(t.Context(), storetest.StoredPayment("key_churned_0000", 0).ID); err == nil {
					t.Error("Locate found a released merchant's payment")
				}
			})
		}
	}
}

// waitForBookLock returns once a goroutine waits, in writable, for a
// book's lock: a state the test waits for, not a time.
func waitForBookLock(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, "(*Payments).writable") {
				return
			}
		}
		runtime.Gosched()
	}
}

// TestDrop_AWriterThatWaitedForTheDroppedBookWritesToTheNewOne: a
// create's insert or customer that found the merchant's book just before
// it was dropped, and waited for its lock, must not write into it (that
// book is read by no one, and its index map is gone), but into the
// merchant's new book, where every look-up finds what it wrote.
func TestDrop_AWriterThatWaitedForTheDroppedBookWritesToTheNewOne(t *testing.T) {
	p := storetest.StoredPayment("acme", 1)
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, s *Payments) error
		check func(t *testing.T, s *Payments)
	}{
		{"insert", func(t *testing.T, s *Payments) error { return s.Insert(t.Context(), p, -1) },
			func(t *testing.T, s *Payments) {
				if _, err := s.Get(t.Context(), "acme", p.ID); err != nil {
					t.Errorf("Get: %v", err)
				}
				if _, err := s.Locate(t.Context(), p.ID); err != nil {
					t.Errorf("Locate: %v", err)
				}
			}},
		{"customer", func(t *testing.T, s *Payments) error {
			_, err := s.CustomerID(t.Context(), "acme", "jane@example.com", func() string { return "cus_new" }, -1)
			return err
		}, func(t *testing.T, s *Payments) {
			if id, _ := s.CustomerID(t.Context(), "acme", "jane@example.com", func() string { return "cus_other" }, -1); id != "cus_new" {
				t.Errorf("the customer made while the book was dropped is %q in the new book", id)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewPayments()
			storetest.Fill(t, s, "acme", 1)
			old := s.book("acme", false)
			old.mu.Lock()
			written := make(chan error, 1)
			go func() { written <- tc.write(t, s) }()
			waitForBookLock(t)
			// Drop, its steps in turn, the book's lock held from before
			// the writer found the book.
			if s.unname("acme") != old {
				t.Fatal("unname took another book")
			}
			s.dropLocked(old)
			old.mu.Unlock()
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			s.freeNum(old)
			if named, numbered := heldBooks(s); named != 1 || numbered != 1 {
				t.Fatalf("%d books by name, %d by number; want the new one", named, numbered)
			}
			if nb := s.book("acme", false); nb == old {
				t.Fatal("the dropped book is the merchant's again")
			}
			tc.check(t, s)
		})
	}
}
