// The conformance cases of customers and of updating a payment in place.

package storetest

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/paymock/paymock"
)

func customerID(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	n := 0
	newID := func() string { n++; return "cus_" + strconv.Itoa(n) }
	get := func(merchant, email string) string {
		t.Helper()
		id, err := s.CustomerID(ctx, merchant, email, newID, -1)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	jane := get("acme", "jane@example.com")
	for _, tc := range []struct {
		name, merchant, email string
		same                  bool
	}{
		{"same email", "acme", "jane@example.com", true},
		{"upper-case email", "acme", "Jane@Example.COM", true},
		{"other email", "acme", "john@example.com", false},
		{"other merchant", "globex", "jane@example.com", false},
	} {
		got := get(tc.merchant, tc.email)
		if (got == jane) != tc.same {
			t.Errorf("%s: CustomerID = %s, jane's is %s; want same=%v", tc.name, got, jane, tc.same)
		}
	}
	if g1, g2 := get("globex", "jane@example.com"), get("globex", "JANE@example.com"); g1 != g2 {
		t.Errorf("globex's jane has two ids: %s, %s", g1, g2)
	}
	if n != 3 {
		t.Errorf("newID called %d times, want 3 (acme jane, acme john, globex jane)", n)
	}
}

func update(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	errNo := errors.New("refused")
	Fill(t, s, "acme", 3)
	Fill(t, s, "globex", 1)
	target := StoredPayment("acme", 1).ID
	// The cases run in order on one store: each expects the status the
	// ones before it left.
	for _, tc := range []struct {
		name       string
		merchant   string
		id         string
		fn         func(p *paymock.Payment) error
		wantErr    error
		wantStatus paymock.Status // as stored afterwards
	}{
		{"failing fn changes nothing", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return errNo }, errNo, paymock.StatusPending},
		{"another merchant's payment", "globex", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"unknown merchant", "initech", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"unknown id", "acme", "pay_nope",
			func(p *paymock.Payment) error { p.Status = paymock.StatusFailed; return nil }, paymock.ErrNotFound, paymock.StatusPending},
		{"applies the change", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusCompleted; return nil }, nil, paymock.StatusCompleted},
		{"failing fn after a change keeps the change", "acme", target,
			func(p *paymock.Payment) error { p.Status = paymock.StatusExpired; return errNo }, errNo, paymock.StatusCompleted},
	} {
		got, err := s.Update(ctx, tc.merchant, tc.id, tc.fn)
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: Update error = %v, want %v", tc.name, err, tc.wantErr)
		}
		if tc.wantErr == nil && got.Status != tc.wantStatus {
			t.Errorf("%s: Update returned status %s, want %s", tc.name, got.Status, tc.wantStatus)
		}
		stored, _ := s.Get(ctx, "acme", target)
		if stored.Status != tc.wantStatus {
			t.Errorf("%s: stored status = %s, want %s", tc.name, stored.Status, tc.wantStatus)
		}
		if errors.Is(tc.wantErr, errNo) && got.Status != tc.wantStatus {
			t.Errorf("%s: failed Update returned %s, want the unchanged payment", tc.name, got.Status)
		}
	}
}

func updateKeepsIdentity(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 3)
	id := StoredPayment("acme", 0).ID
	got, err := s.Update(ctx, "acme", id, func(p *paymock.Payment) error {
		p.ID = "pay_other"
		p.MerchantID = "globex"
		p.Amount = 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.MerchantID != "acme" || got.Amount != 1 {
		t.Errorf("Update = %s/%s/%d, want %s/acme/1", got.ID, got.MerchantID, got.Amount, id)
	}
	if _, err := s.Get(ctx, "acme", "pay_other"); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("fn renamed the payment: %v", err)
	}
	if _, total, _ := s.List(ctx, "globex", 0, 10); total != 0 {
		t.Errorf("fn moved the payment to another merchant")
	}
	if p, err := s.Locate(ctx, id); err != nil || p.MerchantID != "acme" || p.Amount != 1 {
		t.Errorf("Locate after update = %s/%d, %v", p.MerchantID, p.Amount, err)
	}
	// An update does not make a payment newer in the list.
	items, _, _ := s.List(ctx, "acme", 0, 10)
	if len(items) != 3 || ids(items)[2] != id {
		t.Errorf("list order after update = %v", ids(items))
	}
}

func concurrentUpdates(t *testing.T, s paymock.Store) {
	ctx := t.Context()
	Fill(t, s, "acme", 1)
	id := StoredPayment("acme", 0).ID
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := s.Update(ctx, "acme", id, func(p *paymock.Payment) error { p.Amount++; return nil }); err != nil {
					t.Error(err)
				}
				if _, err := s.Get(ctx, "acme", id); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	p, _ := s.Get(ctx, "acme", id)
	if want := StoredPayment("acme", 0).Amount + 800; p.Amount != want {
		t.Errorf("amount after 800 increments = %d, want %d (lost updates)", p.Amount, want)
	}
}
