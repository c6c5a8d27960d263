// Tests of API keys made and revoked at run time, in both modes.

package paymock

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

var createdKeyPattern = regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`)

func TestMaskKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b2", "sk_test_…A1b2"},
		{"sk_test_alpha_0123456789", "sk_test_…6789"},
		{"sk_test_123456789012", "sk_test_…9012"}, // twelve hidden
		{"sk_test_merchant", "sk_test_…hant"},     // eight: the last four
		{"sk_test_12345678901", "sk_test_…8901"},
		{"sk_test_acme_2", "sk_test_…e_2"}, // six: the last half
		{"sk_test_acme", "sk_test_…me"},
		{"sk_test_ci", "sk_test_…i"},
		{"sk_test_x", "sk_test_…"}, // one: nothing of it
		{"sk_live_secret_part_here_long", "sk_live_…long"},
		{"eyJhbGciOiJIUzI1NiJ9.payload.sig", "….sig"},
		{"a", "…"},
		{"sk_", "…_"},                       // all prefix: all secret, shown as any other
		{"sk_test_", "…est_"},               // likewise
		{"ABC_DEF_0123456789abcd", "…abcd"}, // only lowercase words make a prefix
		{"verylongword_0123456789abcdef", "…cdef"},
		{"pk_x_y_0123456789abcdef", "pk_x_…cdef"}, // two words at most
	} {
		got := MaskKey(tc.key)
		if got != tc.want {
			t.Errorf("MaskKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if len(got) > maxMaskLen {
			t.Errorf("MaskKey(%q) = %q is longer than %d bytes", tc.key, got, maxMaskLen)
		}
		prefix, tail, _ := strings.Cut(got, "…")
		if hidden := len(tc.key) - len(prefix) - len(tail); hidden < len(tail) {
			t.Errorf("MaskKey(%q) = %q shows %d characters and hides %d", tc.key, got, len(tail), hidden)
		}
	}
}

func TestMaskKey_KeysOfTheSameMerchantLookDifferent(t *testing.T) {
	// The keys a newcomer met, both once masked "sk_test_…", and keys
	// that differ only in their last character.
	for _, keys := range [][]string{
		{"sk_test_ci", "sk_test_merchant"},
		{"sk_test_ab", "sk_test_ac"},
		{"sk_test_acme_1", "sk_test_acme_2", "sk_test_acme_3"},
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b2", "sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b3"},
	} {
		seen := map[string]string{}
		for _, k := range keys {
			m := MaskKey(k)
			if other, dup := seen[m]; dup {
				t.Errorf("%q and %q are both masked %q", other, k, m)
			}
			seen[m] = k
		}
	}
}

func TestMerchants_CreateKeyAuthenticatesAsItsMerchant(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			clock := newFakeNow()
			cfg := MerchantsConfig{Now: clock.Now}
			key := "sk_test_open_token_0123"
			if mode == "configured" {
				cfg.Merchants = []Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme"}}, {Name: "globex", APIKeys: []string{"sk_test_globex"}}}
				key = "sk_test_acme"
			}
			ms, err := NewMerchantsFromConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := mustAuth(t, ms, key)
			clock.Advance(time.Minute)
			k, err := ms.CreateKey(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !createdKeyPattern.MatchString(k.Key) {
				t.Errorf("created key %q, want sk_test_ and 32 base62 characters", k.Key)
			}
			if !strings.HasPrefix(k.ID, "ak_") || k.Source != KeyCreated || !k.Created.Equal(clock.Now()) {
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
			k2, err := ms.CreateKey(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if k2.Key == k.Key || k2.ID == k.ID {
				t.Error("two created keys are the same")
			}
		})
	}
}

func TestMerchants_KeysListsMaskedKeysOnly(t *testing.T) {
	clock := newFakeNow()
	start := clock.Now()
	ms, err := NewMerchantsFromConfig(MerchantsConfig{Now: clock.Now, Merchants: []Merchant{
		{Name: "acme", APIKeys: []string{"sk_test_acme", "sk_test_acme_second_key_1234"}},
		{Name: "globex", APIKeys: []string{"sk_test_globex"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	k, err := ms.CreateKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	got := keysOf(t, ms, "acme")
	want := []APIKey{
		{Masked: "sk_test_…me", Source: KeyFromConfig, Created: start},
		{Masked: "sk_test_…1234", Source: KeyFromConfig, Created: start},
		{Masked: k.Masked, Source: KeyCreated, Created: start.Add(time.Hour)},
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

func TestMerchants_RevokedKeyIsUnknownAtOnce(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			cfg := MerchantsConfig{}
			key := "sk_test_open_token_0123"
			if mode == "configured" {
				cfg.Merchants = []Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme"}}}
				key = "sk_test_acme"
			}
			ms, err := NewMerchantsFromConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := mustAuth(t, ms, key)
			k, err := ms.CreateKey(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			mustAuth(t, ms, k.Key)
			if err := ms.RevokeKey(m.ID, k.ID); err != nil {
				t.Fatal(err)
			}
			for range 2 { // and it stays so: no new merchant on the second try
				if got, err := ms.Authenticate(k.Key); !errors.Is(err, ErrUnknownKey) || got != nil {
					t.Fatalf("revoked created key: %v, %v; want ErrUnknownKey", got, err)
				}
			}
			for _, l := range keysOf(t, ms, m.ID) {
				if l.ID == k.ID {
					t.Error("a revoked key is still listed")
				}
			}
			if err := ms.RevokeKey(m.ID, k.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("revoking twice: %v, want ErrNotFound", err)
			}

			// The configured key, or the open-mode token, can go too.
			own := keysOf(t, ms, m.ID)
			if len(own) != 1 {
				t.Fatalf("Keys = %+v, want the merchant's own key", own)
			}
			if want := map[string]KeySource{"configured": KeyFromConfig, "open": KeyOpen}[mode]; own[0].Source != want {
				t.Errorf("own key source = %s, want %s", own[0].Source, want)
			}
			if err := ms.RevokeKey(m.ID, own[0].ID); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if got, err := ms.Authenticate(key); !errors.Is(err, ErrUnknownKey) {
					t.Fatalf("revoked %s key: %v, %v; want ErrUnknownKey", mode, got, err)
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

func TestMerchants_RevokeKeyOfAnotherMerchantIsNotFound(t *testing.T) {
	for _, mode := range []string{"configured", "open"} {
		t.Run(mode, func(t *testing.T) {
			ms := configured(t)
			a, b := "sk_test_acme", "sk_test_globex=="
			if mode == "open" {
				ms = openMerchants(t, MerchantsConfig{})
				a, b = "sk_a_token", "sk_b_token"
			}
			ma, mb := mustAuth(t, ms, a), mustAuth(t, ms, b)
			k, err := ms.CreateKey(mb.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range append([]string{k.ID, "ak_unknown", ""}, keysOf(t, ms, mb.ID)[0].ID) {
				if err := ms.RevokeKey(ma.ID, id); !errors.Is(err, ErrNotFound) {
					t.Errorf("RevokeKey(%s, %q) = %v, want ErrNotFound", ma.ID, id, err)
				}
			}
			mustAuth(t, ms, k.Key)
			mustAuth(t, ms, b)
			if _, err := ms.CreateKey("nobody"); !errors.Is(err, ErrNotFound) {
				t.Errorf("CreateKey of an unknown merchant: %v", err)
			}
			if err := ms.RevokeKey("nobody", k.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("RevokeKey of an unknown merchant: %v", err)
			}
		})
	}
}

func TestMerchants_CreateKeyStopsAtTheLimit(t *testing.T) {
	ms := openMerchants(t, MerchantsConfig{})
	m := mustAuth(t, ms, "sk_many")
	var last NewKey
	for range MaxCreatedKeys {
		var err error
		if last, err = ms.CreateKey(m.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ms.CreateKey(m.ID)
	if e, ok := AsError(err); !ok || e.Code != "key_limit" || e.Type != InvalidRequest {
		t.Fatalf("key past the limit: %v, want key_limit", err)
	}
	if err := ms.RevokeKey(m.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.CreateKey(m.ID); err != nil {
		t.Errorf("after revoking one: %v", err)
	}
}

func TestMerchants_RevokedDigestsAreBoundedPerMerchant(t *testing.T) {
	ms := openMerchants(t, MerchantsConfig{MaxMerchants: -1})
	m := mustAuth(t, ms, "sk_churn")
	var first NewKey
	for i := range maxRevokedKept + 5 {
		k, err := ms.CreateKey(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = k
		}
		if err := ms.RevokeKey(m.ID, k.ID); err != nil {
			t.Fatal(err)
		}
	}
	ms.mu.RLock()
	n := len(ms.revoked)
	ms.mu.RUnlock()
	if n != maxRevokedKept {
		t.Errorf("%d revoked digests kept, want %d", n, maxRevokedKept)
	}
	// The oldest one, dropped, is just a new token now.
	if got := mustAuth(t, ms, first.Key); got == m {
		t.Error("a revoked key reaches its merchant again")
	}
}

// keysOf is Keys of a merchant, failing the test on an error (which only a
// shared store can make).
func keysOf(t testing.TB, ms *Merchants, merchantID string) []APIKey {
	t.Helper()
	keys, err := ms.Keys(merchantID)
	if err != nil {
		t.Errorf("Keys(%q): %v", merchantID, err)
	}
	return keys
}
