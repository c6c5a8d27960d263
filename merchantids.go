// The ids of what a merchant owns (payments, customers, events, keys,
// endpoints, fault rules): unguessable, or, in a seeded run, drawn from a
// stream of the merchant's own that no other merchant can compute.

package paymock

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
)

// Sequences numbers each merchant's seeded ids. A number is never handed
// out twice by one store, so replicas seeded alike, or a process restarted
// on the store it used before, draw new ids rather than the same ones
// again. Errors that mean the store cannot be reached wrap ErrUnavailable.
type Sequences interface {
	// Next returns the merchant's next number: 0 for its first id.
	Next(ctx context.Context, merchantID string) (uint64, error)
}

// MerchantIDs makes the ids of what merchants own. Unseeded, every id comes
// from crypto/rand. Seeded, a merchant's n-th id is derived from the seed,
// the SHA-256 of a key only the merchant holds (its first configured key,
// or its open-mode token, whose digest is read from the store) and n: the same
// run gives the merchant the same ids whatever other merchants do, and a
// merchant who knows the seed and its own ids still cannot compute
// another's, so another merchant's hosted pages stay out of its reach.
type MerchantIDs struct {
	seed   *uint64
	seq    Sequences
	tokens KeyStore
	random randomStreams // the unseeded ids
}

// NewMerchantIDs returns the generator of a run: seeded when seed is not
// nil, numbering each merchant's ids with seq and finding an open-mode
// merchant's token in tokens (neither is used unseeded).
func NewMerchantIDs(seed *uint64, seq Sequences, tokens KeyStore) *MerchantIDs {
	return &MerchantIDs{seed: seed, seq: seq, tokens: tokens}
}

// New returns prefix + "_" + IDLength base62 characters for merchant m.
// Only a seeded run can fail: when the sequence cannot be read.
func (g *MerchantIDs) New(ctx context.Context, m *Merchant, prefix string) (string, error) {
	d, err := g.Draw(ctx, m)
	if err != nil {
		return "", err
	}
	return d.ID(prefix), nil
}

// Draw takes the merchant's next number once for ids of several prefixes
// made together (a payment and, when new, its customer), so that whether
// the second is needed does not shift the merchant's later ids.
func (g *MerchantIDs) Draw(ctx context.Context, m *Merchant) (IDDraw, error) {
	if g.seed == nil {
		return IDDraw{random: &g.random}, nil
	}
	idSeed, err := g.idSeed(ctx, m)
	if err != nil {
		return IDDraw{}, err
	}
	n, err := g.seq.Next(ctx, m.ID)
	if err != nil {
		return IDDraw{}, fmt.Errorf("numbering an id: %w", err)
	}
	return IDDraw{key: streamKey(*g.seed, idSeed, n), seeded: true}, nil
}

// idSeed is the digest of a key only m holds: its first configured key,
// or (an open-mode merchant has none) its token as the store keeps it.
// Read when drawn rather than held with the merchant, so that an unseeded
// run's idle merchants do not carry it.
func (g *MerchantIDs) idSeed(ctx context.Context, m *Merchant) ([32]byte, error) {
	if len(m.APIKeys) > 0 {
		return sha256.Sum256([]byte(m.APIKeys[0])), nil
	}
	if g.tokens == nil {
		return [32]byte{}, fmt.Errorf("merchant %s has no key to draw seeded ids from (NewMerchantIDs has no token store)", m.ID)
	}
	k, found, err := g.tokens.OpenKey(ctx, m.ID)
	if err != nil {
		return [32]byte{}, fmt.Errorf("reading the token ids are drawn from: %w", err)
	}
	if !found {
		return [32]byte{}, fmt.Errorf("merchant %s has no key to draw seeded ids from: %w", m.ID, ErrNotFound)
	}
	return k.Digest, nil
}

// IDDraw is one number of a merchant's sequence: the ids made of it differ
// by prefix. An unseeded run's IDDraw, and the zero IDDraw, make
// unguessable ids.
type IDDraw struct {
	key    [32]byte
	seeded bool
	random *randomStreams // the generator's, for an unseeded draw
}

// ID returns prefix + "_" + IDLength base62 characters.
func (d IDDraw) ID(prefix string) string {
	if !d.seeded {
		if d.random != nil {
			return d.random.draw(prefix)
		}
		return drawID(rand.Reader, prefix)
	}
	b := make([]byte, 0, len(d.key)+len(prefix))
	return drawChaCha(mrand.NewChaCha8(sha256.Sum256(append(append(b, d.key[:]...), prefix...))), prefix)
}

// streamKey is the key of the ids drawn for one number of a merchant.
func streamKey(seed uint64, idSeed [32]byte, n uint64) [32]byte {
	var b [len("paymock merchant id") + 8 + 32 + 8]byte
	i := copy(b[:], "paymock merchant id")
	binary.LittleEndian.PutUint64(b[i:], seed)
	i += 8
	i += copy(b[i:], idSeed[:])
	binary.LittleEndian.PutUint64(b[i:], n)
	return sha256.Sum256(b[:])
}
