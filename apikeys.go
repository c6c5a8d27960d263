// API keys made and revoked at run time, the developer section's keys:
// listed masked, shown in full once, revoked at once.

package paymock

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"time"
)

// KeySource says where a key came from.
type KeySource string

// The sources of a key.
const (
	// KeyFromConfig is a key of the config file or --api-key.
	KeyFromConfig KeySource = "config"
	// KeyCreated is a key made by CreateKey.
	KeyCreated KeySource = "created"
	// KeyOpen is the token that made an open-mode merchant.
	KeyOpen KeySource = "open"
)

// CreatedKeyPrefix starts every key CreateKey makes; 32 random base62
// characters follow (about 190 bits).
const CreatedKeyPrefix = "sk_test_"

const createdKeyRandom = 32

// keyIDPrefix and endpointIDPrefix start the public handles of keys and
// endpoints; "key_" is taken by open-mode merchant ids.
const (
	keyIDPrefix      = "ak"
	endpointIDPrefix = "we"
)

// MaxCreatedKeys is how many live created keys one merchant may hold.
const MaxCreatedKeys = 100

// maxRevokedKept is how many revoked digests an open-mode merchant keeps
// unknown; past it the oldest is dropped, so a loop of create and revoke
// cannot grow memory without end. A dropped one, presented again, is a
// new, empty merchant.
const maxRevokedKept = 1000

// APIKey is a key as listed: never the key itself.
type APIKey struct {
	// ID is the key's public handle, "ak_...", stable for its life.
	ID string
	// Masked is the key with all but a recognisable prefix and its last
	// four characters hidden, like "sk_test_…a1b2" (see MaskKey).
	Masked string
	// Source is where the key came from.
	Source KeySource
	// Created is when the key was made: the start for configured keys,
	// the merchant's first request for an open-mode token.
	Created time.Time
}

// NewKey is a key just created: the only time the whole key is shown.
type NewKey struct {
	APIKey
	// Key is the whole bearer key.
	Key string
}

// String is the masked form: a key printed by mistake stays secret.
func (k NewKey) String() string { return k.Masked }

// GoString is String, so %#v hides the key too.
func (k NewKey) GoString() string { return k.Masked }

// LogValue keeps the key out of JSON logs, which do not use String.
func (k NewKey) LogValue() slog.Value { return k.APIKey.LogValue() }

// LogValue logs the id and the masked form.
func (k APIKey) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", k.ID), slog.String("masked", k.Masked))
}

// CreateKey makes a new key for a merchant and returns it; the whole key
// is in the result and nowhere else, ever. In open mode the key belongs to
// the merchant named, not to a new one. An unknown merchant wraps
// ErrNotFound; a merchant at MaxCreatedKeys gets an *Error (key_limit).
// On a shared store the key is stored there (its digest, never the key)
// and works on every replica at once.
func (ms *Merchants) CreateKey(merchantID string) (NewKey, error) {
	key, err := randomBase62(CreatedKeyPrefix, createdKeyRandom)
	if err != nil {
		return NewKey{}, err
	}
	h := sha256.Sum256([]byte(key))
	if ms.store != nil {
		return ms.createKeyShared(merchantID, key, h)
	}
	now := ms.now()

	ms.mu.Lock()
	defer ms.mu.Unlock()
	e, err := ms.entryLocked(merchantID)
	if err != nil {
		return NewKey{}, err
	}
	if ms.keys[h] != nil || ms.token(h) != nil || ms.revoked[h] != nil {
		// 190 random bits do not collide; should the source be broken,
		// refuse rather than hand one merchant's key to another.
		return NewKey{}, fmt.Errorf("create api key: the random source repeated itself")
	}
	ext := e.extras()
	created := 0
	for _, r := range ext.keys {
		if r.source == KeyCreated {
			created++
		}
	}
	if created >= MaxCreatedKeys {
		return NewKey{}, keyLimit()
	}
	r := &keyRecord{id: ms.ids.New(keyIDPrefix), key: []byte(key), masked: MaskKey(key),
		source: KeyCreated, created: now, owner: e}
	ms.keys[h] = r
	ext.keys = append(ext.keys, r)
	return NewKey{APIKey: r.listed(), Key: key}, nil
}

// keyLimit is the refusal of a key past MaxCreatedKeys.
func keyLimit() *Error {
	return &Error{Type: InvalidRequest, Code: "key_limit",
		Message: fmt.Sprintf("a merchant can hold at most %d created api keys; revoke one first", MaxCreatedKeys)}
}

