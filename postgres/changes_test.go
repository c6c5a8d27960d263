// What a replica keeps of keys, fault rules, clocks and customers is never
// served once it has heard that another replica changed them.

package postgres_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/merchantstest"
	"github.com/paymock/paymock/postgres"
)

func TestChanges_AChangeOnOneReplicaIsSeenOnAnotherOnceHeard(t *testing.T) {
	tests := []struct {
		name string
		// read reads on B what is kept, before and after the change
		read func(t *testing.T, b *postgres.Store) string
		// change changes it on A
		change func(t *testing.T, a *postgres.Store)
	}{
		{
			name: "a key revoked",
			read: func(t *testing.T, b *postgres.Store) string {
				k, ok, err := b.Key(t.Context(), sha256.Sum256([]byte("sk_test_changes")))
				if err != nil || !ok {
					t.Fatalf("Key: %v, %v", ok, err)
				}
				if k.Revoked {
					return "revoked"
				}
				return "live"
			},
			change: func(t *testing.T, a *postgres.Store) {
				if ok, err := a.RevokeKey(t.Context(), "acme", "ak_sk_test_changes", 10); !ok || err != nil {
					t.Fatalf("RevokeKey: %v, %v", ok, err)
				}
			},
		},
		{
			name: "a fault rule added",
			read: func(t *testing.T, b *postgres.Store) string {
				rs, err := b.Candidates(t.Context(), "acme", paymock.FaultTargetAPI, "retrievePayment")
				if err != nil {
					t.Fatal(err)
				}
				out := ""
				for _, r := range rs {
					out += r.Rule.ID + " "
				}
				return out
			},
			change: func(t *testing.T, a *postgres.Store) {
				r := paymock.FaultRule{ID: "flt_changes", Target: paymock.FaultTargetAPI, Operation: "retrievePayment", Status: 500}
				if err := a.AddRule(t.Context(), "acme", r, 10); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a clock advanced",
			read: func(t *testing.T, b *postgres.Store) string {
				c, ok, err := b.Clock(t.Context(), "acme")
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					return "none"
				}
				return c.Offset.String()
			},
			change: func(t *testing.T, a *postgres.Store) {
				if _, err := a.AdvanceClock(t.Context(), "acme", time.Hour, paymock.ClockState{Mode: paymock.ClockReal}); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a merchant reset, its customers with it",
			read: func(t *testing.T, b *postgres.Store) string {
				id, err := b.CustomerID(t.Context(), "acme", "jane@example.com", func() string { return "cus_" + time.Now().Format("150405.000000000") }, -1)
				if err != nil {
					t.Fatal(err)
				}
				return id
			},
			change: func(t *testing.T, a *postgres.Store) {
				if err := a.Reset(t.Context(), "acme"); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stores, _ := openShared(t, 2)
			a, b := stores[0], stores[1]
			if err := a.AddKey(t.Context(), merchantstest.StoredKey("acme", "sk_test_changes", paymock.KeyCreated), 10); err != nil {
				t.Fatal(err)
			}
			// B listens from its start; reading twice keeps the value.
			before := tt.read(t, b)
			if again := tt.read(t, b); again != before {
				t.Fatalf("read twice on B: %q then %q", before, again)
			}
			tt.change(t, a)
			if err := b.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			if after := tt.read(t, b); after == before {
				t.Errorf("on B after the change on A was heard: still %q", after)
			}
			// A dropped its own copy at once, without a Sync.
			if onA, onB := tt.read(t, a), tt.read(t, b); onA != onB {
				t.Errorf("after the change: A reads %q, B %q", onA, onB)
			}
		})
	}
}
