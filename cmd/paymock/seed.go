// Fake payments for --fake-payments: each merchant's preloaded data, made
// from the run's seed.
package main

import (
	"context"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/fakepayments"
	"github.com/paymock/paymock/mockserver"
)

type seeder struct {
	count int
	seed  uint64
}

// newSeeder returns the seeder of --fake-payments, or nil for none.
func newSeeder(count int, seed uint64) mockserver.Seeder {
	if count == 0 {
		return nil
	}
	return seeder{count: count, seed: seed}
}

func (s seeder) Seed(_ context.Context, m *paymock.Merchant, now time.Time, publicURL string) ([]paymock.Payment, error) {
	return fakepayments.Generate(fakepayments.Config{Seed: s.seed, Merchant: m, Count: s.count, Now: now, PublicURL: publicURL})
}
