// Run-time keys, endpoints and open-mode merchants kept in a store every
// replica shares: the seam (MerchantStore) and Merchants' side of it.

package paymock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// StoredKey is an API key as a shared store keeps it: its SHA-256 digest
// and its masked form, never the key itself.
type StoredKey struct {
	// Digest is the SHA-256 of the whole key; a key is found by it.
	Digest [32]byte
	// ID is the key's "ak_..." handle, unique within its merchant.
	ID         string
	MerchantID string
	// Masked is MaskKey of the key, what listings show.
	Masked string
	// Source is KeyCreated, KeyOpen (the token that made an open-mode
	// merchant: one per merchant) or KeyFromConfig (a configured key,
	// only ever stored revoked, so that every replica refuses it).
	Source  KeySource
	Created time.Time
	// Revoked keys are found by Key, never listed by Keys.
	Revoked bool
}

// StoredEndpoint is a webhook endpoint added at run time, as a shared store
// keeps it. The secret is kept whole: deliveries are signed with it.
type StoredEndpoint struct {
	MerchantID string
	// ID is the endpoint's "we_..." handle, unique within its merchant.
	ID       string
	URL      string
	Secret   string
	Disabled bool
	Created  time.Time
}

// ErrLimitReached is wrapped by MerchantStore.AddKey and AddEndpoint when
// the merchant already holds as many as it may; nothing is stored.
var ErrLimitReached = errors.New("limit reached")

// ErrDuplicate is wrapped by MerchantStore.AddKey and AddEndpoint when the
// digest, the id within the merchant, or (for an open-mode token) the
// merchant id is already stored; nothing is stored.
var ErrDuplicate = errors.New("already stored")

// KeyStore keeps run-time API keys for every replica: keys created at run
// time, open-mode tokens (which make their merchants) and revocations.
// Errors that mean the store cannot be reached wrap ErrUnavailable.
type KeyStore interface {
	// Key returns the key of a digest, live or revoked; false when none
	// is stored.
	Key(ctx context.Context, digest [32]byte) (StoredKey, bool, error)
	// OpenKey returns the token of an open-mode merchant, live or
	// revoked; false when the store knows no open-mode merchant of that id.
	OpenKey(ctx context.Context, merchantID string) (StoredKey, bool, error)
	// AddKey stores k, live or revoked as k says. When limit >= 0 and k's
	// merchant already holds limit live keys of k's source, it stores
	// nothing and wraps ErrLimitReached; see ErrDuplicate for the rest.
	AddKey(ctx context.Context, k StoredKey, limit int) error
	// Keys lists a merchant's live keys: its open-mode token first, then
	// the others oldest first.
	Keys(ctx context.Context, merchantID string) ([]StoredKey, error)
	// RevokeKey revokes one of a merchant's live keys, then forgets the
	// merchant's oldest revoked created keys past keep (an open-mode token
	// or a configured key stays revoked for good). False when the merchant
	// has no live key of that id.
	RevokeKey(ctx context.Context, merchantID, keyID string, keep int) (bool, error)
	// RevokedDigests lists the digests of the revoked keys of one source.
	RevokedDigests(ctx context.Context, source KeySource) ([][32]byte, error)
}

// EndpointStore keeps the webhook endpoints merchants add at run time for
// every replica. Errors that mean the store cannot be reached wrap
// ErrUnavailable.
type EndpointStore interface {
	// AddEndpoint stores e. When limit >= 0 and e's merchant already holds
	// limit endpoints, it stores nothing and wraps ErrLimitReached; an id the
	// merchant already has wraps ErrDuplicate.
	AddEndpoint(ctx context.Context, e StoredEndpoint, limit int) error
	// Endpoints lists a merchant's endpoints, oldest first.
	Endpoints(ctx context.Context, merchantID string) ([]StoredEndpoint, error)
	// SetEndpointDisabled disables or enables one of a merchant's
	// endpoints and returns it; false when it has none of that id.
	SetEndpointDisabled(ctx context.Context, merchantID, id string, disabled bool) (StoredEndpoint, bool, error)
	// DeleteEndpoint removes one of a merchant's endpoints; false when it
	// has none of that id.
	DeleteEndpoint(ctx context.Context, merchantID, id string) (bool, error)
}

// MerchantStore is where Merchants keeps what it makes at run time when
// several replicas share one store (MerchantsConfig.Store). Configured
// merchants, their keys and endpoints and the default endpoints stay in
// memory: they come from the configuration, the same on every replica.
type MerchantStore interface {
	KeyStore
	EndpointStore
}

