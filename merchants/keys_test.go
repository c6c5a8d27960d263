// Tests of API keys made and revoked at run time, in both modes.

package merchants

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

var createdKeyPattern = regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`)

func TestRegistry_CreateKeyAuthenticatesAsItsMerchant(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			clock := newFakeNow()
			cfg := Config{Now: clock.Now}
			key := "sk_test_open_token_0123"
			if mode == "configured" {
				cfg.Merchants = []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme"}}, {Name: "globex", APIKeys: []string{"sk_test_globex"}}}
				key = "sk_test_acme"
			}
			ms, err := newRegistry(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := mustAuth(t, ms, key)
			clock.Advance(time.Minute)
			k, err := ms.CreateKey(context.Background(), m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !createdKeyPattern.MatchString(k.Key) {
				t.Errorf("created key %q, want sk_test_ and 32 base62 characters", k.Key)
			}
			if !strings.HasPrefix(k.ID, "ak_") || k.Source != paymock.KeyCreated || !k.Created.Equal(clock.Now()) {
				t.Errorf("created key listed as %+v", k.APIKey)
			}
			if want := "sk_test_…" + k.Key[len(k.Key)-4:]; k.Masked != want {
				t.Errorf("Masked = %q, want %q", k.Masked, want)
			}
			if got := mustAuth(t, ms, k.Key); got != m {
				t.Errorf("created key authenticates as %s, want %s", got.ID, m.ID)
			}
			if mode == "open" && ms.OpenCount() != 1 {
				t.Errorf("a created key made a merchant of its own in open mode")
			}
			k2, err := ms.CreateKey(context.Background(), m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if k2.Key == k.Key || k2.ID == k.ID {
				t.Error("two created keys are the same")
			}
		})
	}
}

func TestRegistry_KeysListsMaskedKeysOnly(t *testing.T) {
	clock := newFakeNow()
	start := clock.Now()
	ms, err := newRegistry(Config{Now: clock.Now, Merchants: []paymock.Merchant{
		{Name: "acme", APIKeys: []string{"sk_test_acme", "sk_test_acme_second_key_1234"}},
		{Name: "globex", APIKeys: []string{"sk_test_globex"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	k, err := ms.CreateKey(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	got := keysOf(t, ms, "acme")
	want := []paymock.APIKey{
		{Masked: "sk_test_…me", Source: paymock.KeyFromConfig, Created: start},
		{Masked: "sk_test_…1234", Source: paymock.KeyFromConfig, Created: start},
		{Masked: k.Masked, Source: paymock.KeyCreated, Created: start.Add(time.Hour)},
	}
	if len(got) != len(want) {
		t.Fatalf("Keys = %+v, want %d keys", got, len(want))
	}
	ids := map[string]bool{}
	for i := range want {
		if got[i].Masked != want[i].Masked || got[i].Source != want[i].Source || !got[i].Created.Equal(want[i].Created) {
			t.Errorf("key %d = %+v, want %+v", i, got[i], want[i])
		}
		if !strings.HasPrefix(got[i].ID, "ak_") || ids[got[i].ID] {
			t.Errorf("key %d id %q is not a fresh ak_ id", i, got[i].ID)
		}
		ids[got[i].ID] = true
	}
	if again := keysOf(t, ms, "acme"); again[0].ID != got[0].ID {
		t.Error("key ids change between listings")
	}
	listing := fmt.Sprintf("%v %+v %#v", got, got, got)
	for _, secret := range []string{"sk_test_acme_second_key_1234", k.Key} {
		if strings.Contains(listing, secret) {
			t.Errorf("listing shows a whole key: %s", listing)
		}
	}
	if s := fmt.Sprintf("%v %+v %#v %s", k, k, k, k.LogValue()); strings.Contains(s, k.Key) {
		t.Errorf("a new key prints its whole key: %s", s)
	}
	if len(keysOf(t, ms, "globex")) != 1 || keysOf(t, ms, "nobody") != nil {
		t.Error("keys leak between merchants")
	}
}

func TestRegistry_RevokedKeyIsUnknownAtOnce(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{}
			key := "sk_test_open_token_0123"
			if mode == "configured" {
				cfg.Merchants = []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme"}}}
				key = "sk_test_acme"
			}
			ms, err := newRegistry(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := mustAuth(t, ms, key)
			k, err := ms.CreateKey(context.Background(), m.ID)
			if err != nil {
				t.Fatal(err)
			}
			mustAuth(t, ms, k.Key)
			if err := ms.RevokeKey(context.Background(), m.ID, k.ID); err != nil {
				t.Fatal(err)
			}
			for range 2 { // and it stays so: no new merchant on the second try
				if got, err := ms.Authenticate(context.Background(), k.Key); !errors.Is(err, paymock.ErrUnknownKey) || got != nil {
					t.Fatalf("revoked created key: %v, %v; want paymock.ErrUnknownKey", got, err)
				}
			}
			for _, l := range keysOf(t, ms, m.ID) {
				if l.ID == k.ID {
					t.Error("a revoked key is still listed")
				}
			}
			if err := ms.RevokeKey(context.Background(), m.ID, k.ID); !errors.Is(err, paymock.ErrNotFound) {
				t.Errorf("revoking twice: %v, want paymock.ErrNotFound", err)
			}

			// The configured key, or the open-mode token, can go too.
			own := keysOf(t, ms, m.ID)
			if len(own) != 1 {
				t.Fatalf("Keys = %+v, want the merchant's own key", own)
			}
			if want := map[string]paymock.KeySource{"configured": paymock.KeyFromConfig, "open": paymock.KeyOpen}[mode]; own[0].Source != want {
				t.Errorf("own key source = %s, want %s", own[0].Source, want)
			}
			if err := ms.RevokeKey(context.Background(), m.ID, own[0].ID); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if got, err := ms.Authenticate(context.Background(), key); !errors.Is(err, paymock.ErrUnknownKey) {
					t.Fatalf("revoked %s key: %v, %v; want paymock.ErrUnknownKey", mode, got, err)
				}
			}
			if mode == "open" && ms.OpenCount() != 1 {
				t.Errorf("OpenCount() = %d: a revoked token came back as a merchant", ms.OpenCount())
			}
			if len(keysOf(t, ms, m.ID)) != 0 {
				t.Errorf("Keys after revoking all = %+v", keysOf(t, ms, m.ID))
			}
		})
	}
}

func TestRegistry_RevokeKeyOfAnotherMerchantIsNotFound(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			ms := configured(t)
			a, b := "sk_test_acme", "sk_test_globex=="
			if mode == "open" {
				ms = openMerchants(t, Config{})
				a, b = "sk_a_token", "sk_b_token"
			}
			ma, mb := mustAuth(t, ms, a), mustAuth(t, ms, b)
			k, err := ms.CreateKey(context.Background(), mb.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range append([]string{k.ID, "ak_unknown", ""}, keysOf(t, ms, mb.ID)[0].ID) {
				if err := ms.RevokeKey(context.Background(), ma.ID, id); !errors.Is(err, paymock.ErrNotFound) {
					t.Errorf("RevokeKey(%s, %q) = %v, want paymock.ErrNotFound", ma.ID, id, err)
				}
			}
			mustAuth(t, ms, k.Key)
			mustAuth(t, ms, b)
			if _, err := ms.CreateKey(context.Background(), "nobody"); !errors.Is(err, paymock.ErrNotFound) {
				t.Errorf("CreateKey of an unknown merchant: %v", err)
			}
			if err := ms.RevokeKey(context.Background(), "nobody", k.ID); !errors.Is(err, paymock.ErrNotFound) {
				t.Errorf("RevokeKey of an unknown merchant: %v", err)
			}
		})
	}
}

func TestRegistry_CreateKeyStopsAtTheLimit(t *testing.T) {
	ms := openMerchants(t, Config{})
	m := mustAuth(t, ms, "sk_many")
	var last paymock.NewKey
	for range paymock.MaxCreatedKeys {
		var err error
		if last, err = ms.CreateKey(context.Background(), m.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ms.CreateKey(context.Background(), m.ID)
	if e, ok := paymock.AsError(err); !ok || e.Code != "key_limit" || e.Type != paymock.InvalidRequest {
		t.Fatalf("key past the limit: %v, want key_limit", err)
	}
	if err := ms.RevokeKey(context.Background(), m.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.CreateKey(context.Background(), m.ID); err != nil {
		t.Errorf("after revoking one: %v", err)
	}
}

func TestRegistry_RevokedDigestsAreBoundedPerMerchant(t *testing.T) {
	ms := openMerchants(t, Config{MaxMerchants: -1})
	m := mustAuth(t, ms, "sk_churn")
	var first paymock.NewKey
	for i := range maxRevokedKept + 5 {
		k, err := ms.CreateKey(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = k
		}
		if err := ms.RevokeKey(context.Background(), m.ID, k.ID); err != nil {
			t.Fatal(err)
		}
	}
	revoked, err := ms.store.RevokedDigests(context.Background(), paymock.KeyCreated)
	if n := len(revoked); err != nil || n != maxRevokedKept {
		t.Errorf("%d revoked digests kept (%v), want %d", len(revoked), err, maxRevokedKept)
	}
	// The oldest one, dropped, is just a new token now.
	if got := mustAuth(t, ms, first.Key); got == m {
		t.Error("a revoked key reaches its merchant again")
	}
}

// keysOf is Keys of a merchant, failing the test on an error (which only a
// shared store can make).
func keysOf(t testing.TB, ms *Registry, merchantID string) []paymock.APIKey {
	t.Helper()
	keys, err := ms.Keys(context.Background(), merchantID)
	if err != nil {
		t.Errorf("Keys(%q): %v", merchantID, err)
	}
	return keys
}
