// Tests of run-time keys, endpoints and open-mode merchants on PostgreSQL:
// the store's own promises, then paymock.Merchants over two stores on one
// database, as two replicas hold them.

package postgres_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/postgres"
)

// openShared opens n stores on one new database and returns them with its
// URL.
func openShared(t *testing.T, n int) ([]*postgres.Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		st, err := postgres.Open(t.Context(), postgres.Config{URL: url, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		out[i] = st
	}
	return out, url
}

var keyCreated = time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)

func storedKey(merchantID, key string, src paymock.KeySource) paymock.StoredKey {
	return paymock.StoredKey{Digest: sha256.Sum256([]byte(key)), ID: "ak_" + key, MerchantID: merchantID,
		Masked: paymock.MaskKey(key), Source: src, Created: keyCreated}
}

func keyIDs(ks []paymock.StoredKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

func TestMerchantStore_KeysAreFoundByDigestListedLiveAndRevokedForGood(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 1)
	s := stores[0]
	for _, k := range []paymock.StoredKey{
		storedKey("acme", "sk_test_c1", paymock.KeyCreated),
		storedKey("acme", "sk_test_open", paymock.KeyOpen),
		storedKey("acme", "sk_test_c2", paymock.KeyCreated),
		storedKey("globex", "sk_test_g1", paymock.KeyCreated),
	} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatalf("AddKey %s: %v", k.ID, err)
		}
	}
	want := storedKey("acme", "sk_test_c1", paymock.KeyCreated)
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

func TestMerchantStore_AddKeyRefusesWhatIsTakenAndPastTheLimit(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 1)
	s := stores[0]
	if err := s.AddKey(ctx, storedKey("acme", "sk_test_1", paymock.KeyOpen), -1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddKey(ctx, storedKey("acme", "sk_test_2", paymock.KeyCreated), 1); err != nil {
		t.Fatal(err)
	}
	sameID := storedKey("acme", "sk_test_3", paymock.KeyCreated)
	sameID.ID = "ak_sk_test_2"
	for _, tc := range []struct {
		name  string
		k     paymock.StoredKey
		limit int
		want  error
	}{
		{"a digest stored for another merchant", storedKey("globex", "sk_test_1", paymock.KeyCreated), -1, paymock.ErrDuplicate},
		{"an id the merchant has", sameID, -1, paymock.ErrDuplicate},
		{"a second open-mode token of one merchant", storedKey("acme", "sk_test_4", paymock.KeyOpen), -1, paymock.ErrDuplicate},
		{"past the limit of created keys", storedKey("acme", "sk_test_5", paymock.KeyCreated), 1, paymock.ErrLimitReached},
	} {
		if err := s.AddKey(ctx, tc.k, tc.limit); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddKey = %v, want %v", tc.name, err, tc.want)
		}
	}
	// The limit counts live keys of the source only.
	if ok, err := s.RevokeKey(ctx, "acme", "ak_sk_test_2", 10); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := s.AddKey(ctx, storedKey("acme", "sk_test_5", paymock.KeyCreated), 1); err != nil {
		t.Errorf("after a revoke, under the limit again: %v", err)
	}
	if got, _ := s.Keys(ctx, "acme"); fmt.Sprint(keyIDs(got)) != "[ak_sk_test_1 ak_sk_test_5]" {
		t.Errorf("Keys = %v: a refused add stored something", keyIDs(got))
	}
}