// storeTimeout bounds one call of Merchants to its store: Merchants'
// methods take no context, and a request must not hang on a database.
const storeTimeout = 5 * time.Second

// revokedRefreshEvery is how often, at most, a replica reads the
// configured keys revoked on other replicas. Authenticating a configured
// key never waits for the store: the read runs in the background.
const revokedRefreshEvery = time.Second

func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// sharedID is the id of a configured key or endpoint on a shared store:
// derived from where it is in the configuration, so that every replica of
// one configuration gives it the same id, and not from the key, which may
// be short enough to find again from a digest of it.
func sharedID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	out := make([]byte, 0, len(prefix)+1+IDLength)
	out = append(out, prefix...)
	out = append(out, '_')
	for _, b := range sum[:IDLength] {
		out = append(out, base62[int(b)%len(base62)])
	}
	return string(out)
}

// tokenIDOf is the key id of an open-mode token, as tokenID.
func tokenIDOf(h [32]byte) string {
	return (&merchantEntry{hash: h}).tokenID()
}

// sharedEntry finds a merchant on a shared store: one held here, or an
// open-mode merchant the store knows, which is then held (past the cap it
// is served without being held). An unknown one wraps ErrNotFound.
func (ms *Merchants) sharedEntry(ctx context.Context, merchantID string) (*merchantEntry, error) {
	ms.mu.RLock()
	e := ms.byID[merchantID]
	ms.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	if !ms.open {
		return nil, fmt.Errorf("no such merchant: %w", ErrNotFound)
	}
	if _, found, err := ms.store.OpenKey(ctx, merchantID); err != nil {
		return nil, err
	} else if !found {
		return nil, fmt.Errorf("no such merchant: %w", ErrNotFound)
	}
	return ms.holdOpen(merchantID), nil
}

