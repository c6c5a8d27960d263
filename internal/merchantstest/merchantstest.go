// Package merchantstest is the conformance suite of paymock.MerchantStore:
// the memory and PostgreSQL stores run the same tests through Run, so that
// the merchant registry can rely on one behaviour whichever holds its
// records.
package merchantstest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// Run runs the suite. open returns an empty store for one subtest; it
// registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.MerchantStore) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s paymock.MerchantStore)
	}{
		{"KeysAreFoundByDigestListedLiveAndRevokedForGood", keysFoundByDigest},
		{"AddKeyRefusesWhatIsTakenAndPastTheLimit", addKeyRefuses},
		{"RevokedCreatedKeysArePrunedPastKeep", revokedPruned},
		{"EndpointsAddListDisableDelete", endpointsLifeCycle},
		{"OddMerchantsAndIDsAreValuesLikeAnyOther", oddValues},
		{"LimitHoldsUnderConcurrentAdds", limitUnderConcurrentAdds},
		{"ReleaseMerchantTouchesNoOtherMerchant", releaseMerchant},
		{"OpenTokensUnderTheIDsOfTheirDigests", openTokensDerived},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// keyCreated has nanoseconds, which every store must keep.
var keyCreated = time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)

// StoredKey is a key of a merchant as the registry would store it, with
// the id "ak_" + key.
func StoredKey(merchantID, key string, src paymock.KeySource) paymock.StoredKey {
	return paymock.StoredKey{Digest: sha256.Sum256([]byte(key)), ID: "ak_" + key, MerchantID: merchantID,
		Masked: paymock.MaskKey(key), Source: src, Created: keyCreated}
}

// StoredEndpoint is an endpoint of a merchant.
func StoredEndpoint(merchantID, id string) paymock.StoredEndpoint {
	return paymock.StoredEndpoint{MerchantID: merchantID, ID: id, URL: "https://" + id + ".example/in",
		Secret: "whsec_" + id, Created: keyCreated}
}

func keyIDs(ks []paymock.StoredKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

func keysFoundByDigest(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	for _, k := range []paymock.StoredKey{
		StoredKey("acme", "sk_test_c1", paymock.KeyCreated),
		StoredKey("acme", "sk_test_open", paymock.KeyOpen),
		StoredKey("acme", "sk_test_c2", paymock.KeyCreated),
		StoredKey("globex", "sk_test_g1", paymock.KeyCreated),
	} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatalf("AddKey %s: %v", k.ID, err)
		}
	}
	want := StoredKey("acme", "sk_test_c1", paymock.KeyCreated)
	if got, found, err := s.Key(ctx, want.Digest); err != nil || !found || got != want {
		t.Errorf("Key = %+v, %v, %v; want %+v (the time to the nanosecond)", got, found, err, want)
	}
	if _, found, err := s.Key(ctx, sha256.Sum256([]byte("sk_test_nobody"))); err != nil || found {
		t.Errorf("Key of an unknown digest: %v, %v", found, err)
	}
	if got, _ := s.Keys(ctx, "acme"); fmt.Sprint(keyIDs(got)) != "[ak_sk_test_open ak_sk_test_c1 ak_sk_test_c2]" {
		t.Errorf("Keys = %v, want the open-mode token first, then created ones oldest first", keyIDs(got))
	}
	if open, found, err := s.OpenKey(ctx, "acme"); err != nil || !found || open.ID != "ak_sk_test_open" {
		t.Errorf("OpenKey = %+v, %v, %v", open, found, err)
	}
	if _, found, _ := s.OpenKey(ctx, "globex"); found {
		t.Error("OpenKey found a merchant that has no open-mode token")
	}

	for _, tc := range []struct {
		name, merchant, id string
		want               bool
	}{
		{"a live key", "acme", "ak_sk_test_c1", true},
		{"the same again", "acme", "ak_sk_test_c1", false},
		{"another merchant's key", "acme", "ak_sk_test_g1", false},
		{"an unknown id", "acme", "ak_nope", false},
		{"not text", "acme", "ak_\x00\xff", false},
		{"the open-mode token", "acme", "ak_sk_test_open", true},
	} {
		if ok, err := s.RevokeKey(ctx, tc.merchant, tc.id, 10); err != nil || ok != tc.want {
			t.Errorf("%s: RevokeKey = %v, %v; want %v", tc.name, ok, err, tc.want)
		}
	}
	if got, _ := s.Keys(ctx, "acme"); fmt.Sprint(keyIDs(got)) != "[ak_sk_test_c2]" {
		t.Errorf("Keys after revoking = %v, want the live one only", keyIDs(got))
	}
	if got, found, _ := s.Key(ctx, want.Digest); !found || !got.Revoked {
		t.Errorf("a revoked key's digest: %+v, found %v; want it found, revoked", got, found)
	}
	if got, found, _ := s.OpenKey(ctx, "acme"); !found || !got.Revoked {
		t.Errorf("a revoked open-mode token: %+v, found %v; its merchant must stay known", got, found)
	}
}

