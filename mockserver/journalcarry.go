// The journal entry a request offers its store call (paymock.JournalCarry),
// so that a database writes it with the call's work in one round trip.

package mockserver

import (
	"context"
	"slices"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// carrier is an exchange's paymock.JournalCarry. It lives in the exchange;
// the context offering it does not (see paymock.WithJournalCarry): only
// the store call reads the carrier, while the context may outlive it.
type carrier struct {
	s       *Server
	c       *echo.Context
	x       *exchange
	status  int
	rec     paymock.JournalRecord // as carried
	carried bool
}

// carryJournal is the request's context offering its journal entry, as
// answered with status, to the one store call made with it. The entry is
// offered only where nothing can change the answer but the call's outcome
// and a bug (a response the contract refuses): a call of the service API
// by a merchant, with the journal on and no fault asked for.
func (s *Server) carryJournal(c *echo.Context, status int) context.Context {
	ctx := c.Request().Context()
	x := exchangeOf(c)
	if s.journal == nil || x.caller == nil || x.doc != s.docs.Service || x.fault != "" || x.reset {
		return ctx
	}
	x.carry = carrier{s: s, c: c, x: x, status: status}
	return paymock.WithJournalCarry(ctx, &x.carry)
}

// JournalRecord implements paymock.JournalCarry.
func (k *carrier) JournalRecord() (string, paymock.JournalRecord) {
	k.rec = k.s.journalRecord(k.c, k.x, k.status, k.s.drawnEncoding(k.x).String())
	return k.x.caller.ID, k.rec
}

// Carried implements paymock.JournalCarry.
func (k *carrier) Carried() { k.carried = true }

// sameRecord reports whether two records of one request say the same but
// for the time taken.
func sameRecord(a, b paymock.JournalRecord) bool {
	ae, be := a.Entry, b.Entry
	return a.Counted == b.Counted && a.Violating == b.Violating &&
		ae.ID == be.ID && ae.At == be.At && ae.Method == be.Method && ae.Path == be.Path && ae.Query == be.Query &&
		ae.Operation == be.Operation && ae.Status == be.Status && ae.Variant == be.Variant &&
		ae.InjectedFault == be.InjectedFault && ae.InjectedBy == be.InjectedBy && slices.Equal(ae.Violations, be.Violations)
}