// holdOpen returns the entry of an open-mode merchant the store knows,
// held by this replica from now on unless it already holds its cap of
// them: then the entry is served for this request only. The cap bounds
// what this replica keeps; it never refuses a merchant the store knows.
func (ms *Merchants) holdOpen(id string) *merchantEntry {
	ms.mu.RLock()
	e := ms.byID[id]
	ms.mu.RUnlock()
	if e != nil {
		return e
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if e := ms.byID[id]; e != nil {
		return e
	}
	now := ms.now().UnixNano()
	e = &merchantEntry{open: true, created: now}
	e.ID, e.Name = id, id
	e.PCIApproved = true
	e.Accounts = ms.sandboxAccts
	e.lastUsed.Store(now)
	if ms.maxMerchants < 0 || ms.openCount < ms.maxMerchants {
		ms.byID[id] = e
		ms.openCount++
	}
	return e
}

// authenticateShared finds a key that is not a configured one in the
// shared store, and in open mode makes the merchant of a new token there.
// Every call asks the store, so a key revoked on any replica is refused
// here at once.
func (ms *Merchants) authenticateShared(h [32]byte, key string) (*merchantEntry, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	k, found, err := ms.store.Key(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	switch {
	case found && k.Revoked:
		return nil, ErrUnknownKey
	case found && ms.open:
		return ms.holdOpen(k.MerchantID), nil
	case found:
		ms.mu.RLock()
		e := ms.byID[k.MerchantID]
		ms.mu.RUnlock()
		if e == nil || k.Source == KeyOpen {
			return nil, ErrUnknownKey // left by an earlier configuration
		}
		return e, nil
	case !ms.open:
		return nil, ErrUnknownKey
	}
	return ms.addOpenShared(ctx, h, key)
}

// addOpenShared stores the token of a new open-mode merchant, unless this
// replica holds its cap of merchants. Two replicas seeing one new token at
// once make one merchant: the second finds the first's.
func (ms *Merchants) addOpenShared(ctx context.Context, h [32]byte, key string) (*merchantEntry, error) {
	ms.mu.RLock()
	full := ms.maxMerchants >= 0 && ms.openCount >= ms.maxMerchants
	ms.mu.RUnlock()
	if full {
		return nil, fmt.Errorf("%w: this sandbox holds at most %d merchants in open mode; use a key that has been used before, or wait until idle merchants are forgotten",
			ErrMerchantLimit, ms.maxMerchants)
	}
	k := StoredKey{Digest: h, ID: tokenIDOf(h), Masked: MaskKey(key), Source: KeyOpen, Created: ms.now()}
	// Two tokens whose digests share 48 bits get the longer id.
	for _, id := range []string{"key_" + hex.EncodeToString(h[:6]), "key_" + hex.EncodeToString(h[:16])} {
		k.MerchantID = id
		err := ms.store.AddKey(ctx, k, -1)
		if err == nil {
			return ms.holdOpen(id), nil
		}
		if !errors.Is(err, ErrDuplicate) {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		// Stored meanwhile by another request, or the id is another
		// token's merchant.
		got, found, err := ms.store.Key(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if found {
			if got.Revoked {
				return nil, ErrUnknownKey
			}
			return ms.holdOpen(got.MerchantID), nil
		}
	}
	// Digests sharing 128 bits: a crafted collision.
	return nil, ErrUnknownKey
}

// refreshRevoked drops the configured keys revoked on any replica.
func (ms *Merchants) refreshRevoked(ctx context.Context) error {
	at := time.Now().UnixNano()
	ds, err := ms.store.RevokedDigests(ctx, KeyFromConfig)
	if err != nil {
		return fmt.Errorf("reading revoked configured keys: %w", err)
	}
	ms.mu.Lock()
	for _, h := range ds {
		if r := ms.keys[h]; r != nil && r.source == KeyFromConfig {
			ms.dropKeyLocked(h, r)
		}
	}
	ms.mu.Unlock()
	ms.revokedRead.Store(at)
	return nil
}

// maybeRefreshRevoked starts a refreshRevoked in the background when the
// last one is older than revokedRefreshEvery and none is running.
func (ms *Merchants) maybeRefreshRevoked() {
	if time.Now().UnixNano()-ms.revokedRead.Load() < int64(revokedRefreshEvery) || !ms.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer ms.refreshing.Store(false)
		ctx, cancel := storeCtx()
		defer cancel()
		if err := ms.refreshRevoked(ctx); err != nil {
			ms.log.Warn("configured keys revoked on other replicas not read; trying again on the next request", "error", err)
		}
	}()
}

// dropKeyLocked forgets a configured or created key held in memory;
// ms.mu must be held for writing.
func (ms *Merchants) dropKeyLocked(h [32]byte, r *keyRecord) {
	delete(ms.keys, h)
	if e := r.owner; e.ext != nil {
		for i, x := range e.ext.keys {
			if x == r {
				e.ext.keys = append(e.ext.keys[:i:i], e.ext.keys[i+1:]...)
				break
			}
		}
	}
}

func listedStored(k StoredKey) APIKey {
	return APIKey{ID: k.ID, Masked: k.Masked, Source: k.Source, Created: k.Created}
}

func (ms *Merchants) createKeyShared(merchantID, key string, h [32]byte) (NewKey, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	if _, err := ms.sharedEntry(ctx, merchantID); err != nil {
		return NewKey{}, err
	}
	ms.mu.RLock()
	taken := ms.keys[h] != nil
	ms.mu.RUnlock()
	if taken {
		return NewKey{}, fmt.Errorf("create api key: the random source repeated itself")
	}
	k := StoredKey{Digest: h, MerchantID: merchantID, Masked: MaskKey(key), Source: KeyCreated, Created: ms.now()}
	// A seeded run draws the same ids on every replica: one taken by
	// another replica is drawn again.
	for range 8 {
		k.ID = ms.ids.New(keyIDPrefix)
		err := ms.store.AddKey(ctx, k, MaxCreatedKeys)
		switch {
		case err == nil:
			return NewKey{APIKey: listedStored(k), Key: key}, nil
		case errors.Is(err, ErrLimitReached):
			return NewKey{}, keyLimit()
		case !errors.Is(err, ErrDuplicate):
			return NewKey{}, fmt.Errorf("create api key: %w", err)
		}
	}
	return NewKey{}, fmt.Errorf("create api key: no free id after 8 draws")
}

func (ms *Merchants) keysShared(merchantID string) ([]APIKey, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	e, err := ms.sharedEntry(ctx, merchantID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	var out []APIKey
	if !e.open {
		// What another replica revoked is left out here too.
		if err := ms.refreshRevoked(ctx); err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		ms.mu.RLock()
		for _, r := range e.ext.keys {
			out = append(out, r.listed())
		}
		ms.mu.RUnlock()
	}
	stored, err := ms.store.Keys(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	for _, k := range stored {
		if k.Source == KeyOpen && !e.open {
			continue // left by an earlier open-mode run
		}
		out = append(out, listedStored(k))
	}
	return out, nil
}

func (ms *Merchants) revokeKeyShared(merchantID, keyID string) error {
	ctx, cancel := storeCtx()
	defer cancel()
	e, err := ms.sharedEntry(ctx, merchantID)
	if err != nil {
		return err
	}
	if !e.open {
		var found *keyRecord
		ms.mu.RLock()
		for _, r := range e.ext.keys {
			if r.id == keyID {
				found = r
			}
		}
		ms.mu.RUnlock()
		if found != nil {
			return ms.revokeConfigured(ctx, e, found)
		}
	}
	keep := 0 // a revoked created key of a configured merchant is simply unknown
	if ms.open {
		keep = maxRevokedKept
	}
	ok, err := ms.store.RevokeKey(ctx, merchantID, keyID, keep)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if !ok {
		return fmt.Errorf("no such api key: %w", ErrNotFound)
	}
	return nil
}

// revokeConfigured records a configured key's revocation for every
// replica and drops it here at once.
func (ms *Merchants) revokeConfigured(ctx context.Context, e *merchantEntry, r *keyRecord) error {
	h := sha256.Sum256(r.key)
	err := ms.store.AddKey(ctx, StoredKey{Digest: h, ID: r.id, MerchantID: e.ID, Masked: r.masked,
		Source: KeyFromConfig, Created: r.created, Revoked: true}, -1)
	if err != nil && !errors.Is(err, ErrDuplicate) {
		return fmt.Errorf("revoke api key: %w", err)
	}
	ms.mu.Lock()
	if ms.keys[h] == r {
		ms.dropKeyLocked(h, r)
	}
	ms.mu.Unlock()
	if err != nil { // another replica revoked it first
		return fmt.Errorf("no such api key: %w", ErrNotFound)
	}
	return nil
}

func storedEndpoint(s StoredEndpoint) Endpoint {
	return Endpoint{ID: s.ID, URL: s.URL, Secret: s.Secret, Source: EndpointAdded, Disabled: s.Disabled, Created: s.Created}
}

func (ms *Merchants) addEndpointShared(merchantID, rawURL, secret string) (Endpoint, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	if _, err := ms.sharedEntry(ctx, merchantID); err != nil {
		return Endpoint{}, err
	}
	s := StoredEndpoint{MerchantID: merchantID, URL: rawURL, Secret: secret, Created: ms.now()}
	for range 8 {
		s.ID = ms.ids.New(endpointIDPrefix)
		err := ms.store.AddEndpoint(ctx, s, MaxAddedEndpoints)
		switch {
		case err == nil:
			return storedEndpoint(s), nil
		case errors.Is(err, ErrLimitReached):
			return Endpoint{}, endpointLimit()
		case !errors.Is(err, ErrDuplicate):
			return Endpoint{}, fmt.Errorf("add webhook endpoint: %w", err)
		}
	}
	return Endpoint{}, fmt.Errorf("add webhook endpoint: no free id after 8 draws")
}

// configuredEndpoints lists e's configured or default endpoints.
func (ms *Merchants) configuredEndpoints(e *merchantEntry) []*endpointRecord {
	var out []*endpointRecord
	ms.mu.RLock()
	ms.eachEndpointLocked(e, func(r *endpointRecord) { out = append(out, r) })
	ms.mu.RUnlock()
	return out
}

func (ms *Merchants) endpointsShared(merchantID string) ([]Endpoint, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	e, err := ms.sharedEntry(ctx, merchantID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	var out []Endpoint
	for _, r := range ms.configuredEndpoints(e) {
		out = append(out, r.endpoint())
	}
	stored, err := ms.store.Endpoints(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	for _, s := range stored {
		out = append(out, storedEndpoint(s))
	}
	return out, nil
}

func (ms *Merchants) endpointShared(merchantID, endpointID string) (Endpoint, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	r, err := ms.configuredEndpoint(ctx, merchantID, endpointID)
	if err != nil || r != nil {
		if r != nil {
			return r.endpoint(), nil
		}
		return Endpoint{}, err
	}
	stored, err := ms.store.Endpoints(ctx, merchantID)
	if err != nil {
		return Endpoint{}, fmt.Errorf("read webhook endpoint: %w", err)
	}
	for _, s := range stored {
		if s.ID == endpointID {
			return storedEndpoint(s), nil
		}
	}
	return Endpoint{}, fmt.Errorf("no such webhook endpoint: %w", ErrNotFound)
}

// configuredEndpoint finds a configured or default endpoint of a merchant
// on a shared store; nil when the id is none of them.
func (ms *Merchants) configuredEndpoint(ctx context.Context, merchantID, endpointID string) (*endpointRecord, error) {
	e, err := ms.sharedEntry(ctx, merchantID)
	if err != nil {
		return nil, err
	}
	for _, r := range ms.configuredEndpoints(e) {
		if r.id == endpointID {
			return r, nil
		}
	}
	return nil, nil
}

func (ms *Merchants) setDisabledShared(merchantID, endpointID string, disabled bool) (Endpoint, error) {
	ctx, cancel := storeCtx()
	defer cancel()
	r, err := ms.configuredEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return Endpoint{}, err
	}
	if r != nil {
		verb := "disabled"
		if !disabled {
			verb = "enabled"
		}
		return Endpoint{}, readOnly(r, verb)
	}
	s, ok, err := ms.store.SetEndpointDisabled(ctx, merchantID, endpointID, disabled)
	if err != nil {
		return Endpoint{}, fmt.Errorf("change webhook endpoint: %w", err)
	}
	if !ok {
		return Endpoint{}, fmt.Errorf("no such webhook endpoint: %w", ErrNotFound)
	}
	return storedEndpoint(s), nil
}

func (ms *Merchants) deleteEndpointShared(merchantID, endpointID string) error {
	ctx, cancel := storeCtx()
	defer cancel()
	r, err := ms.configuredEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return err
	}
	if r != nil {
		return readOnly(r, "deleted")
	}
	ok, err := ms.store.DeleteEndpoint(ctx, merchantID, endpointID)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if !ok {
		return fmt.Errorf("no such webhook endpoint: %w", ErrNotFound)
	}
	return nil
}

// deliverableShared reads the merchant's added endpoints at each event, so
// that one added, disabled or deleted on any replica counts at once. When
// the store cannot be read, the endpoints read at the merchant's last event
// on this replica stand in, so that an event fired in a brief outage still
// reaches them.
func (ms *Merchants) deliverableShared(merchantID string) []WebhookEndpoint {
	ctx, cancel := storeCtx()
	defer cancel()
	e, err := ms.sharedEntry(ctx, merchantID)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			ms.log.Warn("webhook endpoints not read: the event goes to none", "merchant", merchantID, "error", err)
		}
		return nil
	}
	var out []WebhookEndpoint
	for _, r := range ms.configuredEndpoints(e) {
		out = append(out, WebhookEndpoint{ID: r.id, URL: r.url, Secret: r.secret})
	}
	stored, err := ms.store.Endpoints(ctx, merchantID)
	if err != nil {
		ms.mu.RLock()
		var last []WebhookEndpoint
		if e.ext != nil {
			last = e.ext.lastAdded
		}
		ms.mu.RUnlock()
		ms.log.Warn("added webhook endpoints not read: the event goes to those read at the last event",
			"merchant", merchantID, "endpoints", len(last), "error", err)
		return append(out, last...)
	}
	var added []WebhookEndpoint
	for _, s := range stored {
		if !s.Disabled {
			added = append(added, WebhookEndpoint{ID: s.ID, URL: s.URL, Secret: s.Secret})
		}
	}
	ms.rememberAdded(e, added)
	return append(out, added...)
}

// rememberAdded keeps the enabled added endpoints just read, for
// deliverableShared to fall back on; it writes only when they changed.
func (ms *Merchants) rememberAdded(e *merchantEntry, added []WebhookEndpoint) {
	ms.mu.RLock()
	var last []WebhookEndpoint
	if e.ext != nil {
		last = e.ext.lastAdded
	}
	same := len(last) == len(added)
	for i := 0; same && i < len(added); i++ {
		same = last[i] == added[i]
	}
	ms.mu.RUnlock()
	if same {
		return
	}
	ms.mu.Lock()
	e.extras().lastAdded = added
	ms.mu.Unlock()
}

// byIDShared finds an open-mode merchant this replica does not hold in the
// store, so that a hosted page or a due payment of a merchant first seen
// on another replica finds its merchant here.
func (ms *Merchants) byIDShared(id string) (*Merchant, bool) {
	ctx, cancel := storeCtx()
	defer cancel()
	e, err := ms.sharedEntry(ctx, id)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			ms.log.Warn("merchant not read from the store", "merchant", id, "error", err)
		}
		return nil, false
	}
	return &e.Merchant, true
}
