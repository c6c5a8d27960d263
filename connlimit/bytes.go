// A bound on the bytes of answers being written at once: a client that
// asks for large answers and reads none cannot fill the process's memory.

package connlimit

import "sync"

// DefaultAnswerBytes is the default bound of Answers: room for about
// thirty of the largest list pages a merchant can ask for at once (2.9 MB
// each, in a buffer of 4 MiB).
const DefaultAnswerBytes = 128 << 20

// SmallAnswer is the largest answer Answers always takes: the kernel's
// socket buffers hold it whole whether or not its client reads, so it
// holds no memory of the process while it waits.
const SmallAnswer = 64 << 10

// Answers counts the bytes of the answers being written, each from when
// it is taken until it is given back, once written or abandoned. A
// server holds a whole answer until its client has read all but what
// the kernel buffers: a client that asks for many large answers and reads
// none would otherwise hold them all, for the answer's deadline each (a
// minute), and ask again.
//
// Each key (a merchant) holds at most its share of the bound, so that one
// merchant's unread answers cannot fill it and have every other
// merchant's large answers refused: see AnswerShare. It is safe for
// concurrent use.
type Answers struct {
	max, share int64
	mu         sync.Mutex
	used       int64
	keys       map[string]int64 // the bytes each key holds; a key holding none has no entry
}

// AnswerShare is the part of the bound one key may hold: a quarter. Of
// the default 128 MiB that is 32 MiB, 8 of the largest list pages (2.9 MB
// each, in a buffer of 4 MiB): as many as the merchant's pages that are
// built at once (mockserver's listPagesPerMerchant), so a merchant reading
// its answers is not refused for want of its own room; and one merchant
// reading none leaves three quarters of the bound to the others, so at
// least four merchants must hold all they may before the bound itself
// refuses anyone. A smaller share would refuse a merchant's own pages
// sooner than it needs to; a larger one leaves less to the others.
const AnswerShare = 4

// minAnswerShare is the least share of a key, where the bound holds it:
// one of the largest list pages (in a buffer of 4 MiB). A quarter of a
// small bound would refuse a page the bound alone lets through.
const minAnswerShare = 4 << 20

// NewAnswers bounds answers to max bytes at once (DefaultAnswerBytes for
// 0; none for a negative max), and one key's to max/AnswerShare, but at
// least the smaller of max and 4 MiB.
func NewAnswers(max int64) *Answers {
	if max == 0 {
		max = DefaultAnswerBytes
	}
	share := max / AnswerShare
	if share < minAnswerShare {
		share = min(max, minAnswerShare)
	}
	return &Answers{max: max, share: share, keys: map[string]int64{}}
}

// Take counts n bytes of an answer of key about to be written and
// reports whether it may be: an answer of up to SmallAnswer bytes always
// may, and is not counted; a larger one only while the answers being
// written with it stay within the bound, and key's within its share. A
// nil Answers takes everything.
func (a *Answers) Take(key string, n int) bool {
	if a == nil || n <= SmallAnswer || a.max < 0 {
		return true
	}
	return a.TakeBetween(key, n, n) == n
}

// TakeBetween counts room for an answer of key growing past SmallAnswer:
// as much as the bound and key's share leave, up to most bytes, and at
// least least (at least SmallAnswer+1: room that small would not be
// counted). It returns the bytes counted, which Give gives back, or 0
// when the bound or the share does not leave least. A nil Answers, or
// one with no bound, gives most. Answers of up to SmallAnswer take no
// lock and touch no key.
func (a *Answers) TakeBetween(key string, least, most int) int {
	if a == nil || most <= SmallAnswer || a.max < 0 {
		return most
	}
	least = max(least, SmallAnswer+1)
	a.mu.Lock()
	defer a.mu.Unlock()
	held := a.keys[key]
	n := min(int64(most), a.max-a.used, a.share-held)
	if n < int64(least) {
		return 0
	}
	a.used += n
	a.keys[key] = held + n
	return int(n)
}

// Give gives back what Take or TakeBetween counted for an answer of key
// of n bytes. A key holding nothing more is forgotten.
func (a *Answers) Give(key string, n int) {
	if a == nil || n <= SmallAnswer || a.max < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used -= int64(n)
	if held := a.keys[key] - int64(n); held > 0 {
		a.keys[key] = held
	} else {
		delete(a.keys, key)
	}
}

// Max is the bound, in bytes; negative for none.
func (a *Answers) Max() int64 { return a.max }

// Share is the most one key may hold, in bytes; negative for no bound.
func (a *Answers) Share() int64 {
	if a.max < 0 {
		return a.max
	}
	return a.share
}
