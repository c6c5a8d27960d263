// Helpers of the registry's tests: registries over the memory store.

package merchants

import (
	"context"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

// newRegistry is New over a new memory store unless cfg names one.
func newRegistry(cfg Config) (*Registry, error) {
	if cfg.Store == nil {
		cfg.Store = memory.NewMerchants()
	}
	return New(context.Background(), cfg)
}

// newFromList is a registry of the configured merchants list (open mode
// when it is empty) over a new memory store.
func newFromList(list []paymock.Merchant) (*Registry, error) {
	return newRegistry(Config{Merchants: list})
}
