// The merchant registry's records in memory: run-time keys by digest,
// open-mode tokens, revocations and added endpoints (paymock.MerchantStore).

package memory

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

var _ paymock.MerchantStore = (*Merchants)(nil)

// Merchants keeps the merchant registry's run-time records in this
// process. Every method answers from maps under one lock; Key, asked on
// every request with a run-time key, allocates nothing. An idle open-mode
// merchant costs one key record here (64 bytes and one string of its id,
// its key's id and masked form) and one map slot; the registry's own entry
// is the rest.
type Merchants struct {
	mu sync.RWMutex
	// byDigest finds every key but the open-mode tokens stored under the
	// merchant id their digest gives (paymock.OpenMerchantID): those are
	// found by that id in open, which spares a map slot per merchant.
	byDigest map[[32]byte]*storedKey
	// open finds an open-mode merchant's token by the merchant's id.
	open map[string]*storedKey
	// of holds the rest of a merchant's records, for the merchants that
	// have any: most open-mode merchants have none.
	of map[string]*merchantRecords
}

// NewMerchants returns an empty store.
func NewMerchants() *Merchants {
	return &Merchants{
		byDigest: make(map[[32]byte]*storedKey),
		open:     make(map[string]*storedKey),
		of:       make(map[string]*merchantRecords),
	}
}

// storedKey is a paymock.StoredKey kept compactly: one idle open-mode
// merchant is one of these.
type storedKey struct {
	digest [32]byte
	// strs is the merchant's id, the key's id and its masked form in one
	// allocation, split at mLen and mLen+idLen. The maps' keys are pieces
	// of it too, and Key hands out its merchant id for the registry to
	// keep: an open-mode merchant's id is allocated once.
	strs    string
	created int64 // Unix ns
	mLen    uint16
	idLen   uint16
	source  uint8 // index in sources
	revoked bool
}

func (k *storedKey) merchantID() string { return k.strs[:k.mLen] }
func (k *storedKey) id() string         { return k.strs[k.mLen : k.mLen+k.idLen] }
func (k *storedKey) masked() string     { return k.strs[k.mLen+k.idLen:] }

var sources = [...]paymock.KeySource{paymock.KeyCreated, paymock.KeyOpen, paymock.KeyFromConfig}

func sourceIndex(s paymock.KeySource) (uint8, error) {
	if i := slices.Index(sources[:], s); i >= 0 {
		return uint8(i), nil
	}
	return 0, fmt.Errorf("key source %q: want created, open or config", s)
}

func (k *storedKey) stored() paymock.StoredKey {
	return paymock.StoredKey{Digest: k.digest, ID: k.id(), MerchantID: k.merchantID(), Masked: k.masked(),
		Source: sources[k.source], Created: time.Unix(0, k.created).UTC(), Revoked: k.revoked}
}

// merchantRecords are one merchant's keys but its open-mode token, and its
// added endpoints.
type merchantRecords struct {
	keys []*storedKey // live and revoked, oldest first
	// revoked are its revoked created keys, oldest revocation first: the
	// ones pruned past RevokeKey's keep.
	revoked   []*storedKey
	endpoints []paymock.StoredEndpoint // oldest first
}

func (m *Merchants) recordsLocked(merchantID string) *merchantRecords {
	r := m.of[merchantID]
	if r == nil {
		r = &merchantRecords{}
		m.of[merchantID] = r
	}
	return r
}

// keyLocked finds the key of a digest, in byDigest or under the merchant
// id the digest gives. It allocates nothing.
func (m *Merchants) keyLocked(digest [32]byte) *storedKey {
	if k := m.byDigest[digest]; k != nil {
		return k
	}
	var buf [len("key_") + 32]byte
	for _, long := range [...]bool{false, true} {
		if k := m.open[string(paymock.AppendOpenMerchantID(buf[:0], digest, long))]; k != nil && k.digest == digest {
			return k
		}
	}
	return nil
}

// derivedID reports whether merchantID is one the digest gives.
func derivedID(digest [32]byte, merchantID string) bool {
	var buf [len("key_") + 32]byte
	return string(paymock.AppendOpenMerchantID(buf[:0], digest, false)) == merchantID ||
		string(paymock.AppendOpenMerchantID(buf[:0], digest, true)) == merchantID
}

