// API keys made and revoked at run time, the developer section's keys:
// listed masked, shown in full once, revoked at once; and the configured
// keys revoked in the store.

package merchants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/paymock/paymock"
)

// createdKeyRandom is how many random base62 characters follow
// paymock.CreatedKeyPrefix in a created key (about 190 bits).
const createdKeyRandom = 32

// CreateKey makes a new key for a merchant and returns it; the whole key
// is in the result and nowhere else, ever: the store keeps its digest. In
// open mode the key belongs to the merchant named, not to a new one. An
// unknown merchant wraps paymock.ErrNotFound; a merchant at
// paymock.MaxCreatedKeys gets a *paymock.Error (key_limit).
func (r *Registry) CreateKey(ctx context.Context, merchantID string) (paymock.NewKey, error) {
	key, err := randomBase62(paymock.CreatedKeyPrefix, createdKeyRandom)
	if err != nil {
		return paymock.NewKey{}, err
	}
	h := sha256.Sum256([]byte(key))
	e, err := r.entryOf(ctx, merchantID)
	if err != nil {
		return paymock.NewKey{}, err
	}
	if (*r.keys.Load())[h] != nil {
		// 190 random bits do not collide; should the source be broken,
		// refuse rather than hand one merchant's key to another.
		return paymock.NewKey{}, fmt.Errorf("create api key: the random source repeated itself")
	}
	k := paymock.StoredKey{Digest: h, MerchantID: merchantID, Masked: paymock.MaskKey(key),
		Source: paymock.KeyCreated, Created: stamp(r.now())}
	// A taken id (a broken random source, or the store's sequence reset
	// by hand) is drawn again.
	for range 8 {
		if k.ID, err = r.ids.New(ctx, &e.Merchant, keyIDPrefix); err != nil {
			return paymock.NewKey{}, fmt.Errorf("create api key: %w", err)
		}
		err := r.store.AddKey(ctx, k, paymock.MaxCreatedKeys)
		switch {
		case err == nil:
			return paymock.NewKey{APIKey: listed(k), Key: key}, nil
		case errors.Is(err, paymock.ErrLimitReached):
			return paymock.NewKey{}, keyLimit()
		case !errors.Is(err, paymock.ErrDuplicate):
			return paymock.NewKey{}, fmt.Errorf("create api key: %w", err)
		}
	}
	return paymock.NewKey{}, fmt.Errorf("create api key: no free id after 8 draws")
}

// keyLimit is the refusal of a key past paymock.MaxCreatedKeys.
func keyLimit() *paymock.Error {
	return &paymock.Error{Type: paymock.InvalidRequest, Code: "key_limit",
		Message: fmt.Sprintf("a merchant can hold at most %d created api keys; revoke one first", paymock.MaxCreatedKeys)}
}

func listed(k paymock.StoredKey) paymock.APIKey {
	return paymock.APIKey{ID: k.ID, Masked: k.Masked, Source: k.Source, Created: k.Created}
}