// TestMerchantStore_LimitHoldsUnderConcurrentAddsFromTwoReplicas adds
// keys and endpoints for one merchant from two stores at once: the limit
// is never passed.
func TestMerchantStore_LimitHoldsUnderConcurrentAddsFromTwoReplicas(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 2)
	const limit, tries = 5, 24
	var keys, endpoints atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		s := stores[i%2]
		wg.Go(func() {
			err := s.AddKey(ctx, storedKey("acme", fmt.Sprint("sk_test_", i), paymock.KeyCreated), limit)
			if err == nil {
				keys.Add(1)
			} else if !errors.Is(err, paymock.ErrLimitReached) {
				t.Error(err)
			}
		})
		wg.Go(func() {
			err := s.AddEndpoint(ctx, paymock.StoredEndpoint{MerchantID: "acme", ID: fmt.Sprint("we_", i),
				URL: "https://h.example/in", Secret: "whsec_AAAA", Created: keyCreated}, limit)
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

func TestMerchantStore_RevokedCreatedKeysArePrunedPastKeep(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 1)
	s := stores[0]
	open := storedKey("acme", "sk_test_open", paymock.KeyOpen)
	config := storedKey("acme", "sk_test_conf", paymock.KeyFromConfig)
	config.Revoked = true
	for _, k := range []paymock.StoredKey{open, config} {
		if err := s.AddKey(ctx, k, -1); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		k := storedKey("acme", fmt.Sprint("sk_test_", i), paymock.KeyCreated)
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

func TestMerchantStore_EndpointsAddListDisableDelete(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 1)
	s := stores[0]
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

// TestMerchantStore_RequestValuesAreParameters stores keys and endpoints
// whose merchant and ids hold what would break SQL built by concatenation.
func TestMerchantStore_RequestValuesAreParameters(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 1)
	s := stores[0]
	odd := []string{`o'brien`, `x"; DROP TABLE api_keys; --`, `back\slash`, `$1`, `%_`}
	for _, m := range odd {
		k := storedKey(m, "sk_test_"+m, paymock.KeyCreated)
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

// replicaMerchants is one replica's *paymock.Merchants over its own store.
func replicaMerchants(t *testing.T, st *postgres.Store, cfg paymock.MerchantsConfig) *paymock.Merchants {
	t.Helper()
	cfg.Store = st
	ms, err := paymock.NewMerchantsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestMerchants_OpenModeMerchantsKeysAndEndpointsAreSharedByReplicas(t *testing.T) {
	stores, _ := openShared(t, 2)
	a := replicaMerchants(t, stores[0], paymock.MerchantsConfig{})
	b := replicaMerchants(t, stores[1], paymock.MerchantsConfig{})
	const token = "sk_test_shared_token_0123"

	ma, err := a.Authenticate(token)
	if err != nil {
		t.Fatal(err)
	}
	// B finds the merchant by id before it ever sees the token: a hosted page.
	if mb, ok := b.ByID(ma.ID); !ok || mb.ID != ma.ID || !mb.PCIApproved || len(mb.Accounts) != 2 {
		t.Fatalf("ByID on the other replica = %v, %v", mb, ok)
	}
	if mb, err := b.Authenticate(token); err != nil || mb.ID != ma.ID {
		t.Fatalf("the token on the other replica: %v, %v; want merchant %s", mb, err, ma.ID)
	}
	if _, ok := b.ByID("key_000000000000"); ok {
		t.Error("ByID found a merchant no token made")
	}

	k, err := a.CreateKey(ma.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := b.Authenticate(k.Key); err != nil || m.ID != ma.ID {
		t.Errorf("a key created on A, on B: %v, %v", m, err)
	}
	listA, errA := a.Keys(ma.ID)
	listB, errB := b.Keys(ma.ID)
	if errA != nil || errB != nil || fmt.Sprint(listA) != fmt.Sprint(listB) || len(listA) != 2 ||
		listA[0].Source != paymock.KeyOpen || listA[1].ID != k.ID || listA[1].Masked != k.Masked {
		t.Errorf("keys listed on A %v (%v) and on B %v (%v); want the token then the created key on both", listA, errA, listB, errB)
	}
	if err := b.RevokeKey(ma.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(k.Key); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("a key revoked on B, on A at once: %v, want ErrUnknownKey", err)
	}
	if err := a.RevokeKey(ma.ID, k.ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("revoking on A what B revoked: %v, want ErrNotFound", err)
	}
	// The token itself, revoked on A, is refused on B and does not come
	// back as a new merchant.
	if err := a.RevokeKey(ma.ID, listA[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(token); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("the revoked token on B: %v, want ErrUnknownKey", err)
	}

	ep, err := a.AddEndpoint(ma.ID, "https://hooks.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Endpoint(ma.ID, ep.ID); err != nil || got.Secret != ep.Secret || got.URL != ep.URL {
		t.Errorf("the endpoint on B = %+v, %v; want its secret", got, err)
	}
	if d := b.Deliverable(ma.ID); len(d) != 1 || d[0].ID != ep.ID || d[0].Secret != ep.Secret {
		t.Errorf("Deliverable on B = %v", d)
	}
	if _, err := b.DisableEndpoint(ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if d := a.Deliverable(ma.ID); len(d) != 0 {
		t.Errorf("Deliverable on A after B disabled it = %v", d)
	}
	if eps, err := a.Endpoints(ma.ID); err != nil || len(eps) != 1 || !eps[0].Disabled {
		t.Errorf("Endpoints on A = %v, %v; want it listed disabled", eps, err)
	}
	if _, err := a.EnableEndpoint(ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteEndpoint(ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if d := a.Deliverable(ma.ID); len(d) != 0 {
		t.Errorf("Deliverable on A after B deleted it = %v", d)
	}
	if _, err := a.Endpoint(ma.ID, ep.ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("the deleted endpoint on A: %v", err)
	}
}

func TestMerchants_ConcurrentFirstUseOnTwoReplicasMakesOneMerchant(t *testing.T) {
	stores, _ := openShared(t, 2)
	rs := []*paymock.Merchants{
		replicaMerchants(t, stores[0], paymock.MerchantsConfig{}),
		replicaMerchants(t, stores[1], paymock.MerchantsConfig{}),
	}
	const token = "sk_test_first_use_0123456"
	ids := make([]string, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			m, err := rs[i%2].Authenticate(token)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = m.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("one token made merchants %v", ids)
		}
	}
	if keys, err := rs[1].Keys(ids[0]); err != nil || len(keys) != 1 {
		t.Errorf("the token's merchant holds %v, %v; want its one token", keys, err)
	}
}

func TestMerchants_ConfiguredKeysStayInMemoryAndTheirRevocationIsShared(t *testing.T) {
	stores, _ := openShared(t, 3)
	acme := paymock.Merchant{Name: "acme", APIKeys: []string{"sk_test_acme_1", "sk_test_acme_2"},
		Webhooks: []paymock.WebhookEndpoint{{URL: "https://acme.example/in", Secret: "whsec_AAAA"}}}
	globex := paymock.Merchant{Name: "globex", APIKeys: []string{"sk_test_globex"}}
	cfg := paymock.MerchantsConfig{Merchants: []paymock.Merchant{acme, globex},
		DefaultWebhooks: []paymock.WebhookEndpoint{{URL: "https://all.example/in", Secret: "whsec_BBBB"}}}
	a := replicaMerchants(t, stores[0], cfg)
	b := replicaMerchants(t, stores[1], cfg)

	// Their ids are the same on every replica (when each was "created" is
	// each replica's start).
	ka, _ := a.Keys("acme")
	kb, _ := b.Keys("acme")
	ea, _ := a.Endpoints("acme")
	eb, _ := b.Endpoints("acme")
	ga, _ := a.Endpoints("globex")
	gb, _ := b.Endpoints("globex")
	if len(ka) != 2 || len(kb) != 2 || ka[0].ID != kb[0].ID || ka[1].ID != kb[1].ID || len(ea) != 1 ||
		fmt.Sprint(ea) != fmt.Sprint(eb) || len(ga) != 1 || fmt.Sprint(ga) != fmt.Sprint(gb) || ga[0].Source != paymock.EndpointDefault {
		t.Fatalf("configured keys %v / %v and endpoints %v / %v, %v / %v differ between replicas", ka, kb, ea, eb, ga, gb)
	}

	// A key created for a configured merchant works on both.
	k, err := b.CreateKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := a.Authenticate(k.Key); err != nil || m.ID != "acme" {
		t.Errorf("created on B, on A: %v, %v", m, err)
	}

	if err := a.RevokeKey("acme", ka[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate("sk_test_acme_1"); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("revoked on A, on A: %v", err)
	}
	// B checks configured keys in memory, and reads revocations in the
	// background: within about a second it refuses the key too.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := b.Authenticate("sk_test_acme_1")
		if errors.Is(err, paymock.ErrUnknownKey) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still takes the configured key A revoked 5 s ago: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A replica started later refuses it from its first request, and its
	// listings agree.
	c := replicaMerchants(t, stores[2], cfg)
	if _, err := c.Authenticate("sk_test_acme_1"); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("a replica started after the revocation takes the key: %v", err)
	}
	kb, _ = b.Keys("acme")
	kc, _ := c.Keys("acme")
	if len(kb) != 2 || len(kc) != 2 || kb[0].ID != ka[1].ID || kb[1].ID != k.ID || kc[0].ID != kb[0].ID || kc[1] != kb[1] {
		t.Errorf("keys on B %v and C %v; want the second configured key and the created one", kb, kc)
	}
	if m, err := c.Authenticate("sk_test_acme_2"); err != nil || m.ID != "acme" {
		t.Errorf("the other configured key: %v, %v", m, err)
	}
	if err := b.RevokeKey("acme", ka[0].ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("revoking again on B: %v, want ErrNotFound", err)
	}
	if _, err := b.DisableEndpoint("acme", ea[0].ID); err == nil {
		t.Error("a configured endpoint was disabled")
	}
}

func TestMerchants_CapAndForgetOnAReplicaLeaveSharedMerchantsAlone(t *testing.T) {
	stores, _ := openShared(t, 2)
	clock := time.Now()
	now := func() time.Time { return clock }
	a := replicaMerchants(t, stores[0], paymock.MerchantsConfig{Now: now})
	b := replicaMerchants(t, stores[1], paymock.MerchantsConfig{Now: now, MaxMerchants: 1})

	m1, _ := a.Authenticate("sk_test_first_merchant")
	m2, _ := a.Authenticate("sk_test_second_merchant")
	if _, err := b.Authenticate("sk_test_first_merchant"); err != nil {
		t.Fatal(err)
	}
	// B holds its cap of one; a merchant the store knows is still served.
	if m, err := b.Authenticate("sk_test_second_merchant"); err != nil || m.ID != m2.ID {
		t.Errorf("a known merchant past B's cap: %v, %v; want it served", m, err)
	}
	if b.OpenCount() != 1 {
		t.Errorf("B holds %d merchants, want its cap of 1", b.OpenCount())
	}
	if _, err := b.Authenticate("sk_test_third_merchant"); !errors.Is(err, paymock.ErrMerchantLimit) {
		t.Errorf("a new token past B's cap: %v, want ErrMerchantLimit", err)
	}

	k, err := a.CreateKey(m1.ID)
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if gone := a.Forget(clock, time.Minute, nil); len(gone) != 2 || a.OpenCount() != 0 {
		t.Fatalf("A forgot %v, holds %d", gone, a.OpenCount())
	}
	// Forgetting on A dropped only A's copy.
	if m, err := b.Authenticate(k.Key); err != nil || m.ID != m1.ID {
		t.Errorf("B after A forgot: %v, %v", m, err)
	}
	if m, err := a.Authenticate("sk_test_first_merchant"); err != nil || m.ID != m1.ID {
		t.Errorf("the token back on A: %v, %v; want the same merchant", m, err)
	}
	if keys, err := a.Keys(m1.ID); err != nil || len(keys) != 2 {
		t.Errorf("keys on A after forgetting: %v, %v; want the token and the created key", keys, err)
	}
}

func TestMerchants_DatabaseDownIsUnavailableButConfiguredKeysStillWork(t *testing.T) {
	stores, url := openShared(t, 1)
	db := openDatabase(t, url)
	cfg := paymock.MerchantsConfig{Merchants: []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme_1"}}}}
	ms := replicaMerchants(t, stores[0], cfg)
	k, err := ms.CreateKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := ms.AddEndpoint("acme", "https://hooks.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if d := ms.Deliverable("acme"); len(d) != 1 {
		t.Fatalf("Deliverable = %v", d)
	}

	db.down()
	start := time.Now()
	if _, err := ms.Authenticate(k.Key); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("a created key with the database down: %v, want ErrUnavailable", err)
	}
	if _, err := ms.Keys("acme"); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("Keys with the database down: %v", err)
	}
	if _, err := ms.CreateKey("acme"); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("CreateKey with the database down: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("failing took %s", time.Since(start))
	}
	if m, err := ms.Authenticate("sk_test_acme_1"); err != nil || m.ID != "acme" {
		t.Errorf("a configured key with the database down: %v, %v; it never asks the database", m, err)
	}
	// An event fired now still goes where the last one went.
	if d := ms.Deliverable("acme"); len(d) != 1 || d[0].ID != ep.ID {
		t.Errorf("Deliverable with the database down = %v, want the endpoint read last", d)
	}

	db.up()
	deadline := time.Now().Add(15 * time.Second)
	for {
		m, err := ms.Authenticate(k.Key)
		if err == nil && m.ID == "acme" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v 15 s after the database came back", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