// Key implements paymock.KeyStore.
func (m *Merchants) Key(_ context.Context, digest [32]byte) (paymock.StoredKey, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k := m.keyLocked(digest)
	if k == nil {
		return paymock.StoredKey{}, false, nil
	}
	return k.stored(), true, nil
}

// OpenKey implements paymock.KeyStore.
func (m *Merchants) OpenKey(_ context.Context, merchantID string) (paymock.StoredKey, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k := m.open[merchantID]
	if k == nil {
		return paymock.StoredKey{}, false, nil
	}
	return k.stored(), true, nil
}

// AddKey implements paymock.KeyStore.
func (m *Merchants) AddKey(_ context.Context, k paymock.StoredKey, limit int) error {
	src, err := sourceIndex(k.Source)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.of[k.MerchantID]
	if limit >= 0 {
		n := 0
		if k.Source == paymock.KeyOpen {
			if o := m.open[k.MerchantID]; o != nil && !o.revoked {
				n++
			}
		} else if recs != nil {
			for _, x := range recs.keys {
				if x.source == src && !x.revoked {
					n++
				}
			}
		}
		if n >= limit {
			return fmt.Errorf("add api key for %s: %w", k.MerchantID, paymock.ErrLimitReached)
		}
	}
	taken := m.keyLocked(k.Digest) != nil
	if o := m.open[k.MerchantID]; o != nil && (o.id() == k.ID || k.Source == paymock.KeyOpen) {
		taken = true
	}
	if recs != nil && slices.ContainsFunc(recs.keys, func(x *storedKey) bool { return x.id() == k.ID }) {
		taken = true
	}
	if taken {
		return fmt.Errorf("add api key %s for %s: %w", k.ID, k.MerchantID, paymock.ErrDuplicate)
	}
	if len(k.MerchantID) > math.MaxUint16 || len(k.ID) > math.MaxUint16 {
		return fmt.Errorf("add api key: a merchant id of %d bytes and a key id of %d: want at most %d each",
			len(k.MerchantID), len(k.ID), math.MaxUint16)
	}
	s := &storedKey{digest: k.Digest, strs: k.MerchantID + k.ID + k.Masked, mLen: uint16(len(k.MerchantID)),
		idLen: uint16(len(k.ID)), created: k.Created.UnixNano(), source: src, revoked: k.Revoked}
	if k.Source == paymock.KeyOpen {
		m.open[s.merchantID()] = s
		if !derivedID(k.Digest, k.MerchantID) {
			m.byDigest[k.Digest] = s
		}
		return nil
	}
	m.byDigest[k.Digest] = s
	recs = m.recordsLocked(s.merchantID())
	recs.keys = append(recs.keys, s)
	if s.revoked && k.Source == paymock.KeyCreated {
		recs.revoked = append(recs.revoked, s)
	}
	return nil
}

// Keys implements paymock.KeyStore.
func (m *Merchants) Keys(_ context.Context, merchantID string) ([]paymock.StoredKey, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []paymock.StoredKey
	if o := m.open[merchantID]; o != nil && !o.revoked {
		out = append(out, o.stored())
	}
	if recs := m.of[merchantID]; recs != nil {
		for _, k := range recs.keys {
			if !k.revoked {
				out = append(out, k.stored())
			}
		}
	}
	return out, nil
}

// RevokeKey implements paymock.KeyStore.
func (m *Merchants) RevokeKey(_ context.Context, merchantID, keyID string, keep int) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.of[merchantID]
	if o := m.open[merchantID]; o != nil && o.id() == keyID && !o.revoked {
		o.revoked = true
	} else if recs == nil {
		return false, nil
	} else if i := slices.IndexFunc(recs.keys, func(k *storedKey) bool { return k.id() == keyID && !k.revoked }); i >= 0 {
		k := recs.keys[i]
		k.revoked = true
		if sources[k.source] == paymock.KeyCreated {
			recs.revoked = append(recs.revoked, k)
		}
	} else {
		return false, nil
	}
	if recs != nil {
		for len(recs.revoked) > max(keep, 0) {
			m.dropKeyLocked(recs, recs.revoked[0])
			recs.revoked = recs.revoked[1:]
		}
	}
	return true, nil
}

