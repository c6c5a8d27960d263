// Wiring of runtime API keys, webhook endpoints and open-mode merchants
// to a store every replica shares.

package sandbox

import "github.com/paymock/paymock"

// shareMerchants lets cfg keep what a shared store can keep for every
// replica; with the memory store it changes nothing. A store that keeps
// run-time keys, endpoints and open-mode merchants (package postgres does)
// gets them, so that any replica authenticates a key another created and
// delivers to an endpoint another added; configured merchants stay in
// memory, the same on every replica.
func shareMerchants(store paymock.Store, cfg *paymock.MerchantsConfig) {
	if ms, ok := store.(paymock.MerchantStore); ok && cfg.Store == nil {
		cfg.Store = ms
	}
}
