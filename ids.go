// Identifiers: prefixed, unguessable ids, or a reproducible sequence of
// them when the run is seeded.

package paymock

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	mrand "math/rand/v2"
	"sync"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// IDLength is the number of random base62 characters after the prefix:
// 24 of them carry about 143 bits, so a checkout page reached by id alone
// cannot be found by guessing.
const IDLength = 24

// IDs makes ids such as "pay_" + 24 base62 characters.
type IDs struct {
	mu  sync.Mutex
	src io.Reader
}

// NewIDs returns a generator backed by crypto/rand, or, when seed is not
// nil, by a ChaCha8 stream from that seed so a run can be repeated exactly.
func NewIDs(seed *uint64) *IDs {
	if seed == nil {
		return &IDs{src: rand.Reader}
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], *seed)
	return &IDs{src: mrand.NewChaCha8(key)}
}

// New returns prefix + "_" + IDLength random base62 characters.
func (g *IDs) New(prefix string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return drawID(g.src, prefix)
}

// drawID returns prefix + "_" + IDLength base62 characters read from src.
func drawID(src io.Reader, prefix string) string {
	out := make([]byte, 0, len(prefix)+1+IDLength)
	out = append(out, prefix...)
	out = append(out, '_')
	var buf [64]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(src, buf[:]); err != nil {
			panic("paymock: random source failed: " + err.Error())
		}
		for _, b := range buf {
			// Rejection sampling keeps every character equally likely:
			// 248 = 4*62 is the largest multiple of 62 below 256.
			if b < 248 && len(out) < cap(out) {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}