// Keys lists a merchant's live keys: configured ones in their order, an
// open-mode merchant's own token, then created ones oldest first. Revoked
// keys are left out. An unknown merchant has none. Only a shared store
// that cannot be read makes an error (wrapping ErrUnavailable).
func (ms *Merchants) Keys(merchantID string) ([]APIKey, error) {
	if ms.store != nil {
		return ms.keysShared(merchantID)
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	e, ok := ms.byID[merchantID]
	if !ok {
		return nil, nil
	}
	var out []APIKey
	if e.open && !e.tokenRevoked {
		out = append(out, APIKey{ID: e.tokenID(), Masked: string(e.tokenMask[:e.tokenMaskLen]),
			Source: KeyOpen, Created: time.Unix(0, e.created).UTC()})
	}
	if e.ext != nil {
		for _, r := range e.ext.keys {
			out = append(out, r.listed())
		}
	}
	return out, nil
}

// RevokeKey revokes one of a merchant's keys: from the next request on it
// is ErrUnknownKey, and in open mode it does not come back as a new
// merchant. Configured keys and an open-mode merchant's own token can be
// revoked too, for the life of the process. An unknown key id, one
// already revoked, or another merchant's, wraps ErrNotFound.
//
// On a shared store the revocation is stored, and every replica refuses
// the key from its next request on: at once for a created key or an
// open-mode token (those are looked up in the store each time), within
// about a second for a configured key (those are checked in memory, and
// each replica reads the revoked ones in the background). Configured keys
// then stay revoked for as long as the database, across restarts.
func (ms *Merchants) RevokeKey(merchantID, keyID string) error {
	if ms.store != nil {
		return ms.revokeKeyShared(merchantID, keyID)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	e, err := ms.entryLocked(merchantID)
	if err != nil {
		return err
	}
	if e.open && !e.tokenRevoked && keyID == e.tokenID() {
		delete(ms.tokens, tokenKey(e.hash))
		e.tokenRevoked = true
		ms.revoked[e.hash] = e // dropped only with the merchant
		return nil
	}
	if e.ext != nil {
		for i, r := range e.ext.keys {
			if r.id != keyID {
				continue
			}
			h := sha256.Sum256(r.key)
			delete(ms.keys, h)
			e.ext.keys = append(e.ext.keys[:i:i], e.ext.keys[i+1:]...)
			if ms.open {
				ms.keepRevokedLocked(e, h)
			}
			return nil
		}
	}
	return fmt.Errorf("no such api key: %w", ErrNotFound)
}

// keepRevokedLocked makes an open-mode digest stay unknown for as long as
// its merchant is held (up to maxRevokedKept of them).
func (ms *Merchants) keepRevokedLocked(e *merchantEntry, h [32]byte) {
	ext := e.extras()
	if len(ext.revoked) >= maxRevokedKept {
		if ms.revoked[ext.revoked[0]] == e {
			delete(ms.revoked, ext.revoked[0])
		}
		ext.revoked = append(ext.revoked[:0:0], ext.revoked[1:]...)
	}
	ext.revoked = append(ext.revoked, h)
	ms.revoked[h] = e
}

// extras returns e's developer-section state, making it on first use;
// Merchants.mu must be held for writing.
func (e *merchantEntry) extras() *merchantExtras {
	if e.ext == nil {
		e.ext = &merchantExtras{}
	}
	return e.ext
}

// tokenID is the key id of an open-mode merchant's own token. It is
// derived from the token's digest (bytes the merchant id does not use),
// so it is stable and costs nothing to keep.
func (e *merchantEntry) tokenID() string {
	const hexDigits = "0123456789abcdef"
	var b [len(keyIDPrefix) + 1 + 24]byte
	n := copy(b[:], keyIDPrefix+"_")
	for _, c := range e.hash[6:18] {
		b[n], b[n+1] = hexDigits[c>>4], hexDigits[c&0xf]
		n += 2
	}
	return string(b[:])
}

func (r *keyRecord) listed() APIKey {
	return APIKey{ID: r.id, Masked: r.masked, Source: r.source, Created: r.created}
}

// maxMaskLen bounds MaskKey's result: a 12-byte prefix, the 3-byte
// ellipsis and four characters.
const maxMaskLen = 19

// MaskKey hides a key for listing: a leading prefix of one or two
// lowercase words each ending in "_" (like "sk_test_", at most 12
// characters) stays, then "…", then the last four characters. A key whose
// rest is shorter than eight shows the last half of it, rounded down, so
// that short keys ("sk_test_ci", "sk_test_merchant") still look different
// and at least as much stays hidden as is shown.
func MaskKey(key string) string {
	p := 0
	for range 2 {
		i := p
		for i < len(key) && i-p < 8 && key[i] >= 'a' && key[i] <= 'z' {
			i++
		}
		if i == p || i >= len(key) || key[i] != '_' || i+1 > 12 {
			break
		}
		p = i + 1
	}
	if p == len(key) {
		p = 0 // a key that is all prefix is all secret
	}
	tail := min(4, (len(key)-p)/2)
	return key[:p] + "…" + key[len(key)-tail:]
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
