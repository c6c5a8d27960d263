// API keys as the developer section shows them: listed masked, shown in
// full once; where a key came from. The registry that makes and revokes
// them is package merchants.

package paymock

import (
	"log/slog"
	"time"
)

// KeySource says where a key came from.
type KeySource string

// The sources of a key.
const (
	// KeyFromConfig is a key of the config file or --api-key.
	KeyFromConfig KeySource = "config"
	// KeyCreated is a key made at run time (merchants.Registry.CreateKey).
	KeyCreated KeySource = "created"
	// KeyOpen is the token that made an open-mode merchant.
	KeyOpen KeySource = "open"
)

// CreatedKeyPrefix starts every key made at run time; 32 random base62
// characters follow (about 190 bits).
const CreatedKeyPrefix = "sk_test_"

// MaxCreatedKeys is how many live created keys one merchant may hold.
const MaxCreatedKeys = 100

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
