// Tests of run-time keys, endpoints and open-mode merchants on PostgreSQL:
// the store's conformance suite, then merchants.Registry over two stores
// on one database, as two replicas hold them.

package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/merchantstest"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/merchants"
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

func TestMerchantStore_Conformance(t *testing.T) {
	merchantstest.Run(t, func(t *testing.T) paymock.MerchantStore {
		stores, _ := openShared(t, 1)
		return stores[0]
	})
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
			err := s.AddKey(ctx, merchantstest.StoredKey("acme", fmt.Sprint("sk_test_", i), paymock.KeyCreated), limit)
			if err == nil {
				keys.Add(1)
			} else if !errors.Is(err, paymock.ErrLimitReached) {
				t.Error(err)
			}
		})
		wg.Go(func() {
			err := s.AddEndpoint(ctx, merchantstest.StoredEndpoint("acme", fmt.Sprint("we_", i)), limit)
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

// replicaMerchants is one replica's registry over its own store.
func replicaMerchants(t *testing.T, st *postgres.Store, cfg merchants.Config) *merchants.Registry {
	t.Helper()
	cfg.Store = st
	ms, err := merchants.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestMerchants_OpenModeMerchantsKeysAndEndpointsAreSharedByReplicas(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 2)
	a := replicaMerchants(t, stores[0], merchants.Config{})
	b := replicaMerchants(t, stores[1], merchants.Config{})
	const token = "sk_test_shared_token_0123"

	ma, err := a.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	// B finds the merchant by id before it ever sees the token: a hosted page.
	if mb, ok := b.ByID(ctx, ma.ID); !ok || mb.ID != ma.ID || !mb.PCIApproved || len(mb.Accounts) != 2 {
		t.Fatalf("ByID on the other replica = %v, %v", mb, ok)
	}
	if mb, err := b.Authenticate(ctx, token); err != nil || mb.ID != ma.ID {
		t.Fatalf("the token on the other replica: %v, %v; want merchant %s", mb, err, ma.ID)
	}
	if _, ok := b.ByID(ctx, "key_000000000000"); ok {
		t.Error("ByID found a merchant no token made")
	}

	k, err := a.CreateKey(ctx, ma.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := b.Authenticate(ctx, k.Key); err != nil || m.ID != ma.ID {
		t.Errorf("a key created on A, on B: %v, %v", m, err)
	}
	listA, errA := a.Keys(ctx, ma.ID)
	listB, errB := b.Keys(ctx, ma.ID)
	if errA != nil || errB != nil || fmt.Sprint(listA) != fmt.Sprint(listB) || len(listA) != 2 ||
		listA[0].Source != paymock.KeyOpen || listA[1].ID != k.ID || listA[1].Masked != k.Masked {
		t.Errorf("keys listed on A %v (%v) and on B %v (%v); want the token then the created key on both", listA, errA, listB, errB)
	}
	if err := b.RevokeKey(ctx, ma.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	// A keeps what it read until it hears of a change (changes.go).
	if err := stores[0].Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, k.Key); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("a key revoked on B, on A once heard: %v, want ErrUnknownKey", err)
	}
	if err := a.RevokeKey(ctx, ma.ID, k.ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("revoking on A what B revoked: %v, want ErrNotFound", err)
	}
	// The token itself, revoked on A, is refused on B and does not come
	// back as a new merchant.
	if err := a.RevokeKey(ctx, ma.ID, listA[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := stores[1].Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, token); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("the revoked token on B: %v, want ErrUnknownKey", err)
	}

	ep, err := a.AddEndpoint(ctx, ma.ID, "https://hooks.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Endpoint(ctx, ma.ID, ep.ID); err != nil || got.Secret != ep.Secret || got.URL != ep.URL {
		t.Errorf("the endpoint on B = %+v, %v; want its secret", got, err)
	}
	if d := b.Deliverable(ctx, ma.ID); len(d) != 1 || d[0].ID != ep.ID || d[0].Secret != ep.Secret {
		t.Errorf("Deliverable on B = %v", d)
	}
	if _, err := b.DisableEndpoint(ctx, ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if d := a.Deliverable(ctx, ma.ID); len(d) != 0 {
		t.Errorf("Deliverable on A after B disabled it = %v", d)
	}
	if eps, err := a.Endpoints(ctx, ma.ID); err != nil || len(eps) != 1 || !eps[0].Disabled {
		t.Errorf("Endpoints on A = %v, %v; want it listed disabled", eps, err)
	}
	if _, err := a.EnableEndpoint(ctx, ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteEndpoint(ctx, ma.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if d := a.Deliverable(ctx, ma.ID); len(d) != 0 {
		t.Errorf("Deliverable on A after B deleted it = %v", d)
	}
	if _, err := a.Endpoint(ctx, ma.ID, ep.ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("the deleted endpoint on A: %v", err)
	}
}

func TestMerchants_ConcurrentFirstUseOnTwoReplicasMakesOneMerchant(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 2)
	rs := []*merchants.Registry{
		replicaMerchants(t, stores[0], merchants.Config{}),
		replicaMerchants(t, stores[1], merchants.Config{}),
	}
	const token = "sk_test_first_use_0123456"
	ids := make([]string, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			m, err := rs[i%2].Authenticate(ctx, token)
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
	if keys, err := rs[1].Keys(ctx, ids[0]); err != nil || len(keys) != 1 {
		t.Errorf("the token's merchant holds %v, %v; want its one token", keys, err)
	}
}

func TestMerchants_ConfiguredKeysStayInMemoryAndTheirRevocationIsShared(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 3)
	acme := paymock.Merchant{Name: "acme", APIKeys: []string{"sk_test_acme_1", "sk_test_acme_2"},
		Webhooks: []paymock.WebhookEndpoint{{URL: "https://acme.example/in", Secret: "whsec_AAAA"}}}
	globex := paymock.Merchant{Name: "globex", APIKeys: []string{"sk_test_globex"}}
	cfg := merchants.Config{Merchants: []paymock.Merchant{acme, globex},
		DefaultWebhooks: []paymock.WebhookEndpoint{{URL: "https://all.example/in", Secret: "whsec_BBBB"}}}
	a := replicaMerchants(t, stores[0], cfg)
	b := replicaMerchants(t, stores[1], cfg)

	// Their ids are the same on every replica (when each was "created" is
	// each replica's start).
	ka, _ := a.Keys(ctx, "acme")
	kb, _ := b.Keys(ctx, "acme")
	ea, _ := a.Endpoints(ctx, "acme")
	eb, _ := b.Endpoints(ctx, "acme")
	ga, _ := a.Endpoints(ctx, "globex")
	gb, _ := b.Endpoints(ctx, "globex")
	if len(ka) != 2 || len(kb) != 2 || ka[0].ID != kb[0].ID || ka[1].ID != kb[1].ID || len(ea) != 1 ||
		fmt.Sprint(ea) != fmt.Sprint(eb) || len(ga) != 1 || fmt.Sprint(ga) != fmt.Sprint(gb) || ga[0].Source != paymock.EndpointDefault {
		t.Fatalf("configured keys %v / %v and endpoints %v / %v, %v / %v differ between replicas", ka, kb, ea, eb, ga, gb)
	}

	// A key created for a configured merchant works on both.
	k, err := b.CreateKey(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := a.Authenticate(ctx, k.Key); err != nil || m.ID != "acme" {
		t.Errorf("created on B, on A: %v, %v", m, err)
	}

	if err := a.RevokeKey(ctx, "acme", ka[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, "sk_test_acme_1"); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("revoked on A, on A: %v", err)
	}
	// B checks configured keys in memory, and reads revocations in the
	// background: within about a second it refuses the key too.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := b.Authenticate(ctx, "sk_test_acme_1")
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
	if _, err := c.Authenticate(ctx, "sk_test_acme_1"); !errors.Is(err, paymock.ErrUnknownKey) {
		t.Errorf("a replica started after the revocation takes the key: %v", err)
	}
	kb, _ = b.Keys(ctx, "acme")
	kc, _ := c.Keys(ctx, "acme")
	if len(kb) != 2 || len(kc) != 2 || kb[0].ID != ka[1].ID || kb[1].ID != k.ID || kc[0].ID != kb[0].ID || kc[1] != kb[1] {
		t.Errorf("keys on B %v and C %v; want the second configured key and the created one", kb, kc)
	}
	if m, err := c.Authenticate(ctx, "sk_test_acme_2"); err != nil || m.ID != "acme" {
		t.Errorf("the other configured key: %v, %v", m, err)
	}
	if err := b.RevokeKey(ctx, "acme", ka[0].ID); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("revoking again on B: %v, want ErrNotFound", err)
	}
	if _, err := b.DisableEndpoint(ctx, "acme", ea[0].ID); err == nil {
		t.Error("a configured endpoint was disabled")
	}
}

func TestMerchants_CapAndForgetOnAReplicaLeaveSharedMerchantsAlone(t *testing.T) {
	ctx := t.Context()
	stores, _ := openShared(t, 2)
	clock := time.Now()
	now := func() time.Time { return clock }
	a := replicaMerchants(t, stores[0], merchants.Config{Now: now})
	b := replicaMerchants(t, stores[1], merchants.Config{Now: now, MaxMerchants: 1})

	m1, _ := a.Authenticate(ctx, "sk_test_first_merchant")
	m2, _ := a.Authenticate(ctx, "sk_test_second_merchant")
	if _, err := b.Authenticate(ctx, "sk_test_first_merchant"); err != nil {
		t.Fatal(err)
	}
	// B holds its cap of one; a merchant the store knows is still served.
	if m, err := b.Authenticate(ctx, "sk_test_second_merchant"); err != nil || m.ID != m2.ID {
		t.Errorf("a known merchant past B's cap: %v, %v; want it served", m, err)
	}
	if b.OpenCount() != 1 {
		t.Errorf("B holds %d merchants, want its cap of 1", b.OpenCount())
	}
	if _, err := b.Authenticate(ctx, "sk_test_third_merchant"); !errors.Is(err, paymock.ErrMerchantLimit) {
		t.Errorf("a new token past B's cap: %v, want ErrMerchantLimit", err)
	}

	k, err := a.CreateKey(ctx, m1.ID)
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if gone := a.Forget(ctx, clock, time.Minute, nil); len(gone) != 2 || a.OpenCount() != 0 {
		t.Fatalf("A forgot %v, holds %d", gone, a.OpenCount())
	}
	// Forgetting on A dropped only A's copy.
	if m, err := b.Authenticate(ctx, k.Key); err != nil || m.ID != m1.ID {
		t.Errorf("B after A forgot: %v, %v", m, err)
	}
	if m, err := a.Authenticate(ctx, "sk_test_first_merchant"); err != nil || m.ID != m1.ID {
		t.Errorf("the token back on A: %v, %v; want the same merchant", m, err)
	}
	if keys, err := a.Keys(ctx, m1.ID); err != nil || len(keys) != 2 {
		t.Errorf("keys on A after forgetting: %v, %v; want the token and the created key", keys, err)
	}
}

func TestMerchants_DatabaseDownIsUnavailableButConfiguredKeysStillWork(t *testing.T) {
	ctx := t.Context()
	stores, url := openShared(t, 1)
	db := openDatabase(t, url)
	cfg := merchants.Config{Merchants: []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme_1"}}}}
	ms := replicaMerchants(t, stores[0], cfg)
	k, err := ms.CreateKey(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := ms.AddEndpoint(ctx, "acme", "https://hooks.example/in")
	if err != nil {
		t.Fatal(err)
	}
	if d := ms.Deliverable(ctx, "acme"); len(d) != 1 {
		t.Fatalf("Deliverable = %v", d)
	}

	db.down()
	start := time.Now()
	if _, err := ms.Authenticate(ctx, k.Key); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("a created key with the database down: %v, want ErrUnavailable", err)
	}
	if _, err := ms.Keys(ctx, "acme"); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("Keys with the database down: %v", err)
	}
	if _, err := ms.CreateKey(ctx, "acme"); !errors.Is(err, paymock.ErrUnavailable) {
		t.Errorf("CreateKey with the database down: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("failing took %s", time.Since(start))
	}
	if m, err := ms.Authenticate(ctx, "sk_test_acme_1"); err != nil || m.ID != "acme" {
		t.Errorf("a configured key with the database down: %v, %v; it never asks the database", m, err)
	}
	// An event fired now still goes where the last one went.
	if d := ms.Deliverable(ctx, "acme"); len(d) != 1 || d[0].ID != ep.ID {
		t.Errorf("Deliverable with the database down = %v, want the endpoint read last", d)
	}

	db.up()
	deadline := time.Now().Add(15 * time.Second)
	for {
		m, err := ms.Authenticate(ctx, k.Key)
		if err == nil && m.ID == "acme" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v 15 s after the database came back", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