func addKeyRefuses(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	if err := s.AddKey(ctx, StoredKey("acme", "sk_test_1", paymock.KeyOpen), -1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddKey(ctx, StoredKey("acme", "sk_test_2", paymock.KeyCreated), 1); err != nil {
		t.Fatal(err)
	}
	sameID := StoredKey("acme", "sk_test_3", paymock.KeyCreated)
	sameID.ID = "ak_sk_test_2"
	for _, tc := range []struct {
		name  string
		k     paymock.StoredKey
		limit int
		want  error
	}{
		{"a digest stored for another merchant", StoredKey("globex", "sk_test_1", paymock.KeyCreated), -1, paymock.ErrDuplicate},
		{"an id the merchant has", sameID, -1, paymock.ErrDuplicate},
		{"a second open-mode token of one merchant", StoredKey("acme", "sk_test_4", paymock.KeyOpen), -1, paymock.ErrDuplicate},
		{"past the limit of created keys", StoredKey("acme", "sk_test_5", paymock.KeyCreated), 1, paymock.ErrLimitReached},
	} {
		if err := s.AddKey(ctx, tc.k, tc.limit); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddKey = %v, want %v", tc.name, err, tc.want)
		}
	}
	// The limit counts live keys of the source only.
	if ok, err := s.RevokeKey(ctx, "acme", "ak_sk_test_2", 10); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := s.AddKey(ctx, StoredKey("acme", "sk_test_5", paymock.KeyCreated), 1); err != nil {
		t.Errorf("after a revoke, under the limit again: %v", err)
	}
	if got, _ := s.Keys(ctx, "acme"); fmt.Sprint(keyIDs(got)) != "[ak_sk_test_1 ak_sk_test_5]" {
		t.Errorf("Keys = %v: a refused add stored something", keyIDs(got))
	}
}

