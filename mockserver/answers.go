// The bound on the bytes of large answers held at once
// (Config.MaxAnswerBytes): an answer that would pass it, while being
// built, is refused with a 503.

package mockserver

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/contract"
)

// grow makes room in the answer for need bytes, a service or sandbox
// API answer larger than connlimit.SmallAnswer counted against the
// answers' bound before its memory is taken: from its first byte past
// that size until record has written it (or dropped it). So a client that
// asks for many of the largest pages at once and reads none holds the
// bound at most, counting the pages still being built, and others still
// get the pages they read. Counted is the buffer's capacity, what the
// process holds: it doubles (so an answer counts up to twice its bytes)
// while the bound leaves room, and takes what room is left when it does
// not, so that an answer alone may take the whole bound. Past it, the
// answer's memory goes at once and grow reports the 503 it is answered
// instead (every operation declares it); the writes that follow are
// refused with it, until the recorder is reset.
//
// Each merchant's answers hold at most its share of the bound
// (connlimit.AnswerShare), so a merchant that reads none of its own
// cannot have every other merchant's refused. The merchant is the
// request's key's, even where the operation needs none; a request
// without an accepted key counts under "", one share for all of them.
func (r *recorder) grow(need int) error {
	r.answers.Give(r.key, r.held) // counted again below, with the room added
	r.held = 0
	r.key = ""
	if r.x.caller != nil {
		r.key = r.x.caller.ID
	}
	size := r.answers.TakeBetween(r.key, need, max(need, 2*r.body.Cap()))
	if size == 0 {
		r.refused = &contract.StatusError{Status: http.StatusServiceUnavailable,
			Header: map[string][]string{"Retry-After": {"1"}},
			Err: &paymock.Error{Type: paymock.APIError, Code: "answers_busy",
				Message: fmt.Sprintf("paymock holds at most %d MiB of large answers at once, and %d MiB of one merchant's, and that much is being built or is on its way to clients (reading slowly or not at all); "+
					"this one (%.1f MiB and more) was not sent: retry, or ask for smaller pages (per_page)", r.answers.Max()>>20, r.answers.Share()>>20, float64(need)/(1<<20))}}
		r.body = bytes.Buffer{}
		return r.refused
	}
	b := make([]byte, r.body.Len(), size)
	copy(b, r.body.Bytes())
	r.held = size
	r.body = *bytes.NewBuffer(b)
	return nil
}

// release gives back what the answer counted, with its memory: it was
// written, or will not be.
func (r *recorder) release() {
	if r.held > 0 {
		r.answers.Give(r.key, r.held)
		r.held = 0
		r.body = bytes.Buffer{}
	}
}

// counted says whether the answer counts against the bound once past
// connlimit.SmallAnswer: one of the two contracts' answers.
func (r *recorder) counted(need int) bool {
	return need > connlimit.SmallAnswer && r.answers != nil && r.x.doc != nil
}

// answerRefused is the 503 of an answer the bound refused while it was
// built, for a handler that went on as if it had been written; it warns,
// once a second at most: a client that causes this causes it often.
func (s *Server) answerRefused(c *echo.Context, x *exchange) error {
	if now := time.Now().Unix(); s.answersWarned.Swap(now) != now {
		s.log.WarnContext(c.Request().Context(), "large answers refused: the answers being built and on their way hold the bound",
			"method", x.method, "path", contract.ShortPath(c.Request().URL.Path), "bound", s.answers.Max())
	}
	return x.rec.refused
}

// listPagesAtOnce is how many list pages are built at once, and
// listPagesPerMerchant how many of them one merchant's; the next waits for
// one of them to be done. A page of 100 of the largest payments is 2.9 MB
// as the store gives it, before its answer (which the answers' bound
// counts), and a client may ask for one on each of its connections:
// unbounded, 200 connections held 580 MB of pages. Building is work for
// the cores (and, on PostgreSQL, one round trip), which more pages at once
// than this would not finish sooner; and a merchant asking for many waits
// on its own pages, not on everyone's.
const (
	listPagesAtOnce      = 32
	listPagesPerMerchant = 8
)

// acquireListPage waits for a slot to build a list page of the request's
// merchant in, and reports whether it got one: not when the client went
// away first, and then its connection is dropped with no answer.
// releaseListPage gives the slot back once the page is built: its answer
// may wait on its client for longer.
func (s *Server) acquireListPage(c *echo.Context) bool {
	if s.listPages.Acquire(c.Request().Context(), merchantOf(c).ID) {
		return true
	}
	exchangeOf(c).reset = true
	return false
}

func (s *Server) releaseListPage(c *echo.Context) { s.listPages.Release(merchantOf(c).ID) }
