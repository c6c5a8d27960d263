// A request's journal entry carried by the store call that does the
// request's work, so that a database writes both in one round trip.

package paymock

import "context"

// JournalCarry is a request's journal entry offered to the Store call that
// does the request's work (Insert, Get, List). A store whose journal
// append costs a round trip of its own (package postgres) writes the entry
// in the same statement as the call's work when that work succeeds, and
// says so with Carried; the server then appends nothing for the request,
// and replaces the entry (JournalStore.ReplaceRequest) should its answer
// turn out other than the entry says. A store whose append costs no round
// trip (package memory) leaves the offer, and the server appends the entry
// once the answer is known, as for any other request. Either way a
// request is in its merchant's journal once, before its answer leaves.
type JournalCarry interface {
	// JournalRecord is the request's entry as it stands when the store
	// writes it: the answer's status if the call succeeds, and the
	// request's time so far in DurationMS, to which the store adds its
	// own up to the write.
	JournalRecord() (merchantID string, r JournalRecord)
	// Carried says the entry was stored with the call's work, which
	// succeeded.
	Carried()
}

type journalCarryKey struct{}

// WithJournalCarry returns ctx offering c to the store calls made with it.
// A server offers an entry to one call only. The context is made for
// that request alone, never reused: a store may hand it to work that
// outlives the call (a pool dialling a connection keeps it), and so may
// read it after the request has gone.
func WithJournalCarry(ctx context.Context, c JournalCarry) context.Context {
	return context.WithValue(ctx, journalCarryKey{}, c)
}

// JournalCarryOf is the entry ctx offers, or nil.
func JournalCarryOf(ctx context.Context) JournalCarry {
	c, _ := ctx.Value(journalCarryKey{}).(JournalCarry)
	return c
}