// Keys lists a merchant's live keys: configured ones in their order, an
// open-mode merchant's own token, then created ones oldest first. Revoked
// keys are left out. An unknown merchant has none. Only a store that
// cannot be read makes an error (wrapping paymock.ErrUnavailable).
func (r *Registry) Keys(ctx context.Context, merchantID string) ([]paymock.APIKey, error) {
	_, err := r.entryOf(ctx, merchantID)
	if errors.Is(err, paymock.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	var out []paymock.APIKey
	if f := r.config[merchantID]; f != nil {
		// What another replica revoked is left out here too.
		if err := r.refreshRevoked(ctx); err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		live := *r.keys.Load()
		for _, k := range f.keys {
			if live[k.digest] == k {
				out = append(out, k.listed())
			}
		}
	}
	stored, err := r.store.Keys(ctx, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	for _, k := range stored {
		if k.Source == paymock.KeyOpen && !r.open {
			continue // left by an earlier open-mode run
		}
		out = append(out, listed(k))
	}
	return out, nil
}

// RevokeKey revokes one of a merchant's keys: from the next request on it
// is paymock.ErrUnknownKey, and in open mode it does not come back as a
// new merchant. Configured keys and an open-mode merchant's own token can
// be revoked too. An unknown key id, one already revoked, or another
// merchant's, wraps paymock.ErrNotFound.
//
// The revocation is stored, and every registry sharing the store refuses
// the key from its next request on: at once for a created key or an
// open-mode token (those are looked up in the store each time), within
// about a second for a configured key on another replica (configured keys
// are checked in memory, and the revoked ones read in the background).
// A configured key stays revoked for as long as the store keeps it.
func (r *Registry) RevokeKey(ctx context.Context, merchantID, keyID string) error {
	if _, err := r.entryOf(ctx, merchantID); err != nil {
		return err
	}
	if f := r.config[merchantID]; f != nil {
		live := *r.keys.Load()
		for _, k := range f.keys {
			if k.id == keyID && live[k.digest] == k {
				return r.revokeConfigured(ctx, k)
			}
		}
	}
	keep := 0 // a revoked created key of a configured merchant is simply unknown
	if r.open {
		keep = maxRevokedKept
	}
	ok, err := r.store.RevokeKey(ctx, merchantID, keyID, keep)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if !ok {
		return fmt.Errorf("no such api key: %w", paymock.ErrNotFound)
	}
	return nil
}

// revokeConfigured stores a configured key's revocation, for every
// replica and every later run on a durable store, and drops it here at
// once.
func (r *Registry) revokeConfigured(ctx context.Context, k *keyRecord) error {
	err := r.store.AddKey(ctx, paymock.StoredKey{Digest: k.digest, ID: k.id, MerchantID: k.owner.ID, Masked: k.masked,
		Source: paymock.KeyFromConfig, Created: k.created, Revoked: true}, -1)
	if err != nil && !errors.Is(err, paymock.ErrDuplicate) {
		return fmt.Errorf("revoke api key: %w", err)
	}
	r.dropConfigured([][32]byte{k.digest})
	if err != nil { // another replica revoked it first
		return fmt.Errorf("no such api key: %w", paymock.ErrNotFound)
	}
	return nil
}

// dropConfigured removes configured keys from the map requests read,
// replacing it whole so that readers need no lock.
func (r *Registry) dropConfigured(digests [][32]byte) {
	r.keysMu.Lock()
	defer r.keysMu.Unlock()
	cur := *r.keys.Load()
	var next map[[32]byte]*keyRecord
	for _, h := range digests {
		if cur[h] == nil {
			continue
		}
		if next == nil {
			next = maps.Clone(cur)
		}
		delete(next, h)
	}
	if next != nil {
		r.keys.Store(&next)
	}
}

// refreshRevoked drops the configured keys revoked in the store.
func (r *Registry) refreshRevoked(ctx context.Context) error {
	at := r.now().UnixNano()
	ds, err := r.store.RevokedDigests(ctx, paymock.KeyFromConfig)
	if err != nil {
		return fmt.Errorf("reading revoked configured keys: %w", err)
	}
	r.dropConfigured(ds)
	r.revokedRead.Store(at)
	return nil
}

// maybeRefreshRevoked starts a refreshRevoked in the background when the
// last one is older than revokedRefreshEvery at now (Unix ns) and none is
// running.
func (r *Registry) maybeRefreshRevoked(now int64) {
	if now-r.revokedRead.Load() < int64(revokedRefreshEvery) || !r.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.refreshRevoked(ctx); err != nil {
			r.log.Warn("configured keys revoked in the store not read; trying again on the next request", "error", err)
		}
	}()
}

// tokenID is the key id of an open-mode merchant's own token. It is
// derived from the token's digest (bytes the merchant id does not use),
// so that every replica gives it the same id.
func tokenID(h [32]byte) string {
	const hexDigits = "0123456789abcdef"
	var b [len(keyIDPrefix) + 1 + 24]byte
	n := copy(b[:], keyIDPrefix+"_")
	for _, c := range h[6:18] {
		b[n], b[n+1] = hexDigits[c>>4], hexDigits[c&0xf]
		n += 2
	}
	return string(b[:])
}

// randomBase62 returns prefix and n characters from crypto/rand, each of
// the 62 equally likely.
func randomBase62(prefix string, n int) (string, error) {
	out := make([]byte, 0, len(prefix)+n)
	out = append(out, prefix...)
	var buf [64]byte
	for len(out) < cap(out) {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("random source: %w", err)
		}
		for _, b := range buf {
			// 248 = 4*62, the largest multiple of 62 below 256.
			if b < 248 && len(out) < cap(out) {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out), nil
}
