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
	src io.Reader // the seeded stream; nil when unseeded
	// random draws the unseeded ids, with no lock.
	random randomStreams
}

// NewIDs returns a generator of unguessable ids (see randomStreams), or,
// when seed is not nil, of a ChaCha8 stream from that seed so a run can be
// repeated exactly.
func NewIDs(seed *uint64) *IDs {
	if seed == nil {
		return &IDs{}
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], *seed)
	return &IDs{src: mrand.NewChaCha8(key)}
}

// New returns prefix + "_" + IDLength random base62 characters.
func (g *IDs) New(prefix string) string {
	if g.src == nil {
		return g.random.draw(prefix)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return drawID(g.src, prefix)
}

// randomStreams draws unguessable ids from ChaCha8 generators, each keyed
// with 32 bytes of crypto/rand when made and reused through a pool (about
// one per P). ChaCha8 is a cryptographically strong generator that erases
// its past state as it goes, so an id is as unpredictable as one read from
// crypto/rand, which costs a system call's worth (about 1 µs) per id where
// a generator's block costs tens of nanoseconds. The zero value is ready.
type randomStreams struct{ pool sync.Pool }

func (r *randomStreams) draw(prefix string) string {
	g, _ := r.pool.Get().(*mrand.ChaCha8)
	if g == nil {
		var key [32]byte
		_, _ = rand.Read(key[:]) // never fails: crypto/rand crashes the program instead
		g = mrand.NewChaCha8(key)
	}
	id := drawChaCha(g, prefix)
	r.pool.Put(g)
	return id
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
		out = appendBase62(out, buf[:], cap(out))
	}
	return string(out)
}

// drawChaCha is drawID from a ChaCha8 generator, reading the very bytes
// drawID would (FuzzDrawChaCha_DrawsWhatDrawIDDraws) without the reader
// interface, so that its buffers stay on the stack: the id is its one
// allocation.
func drawChaCha(g *mrand.ChaCha8, prefix string) string {
	var buf [64]byte
	var out [48]byte
	if len(prefix)+1+IDLength > len(out) {
		return drawID(g, prefix)
	}
	b := append(append(out[:0], prefix...), '_')
	for n := len(b) + IDLength; len(b) < n; {
		_, _ = g.Read(buf[:]) // never fails
		b = appendBase62(b, buf[:], n)
	}
	return string(b)
}

// appendBase62 appends a base62 character for each byte of random below
// 248 until b holds n bytes. Rejection sampling keeps every character
// equally likely: 248 = 4*62 is the largest multiple of 62 below 256.
func appendBase62(b, random []byte, n int) []byte {
	for _, c := range random {
		if c < 248 && len(b) < n {
			b = append(b, base62[c%62])
		}
	}
	return b
}
