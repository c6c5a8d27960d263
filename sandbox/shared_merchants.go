// Wiring of runtime API keys, webhook endpoints and open-mode merchants
// to a store every replica shares.

package sandbox

import "github.com/paymock/paymock"

// shareMerchants lets cfg keep what a shared store can keep for every
// replica; with the memory store it changes nothing.
func shareMerchants(store paymock.Store, cfg *paymock.MerchantsConfig) {}
