// The bound on the bytes of answers being written at once
// (Config.MaxAnswerBytes): a large answer past it is refused with a 503.

package mockserver

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

// boundAnswer counts the checked answer against the bytes of the answers
// being written at once, from here until record has written it, and
// answers a 503 instead of a large one that would pass the bound. It
// stands between the journal and the response check, so that the journal
// shows the answer sent, and the 503 is one the contract declares (every
// operation declares it). Counted is the answer's buffer, what the
// process holds until its client has read it: a client that asks for many
// of the largest pages and reads none holds the bound at most, and others
// still get the pages they read.
func (s *Server) boundAnswer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		err := next(c)
		x := exchangeOf(c)
		if x.doc == nil || x.reset || x.method == http.MethodHead {
			return err
		}
		n := x.rec.body.Cap()
		if s.answers.Take(n) {
			x.held = n
			return err
		}
		rec := x.rec
		size := rec.body.Len()
		rec.reset()
		rec.body = bytes.Buffer{} // the refused answer's memory goes now
		rec.header.Set("Content-Type", "application/json")
		rec.header.Set("Retry-After", "1")
		rec.WriteHeader(http.StatusServiceUnavailable)
		rec.body.Write(encodeError(&paymock.Error{Type: paymock.APIError, Code: "answers_busy",
			Message: fmt.Sprintf("paymock holds at most %d MiB of large answers on their way to clients at once, and that much is (clients reading slowly or not at all); "+
				"this one (%.1f MiB) was not sent: retry, or ask for smaller pages (per_page)", s.answers.Max()>>20, float64(size)/(1<<20))}))
		// Once a second at most: a client that causes this causes it often.
		if now := time.Now().Unix(); s.answersWarned.Swap(now) != now {
			s.log.WarnContext(c.Request().Context(), "large answers refused: the answers on their way hold the bound",
				"method", x.method, "path", contract.ShortPath(c.Request().URL.Path), "bytes", size, "bound", s.answers.Max())
		}
		return err
	}
}
