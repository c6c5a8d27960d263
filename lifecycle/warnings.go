// Warnings that a merchant's input sets off, bounded in rate and size so that no merchant can flood the log.

package lifecycle

import (
	"sync"
	"time"
	"unicode/utf8"
)

// The bounds of the warning of an unknown metadata.scenario. One a minute
// is enough for someone who mistyped a name to see it; 64 bytes is longer
// than any scenario name worth reading; 4096 merchants tracked at about a
// hundred bytes each hold the limiter under half a megabyte.
const (
	warnInterval   = time.Minute
	warnMerchants  = 4096
	warnValueBytes = 64
)

// warnLimit lets one warning per merchant through per interval and counts
// the ones it holds back, so that the next one let through can say how
// many there were. It tracks at most max merchants: past that, a merchant
// it does not track is held back too, counted as untracked, until the
// merchants warned longest ago can be forgotten.
type warnLimit struct {
	now      func() time.Time // real time: a frozen merchant clock must not stop the bound
	interval time.Duration
	max      int

	mu   sync.Mutex
	seen map[string]*warnState // by merchant id
	// untracked counts the warnings held back of merchants not tracked:
	// turned away while seen was full, or forgotten with a count still
	// unreported.
	untracked int
	// nextSweep is when the earliest entry of seen can be forgotten, so
	// that a full map is not walked again before anything in it can go.
	nextSweep time.Time
}

// warnState is one merchant's last warning let through and the count
// held back since.
type warnState struct {
	last       time.Time
	suppressed int
}

func newWarnLimit(now func() time.Time, interval time.Duration, max int) *warnLimit {
	return &warnLimit{now: now, interval: interval, max: max, seen: make(map[string]*warnState)}
}

// allow reports whether a warning of merchantID may be logged now and,
// when it may, how many were held back: the merchant's own since its
// last one, and those of merchants not tracked (reported once, by
// whichever warning comes next).
func (w *warnLimit) allow(merchantID string) (ok bool, suppressed, untracked int) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	s, found := w.seen[merchantID]
	if !found {
		if len(w.seen) >= w.max && !now.Before(w.nextSweep) {
			w.sweep(now)
		}
		if len(w.seen) >= w.max {
			w.untracked++
			return false, 0, 0
		}
		s = &warnState{}
		w.seen[merchantID] = s
	} else if now.Sub(s.last) < w.interval {
		s.suppressed++
		return false, 0, 0
	}
	suppressed, untracked = s.suppressed, w.untracked
	s.last, s.suppressed, w.untracked = now, 0, 0
	return true, suppressed, untracked
}

// sweep forgets the merchants whose interval has passed, keeping their
// unreported counts as untracked ones.
func (w *warnLimit) sweep(now time.Time) {
	var earliest time.Time
	for id, s := range w.seen {
		if now.Sub(s.last) >= w.interval {
			w.untracked += s.suppressed
			delete(w.seen, id)
			continue
		}
		if earliest.IsZero() || s.last.Before(earliest) {
			earliest = s.last
		}
	}
	w.nextSweep = earliest.Add(w.interval)
}

// truncated is s cut to at most n bytes where a character starts, and
// whether it was cut.
func truncated(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
