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
func (r *recorder) grow(need int) error {
	r.answers.Give(r.held) // counted again below, with the room added
	r.held = 0
	size := r.answers.TakeBetween(need, max(need, 2*r.body.Cap()))
	if size == 0 {
		r.refused = &contract.StatusError{Status: http.StatusServiceUnavailable,
			Header: map[string][]string{"Retry-After": {"1"}},
			Err: &paymock.Error{Type: paymock.APIError, Code: "answers_busy",
				Message: fmt.Sprintf("paymock holds at most %d MiB of large answers at once, and that much is being built or is on its way to clients (reading slowly or not at all); "+
					"this one (%.1f MiB and more) was not sent: retry, or ask for smaller pages (per_page)", r.answers.Max()>>20, float64(need)/(1<<20))}}
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
		r.answers.Give(r.held)
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
