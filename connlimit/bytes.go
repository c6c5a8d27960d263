// A bound on the bytes of answers being written at once: a client that
// asks for large answers and reads none cannot fill the process's memory.

package connlimit

import "sync/atomic"

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
// minute), and ask again. It is safe for concurrent use.
type Answers struct {
	max  int64
	used atomic.Int64
}

// NewAnswers bounds answers to max bytes at once (DefaultAnswerBytes for
// 0; none for a negative max).
func NewAnswers(max int64) *Answers {
	if max == 0 {
		max = DefaultAnswerBytes
	}
	return &Answers{max: max}
}

// Take counts n bytes of an answer about to be written and reports
// whether it may be: an answer of up to SmallAnswer bytes always may,
// and is not counted; a larger one only while the answers being written
// with it stay within the bound. A nil Answers takes everything.
func (a *Answers) Take(n int) bool {
	if a == nil || n <= SmallAnswer || a.max < 0 {
		return true
	}
	if a.used.Add(int64(n)) > a.max {
		a.used.Add(-int64(n))
		return false
	}
	return true
}

// TakeBetween counts room for an answer growing past SmallAnswer: as
// much as the bound leaves, up to most bytes, and at least least (at
// least SmallAnswer+1: room that small would not be counted). It returns
// the bytes counted, which Give gives back, or 0 when the bound does not
// leave least. A nil Answers, or one with no bound, gives most.
func (a *Answers) TakeBetween(least, most int) int {
	if a == nil || most <= SmallAnswer || a.max < 0 {
		return most
	}
	least = max(least, SmallAnswer+1)
	for {
		used := a.used.Load()
		n := min(int64(most), a.max-used)
		if n < int64(least) {
			return 0
		}
		if a.used.CompareAndSwap(used, used+n) {
			return int(n)
		}
	}
}

// Give gives back what Take counted for an answer of n bytes.
func (a *Answers) Give(n int) {
	if a == nil || n <= SmallAnswer || a.max < 0 {
		return
	}
	a.used.Add(-int64(n))
}

// Max is the bound, in bytes; negative for none.
func (a *Answers) Max() int64 { return a.max }
