// The storage of the merchant registry: the records it makes at run time
// (keys by digest, open-mode merchants, revocations, added endpoints) and
// the interface every Backend implements for them (MerchantStore).

package paymock

import (
	"context"
	"encoding/hex"
	"errors"
	"time"
)

// StoredKey is an API key as a store keeps it: its SHA-256 digest and its
// masked form, never the key itself.
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

// OpenMerchantID is the id of the open-mode merchant a token makes, derived
// from the token's digest so that every replica gives it the same: "key_"
// and the hex of the digest's first 6 bytes or, when another token's
// merchant has that id already, of its first 16 (long). A store may find
// an open-mode token by it rather than index its digest as well.
func OpenMerchantID(digest [32]byte, long bool) string {
	return string(AppendOpenMerchantID(nil, digest, long))
}

// AppendOpenMerchantID appends OpenMerchantID(digest, long) to dst: a
// store's lookup by it, into a buffer on the stack, allocates nothing.
func AppendOpenMerchantID(dst []byte, digest [32]byte, long bool) []byte {
	n := 6
	if long {
		n = 16
	}
	return hex.AppendEncode(append(dst, "key_"...), digest[:n])
}

// StoredEndpoint is a webhook endpoint added at run time, as a store keeps
// it. The secret is kept whole: deliveries are signed with it.
type StoredEndpoint struct {
	MerchantID string
	// ID is the endpoint's "we_..." handle, unique within its merchant.
	ID       string
	URL      string
	Secret   string
	Disabled bool
	Created  time.Time
}

// ErrLimitReached is wrapped by MerchantStore.AddKey and AddEndpoint, by
// Store.Insert, and by Outbox.AddRound, when the merchant already holds as
// many as it may; nothing is stored.
var ErrLimitReached = errors.New("limit reached")

// ErrDuplicate is wrapped by MerchantStore.AddKey and AddEndpoint when the
// digest, the id within the merchant, or (for an open-mode token) the
// merchant id is already stored; nothing is stored.
var ErrDuplicate = errors.New("already stored")

// KeyStore keeps run-time API keys: keys created at run time, open-mode
// tokens (which make their merchants) and revocations. Errors that mean
// the store cannot be reached wrap ErrUnavailable.
type KeyStore interface {
	// Key returns the key of a digest, live or revoked; false when none
	// is stored. It is asked on every request that presents a key the
	// configuration does not name, so it must be cheap: an in-process
	// store answers from a map, without allocating.
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

// EndpointStore keeps the webhook endpoints merchants add at run time.
// Errors that mean the store cannot be reached wrap ErrUnavailable.
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

// MerchantStore is where the merchant registry (package merchants) keeps
// what it makes at run time. Configured merchants, their keys and
// endpoints and the default endpoints are not stored: they come from the
// configuration, the same on every replica.
type MerchantStore interface {
	KeyStore
	EndpointStore
	// ReleaseMerchant is told that this process no longer holds an idle
	// open-mode merchant. A store only this process uses drops the
	// merchant's keys, revocations and endpoints, since nothing can reach
	// them any more and open mode must not grow without end; a store
	// replicas share keeps them, since another replica may be serving the
	// merchant (its token coming back is then the same merchant).
	ReleaseMerchant(ctx context.Context, merchantID string) error
}