// dropKeyLocked forgets one of a merchant's keys but its open-mode token.
func (m *Merchants) dropKeyLocked(recs *merchantRecords, k *storedKey) {
	delete(m.byDigest, k.digest)
	recs.keys = slices.DeleteFunc(recs.keys, func(x *storedKey) bool { return x == k })
}

// RevokedDigests implements paymock.KeyStore. It reads every key: the
// registry asks only for configured keys, which only a sandbox with
// configured merchants (and so no open-mode tokens) has.
func (m *Merchants) RevokedDigests(_ context.Context, source paymock.KeySource) ([][32]byte, error) {
	src, err := sourceIndex(source)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out [][32]byte
	for d, k := range m.byDigest {
		if k.revoked && k.source == src {
			out = append(out, d)
		}
	}
	for _, k := range m.open {
		if k.revoked && k.source == src && m.byDigest[k.digest] != k {
			out = append(out, k.digest)
		}
	}
	return out, nil
}

// AddEndpoint implements paymock.EndpointStore.
func (m *Merchants) AddEndpoint(_ context.Context, e paymock.StoredEndpoint, limit int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var have []paymock.StoredEndpoint
	if recs := m.of[e.MerchantID]; recs != nil {
		have = recs.endpoints
	}
	if limit >= 0 && len(have) >= limit {
		return fmt.Errorf("add webhook endpoint for %s: %w", e.MerchantID, paymock.ErrLimitReached)
	}
	if slices.ContainsFunc(have, func(x paymock.StoredEndpoint) bool { return x.ID == e.ID }) {
		return fmt.Errorf("add webhook endpoint %s for %s: %w", e.ID, e.MerchantID, paymock.ErrDuplicate)
	}
	e.Created = e.Created.Round(0).UTC()
	recs := m.recordsLocked(e.MerchantID)
	recs.endpoints = append(recs.endpoints, e)
	return nil
}

// Endpoints implements paymock.EndpointStore.
func (m *Merchants) Endpoints(_ context.Context, merchantID string) ([]paymock.StoredEndpoint, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	recs := m.of[merchantID]
	if recs == nil || len(recs.endpoints) == 0 {
		return nil, nil
	}
	return slices.Clone(recs.endpoints), nil
}

// SetEndpointDisabled implements paymock.EndpointStore.
func (m *Merchants) SetEndpointDisabled(_ context.Context, merchantID, id string, disabled bool) (paymock.StoredEndpoint, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.of[merchantID]
	if recs == nil {
		return paymock.StoredEndpoint{}, false, nil
	}
	for i := range recs.endpoints {
		if recs.endpoints[i].ID == id {
			recs.endpoints[i].Disabled = disabled
			return recs.endpoints[i], true, nil
		}
	}
	return paymock.StoredEndpoint{}, false, nil
}

// DeleteEndpoint implements paymock.EndpointStore.
func (m *Merchants) DeleteEndpoint(_ context.Context, merchantID, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.of[merchantID]
	if recs == nil {
		return false, nil
	}
	n := len(recs.endpoints)
	// A new slice: what Endpoints handed out earlier stays as it was.
	recs.endpoints = slices.DeleteFunc(slices.Clone(recs.endpoints), func(e paymock.StoredEndpoint) bool { return e.ID == id })
	return len(recs.endpoints) < n, nil
}

// ReleaseMerchant implements paymock.MerchantStore. This store is this
// process's alone: a merchant the registry no longer holds can never be
// reached again, so all its records go.
func (m *Merchants) ReleaseMerchant(_ context.Context, merchantID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o := m.open[merchantID]; o != nil {
		if m.byDigest[o.digest] == o {
			delete(m.byDigest, o.digest)
		}
		delete(m.open, merchantID)
	}
	if recs := m.of[merchantID]; recs != nil {
		for _, k := range recs.keys {
			delete(m.byDigest, k.digest)
		}
		delete(m.of, merchantID)
	}
	return nil
}