func revokedPruned(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	open := StoredKey("acme", "sk_test_open", paymock.KeyOpen)
	config := StoredKey("acme", "sk_test_conf", paymock.KeyFromConfig)
	config.Revoked = true
	for _, k := range []paymock.StoredKey{open, config} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		k := StoredKey("acme", fmt.Sprint("sk_test_", i), paymock.KeyCreated)
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.RevokeKey(ctx, "acme", k.ID, 2); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if ok, err := s.RevokeKey(ctx, "acme", open.ID, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for i := range 5 {
		_, found, err := s.Key(ctx, sha256.Sum256(fmt.Append(nil, "sk_test_", i)))
		if err != nil || found != (i >= 3) {
			t.Errorf("revoked key %d found %v (%v); want only the 2 newest kept", i, found, err)
		}
	}
	for _, k := range []paymock.StoredKey{open, config} {
		if got, found, _ := s.Key(ctx, k.Digest); !found || !got.Revoked {
			t.Errorf("%s revoked is pruned: %+v %v; it must stay revoked", k.Source, got, found)
		}
	}
	ds, err := s.RevokedDigests(ctx, paymock.KeyFromConfig)
	if err != nil || len(ds) != 1 || ds[0] != config.Digest {
		t.Errorf("RevokedDigests(config) = %d digests, %v; want the configured one", len(ds), err)
	}
}

func endpointsLifeCycle(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	ep := func(merchant, id string) paymock.StoredEndpoint {
		return paymock.StoredEndpoint{MerchantID: merchant, ID: id, URL: "https://" + id + ".example/in",
			Secret: "whsec_" + id, Created: keyCreated}
	}
	for _, e := range []paymock.StoredEndpoint{ep("acme", "we_b"), ep("acme", "we_a"), ep("globex", "we_g")} {
		if err := s.AddEndpoint(ctx, e, 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		e    paymock.StoredEndpoint
		want error
	}{
		{"an id the merchant has", ep("globex", "we_g"), paymock.ErrDuplicate},
		{"past the limit", ep("acme", "we_c"), paymock.ErrLimitReached},
	} {
		if err := s.AddEndpoint(ctx, tc.e, 2); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got, err := s.Endpoints(ctx, "acme"); err != nil || len(got) != 2 || got[0] != ep("acme", "we_b") || got[1].ID != "we_a" {
		t.Errorf("Endpoints = %+v, %v; want we_b then we_a, whole", got, err)
	}
	if got, ok, err := s.SetEndpointDisabled(ctx, "acme", "we_a", true); err != nil || !ok || !got.Disabled || got.URL != "https://we_a.example/in" {
		t.Errorf("disable = %+v, %v, %v", got, ok, err)
	}
	if got, _ := s.Endpoints(ctx, "acme"); !got[1].Disabled || got[0].Disabled {
		t.Errorf("after disabling we_a: %+v", got)
	}
	if _, ok, _ := s.SetEndpointDisabled(ctx, "acme", "we_g", true); ok {
		t.Error("disabled another merchant's endpoint")
	}
	if ok, _ := s.DeleteEndpoint(ctx, "acme", "we_g"); ok {
		t.Error("deleted another merchant's endpoint")
	}
	if ok, err := s.DeleteEndpoint(ctx, "acme", "we_b"); !ok || err != nil {
		t.Errorf("delete = %v, %v", ok, err)
	}
	if ok, _ := s.DeleteEndpoint(ctx, "acme", "we_b"); ok {
		t.Error("deleted twice")
	}
	if got, _ := s.Endpoints(ctx, "acme"); len(got) != 1 || got[0].ID != "we_a" {
		t.Errorf("after deleting we_b: %+v", got)
	}
	if got, _ := s.Endpoints(ctx, "globex"); len(got) != 1 {
		t.Errorf("globex's endpoints changed: %+v", got)
	}
}

func oddValues(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	odd := []string{`o'brien`, `x"; DROP TABLE api_keys; --`, `back\slash`, `$1`, `%_`}
	for _, m := range odd {
		k := StoredKey(m, "sk_test_"+m, paymock.KeyCreated)
		k.ID = "ak_" + m
		if err := s.AddKey(ctx, k, 5); err != nil {
			t.Fatalf("%q: AddKey: %v", m, err)
		}
		if err := s.AddEndpoint(ctx, paymock.StoredEndpoint{MerchantID: m, ID: "we_" + m, URL: "https://h.example/" + m,
			Secret: "whsec_AAAA", Created: keyCreated}, 5); err != nil {
			t.Fatalf("%q: AddEndpoint: %v", m, err)
		}
	}
	if ok, err := s.RevokeKey(ctx, `%_`, "ak_%_", 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := s.DeleteEndpoint(ctx, `%_`, "we_%_"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, m := range odd[:4] {
		if ks, err := s.Keys(ctx, m); err != nil || len(ks) != 1 || ks[0].ID != "ak_"+m {
			t.Errorf("%q: Keys = %v, %v", m, keyIDs(ks), err)
		}
		if eps, err := s.Endpoints(ctx, m); err != nil || len(eps) != 1 {
			t.Errorf("%q: Endpoints = %v, %v", m, eps, err)
		}
	}
}

// limitUnderConcurrentAdds adds keys and endpoints for one merchant from
// many goroutines at once: the limit is never passed.
func limitUnderConcurrentAdds(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	const limit, tries = 5, 24
	var keys, endpoints atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			err := s.AddKey(ctx, StoredKey("acme", fmt.Sprint("sk_test_", i), paymock.KeyCreated), limit)
			if err == nil {
				keys.Add(1)
			} else if !errors.Is(err, paymock.ErrLimitReached) {
				t.Error(err)
			}
		})
		wg.Go(func() {
			err := s.AddEndpoint(ctx, StoredEndpoint("acme", fmt.Sprint("we_", i)), limit)
			if err == nil {
				endpoints.Add(1)
			} else if !errors.Is(err, paymock.ErrLimitReached) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if keys.Load() != limit || endpoints.Load() != limit {
		t.Errorf("stored %d keys and %d endpoints, want %d of each", keys.Load(), endpoints.Load(), limit)
	}
}

// releaseMerchant releases one open-mode merchant. A store may keep its
// records (replicas share it) or drop them (it is this process's alone),
// but all of them alike, and nothing of another merchant changes.
func releaseMerchant(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	for _, m := range []string{"key_a", "key_b"} {
		for _, k := range []paymock.StoredKey{StoredKey(m, "sk_open_"+m, paymock.KeyOpen), StoredKey(m, "sk_created_"+m, paymock.KeyCreated)} {
			if err := s.AddKey(ctx, k, -1); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := s.RevokeKey(ctx, m, "ak_sk_created_"+m, 10); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if err := s.AddKey(ctx, StoredKey(m, "sk_live_"+m, paymock.KeyCreated), -1); err != nil {
			t.Fatal(err)
		}
		if err := s.AddEndpoint(ctx, StoredEndpoint(m, "we_"+m), -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ReleaseMerchant(ctx, "key_a"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseMerchant(ctx, "key_nobody"); err != nil {
		t.Errorf("releasing an unknown merchant: %v", err)
	}

	_, kept, err := s.OpenKey(ctx, "key_a")
	if err != nil {
		t.Fatal(err)
	}
	keys, err1 := s.Keys(ctx, "key_a")
	eps, err2 := s.Endpoints(ctx, "key_a")
	_, revokedFound, err3 := s.Key(ctx, sha256.Sum256([]byte("sk_created_key_a")))
	_, liveFound, err4 := s.Key(ctx, sha256.Sum256([]byte("sk_live_key_a")))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if kept && (len(keys) != 2 || len(eps) != 1 || !revokedFound || !liveFound) ||
		!kept && (len(keys) != 0 || len(eps) != 0 || revokedFound || liveFound) {
		t.Errorf("released merchant half kept: token kept %v, keys %v, endpoints %d, revoked key found %v, live key found %v",
			kept, keyIDs(keys), len(eps), revokedFound, liveFound)
	}

	if _, found, err := s.OpenKey(ctx, "key_b"); err != nil || !found {
		t.Errorf("the other merchant's token: %v, %v", found, err)
	}
	if keys, err := s.Keys(ctx, "key_b"); err != nil || fmt.Sprint(keyIDs(keys)) != "[ak_sk_open_key_b ak_sk_live_key_b]" {
		t.Errorf("the other merchant's keys: %v, %v", keyIDs(keys), err)
	}
	if k, found, err := s.Key(ctx, sha256.Sum256([]byte("sk_created_key_b"))); err != nil || !found || !k.Revoked {
		t.Errorf("the other merchant's revoked key: %+v, %v, %v", k, found, err)
	}
	if eps, err := s.Endpoints(ctx, "key_b"); err != nil || len(eps) != 1 || eps[0] != StoredEndpoint("key_b", "we_key_b") {
		t.Errorf("the other merchant's endpoints: %+v, %v", eps, err)
	}
}

// openTokensDerived stores open-mode tokens as the registry does, under
// the merchant ids their digests give (paymock.OpenMerchantID), the long
// one for a token whose short id another token's merchant has: a store
// may index them by that id alone, and must still find them by digest.
func openTokensDerived(t *testing.T, s paymock.MerchantStore) {
	ctx := t.Context()
	a := StoredKey("", "sk_test_derived_a", paymock.KeyOpen)
	a.MerchantID = paymock.OpenMerchantID(a.Digest, false)
	b := StoredKey("", "sk_test_derived_b", paymock.KeyOpen)
	b.MerchantID = paymock.OpenMerchantID(b.Digest, true)
	for _, k := range []paymock.StoredKey{a, b} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatal(err)
		}
	}
	// B's token again under its short id, and A's under another id:
	// taken by digest.
	for _, k := range []paymock.StoredKey{
		{Digest: b.Digest, ID: b.ID, MerchantID: paymock.OpenMerchantID(b.Digest, false), Masked: b.Masked, Source: paymock.KeyOpen, Created: keyCreated},
		{Digest: a.Digest, ID: "ak_other", MerchantID: "key_other", Masked: a.Masked, Source: paymock.KeyOpen, Created: keyCreated},
		{Digest: a.Digest, ID: "ak_other", MerchantID: "key_other", Masked: a.Masked, Source: paymock.KeyCreated, Created: keyCreated},
	} {
		if err := s.AddKey(ctx, k, -1); !errors.Is(err, paymock.ErrDuplicate) {
			t.Errorf("AddKey(%s for %s) = %v, want ErrDuplicate", k.ID, k.MerchantID, err)
		}
	}
	for _, k := range []paymock.StoredKey{a, b} {
		if got, found, err := s.Key(ctx, k.Digest); err != nil || !found || got != k {
			t.Errorf("Key(%s) = %+v, %v, %v; want %+v", k.ID, got, found, err, k)
		}
		if got, found, err := s.OpenKey(ctx, k.MerchantID); err != nil || !found || got != k {
			t.Errorf("OpenKey(%s) = %+v, %v, %v; want %+v", k.MerchantID, got, found, err, k)
		}
	}
	if ok, err := s.RevokeKey(ctx, a.MerchantID, a.ID, 10); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, found, err := s.Key(ctx, a.Digest); err != nil || !found || !got.Revoked {
		t.Errorf("the revoked token: %+v, %v, %v", got, found, err)
	}
	revoked, err := s.RevokedDigests(ctx, paymock.KeyOpen)
	if err != nil || len(revoked) != 1 || revoked[0] != a.Digest {
		t.Errorf("RevokedDigests(open) = %x, %v; want A's digest alone", revoked, err)
	}
	if keys, err := s.Keys(ctx, b.MerchantID); err != nil || len(keys) != 1 || keys[0] != b {
		t.Errorf("Keys(%s) = %+v, %v", b.MerchantID, keys, err)
	}
}
