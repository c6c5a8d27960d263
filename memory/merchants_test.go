// The merchant records' conformance suite, run against the memory store,
// and the cost of the lookup every request makes.

package memory_test

import (
	"crypto/sha256"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/merchantstest"
	"github.com/paymock/paymock/memory"
)

func TestMerchants_Conformance(t *testing.T) {
	merchantstest.Run(t, func(*testing.T) paymock.MerchantStore { return memory.NewMerchants() })
}

// TestMerchants_KeyAllocatesNothing: the registry asks Key on every
// request with a run-time key (every open-mode request).
func TestMerchants_KeyAllocatesNothing(t *testing.T) {
	ctx := t.Context()
	s := memory.NewMerchants()
	k := merchantstest.StoredKey("key_a", "sk_test_token", paymock.KeyOpen)
	// As the registry stores them: under the id of their digest.
	derived := merchantstest.StoredKey("", "sk_test_derived", paymock.KeyOpen)
	derived.MerchantID = paymock.OpenMerchantID(derived.Digest, false)
	long := merchantstest.StoredKey("", "sk_test_long", paymock.KeyOpen)
	long.MerchantID = paymock.OpenMerchantID(long.Digest, true)
	for _, k := range []paymock.StoredKey{k, derived, long} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatal(err)
		}
	}
	missing := sha256.Sum256([]byte("sk_test_nobody"))
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range []paymock.StoredKey{k, derived, long} {
			if got, found, err := s.Key(ctx, k.Digest); !found || err != nil || got.MerchantID != k.MerchantID {
				t.Fatalf("Key = %+v, %v, %v", got, found, err)
			}
		}
		if _, found, _ := s.Key(ctx, missing); found {
			t.Fatal("found a key never stored")
		}
	}); n != 0 {
		t.Errorf("Key allocates %v times, want 0", n)
	}
}
