// The request journal: one request as a merchant's journal shows it, and
// JournalStore, where a Backend keeps each merchant's journal and the
// counts the conformance report reads.

package paymock

import (
	"context"
	"strconv"
)

// JournalEntry is one request as the journal shows it.
type JournalEntry struct {
	ID         string      `json:"id"`
	At         string      `json:"at"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Query      string      `json:"query"`
	Operation  string      `json:"operation_id,omitempty"`
	Status     int         `json:"status"`
	DurationMS float64     `json:"duration_ms"`
	Variant    string      `json:"variant,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
	// InjectedFault is the id of the fault rule that shaped the answer
	// ("header" for the Paymock-Fault header); a reset answer has status 0.
	InjectedFault string `json:"injected_fault,omitempty"`
	// InjectedBy says how that fault was asked for (the header, a rule of
	// the control API, the faults file) and what it does, in words.
	InjectedBy string `json:"injected_by,omitempty"`
}

// JournalMillis is a duration in whole microseconds as the milliseconds a
// JournalEntry shows: three decimals, nothing past them.
func JournalMillis(us int64) float64 {
	if us > -1<<40 && us < 1<<40 {
		// us is exact in a float64 and the division rounds correctly, so
		// the quotient is the float nearest the three-decimal number,
		// which is what printing and parsing it again gives
		// (FuzzJournalMillis_IsThePrintedMilliseconds).
		return float64(us) / 1000
	}
	ms, _ := strconv.ParseFloat(strconv.FormatFloat(float64(us)/1000, 'f', 3, 64), 64)
	return ms
}

// JournalStore keeps merchants' request journals (package memory in the
// process, package postgres where every replica reads and writes them).
// The algorithm over it (what is recorded, when a journal is trimmed, the
// report) is package mockserver's, the same on every backend. A server
// appends each request before its answer leaves, so that a report asked
// right after counts it. Every method must be safe for concurrent use (by
// any number of replicas, for a shared store); a store that cannot be
// reached answers an error wrapping ErrUnavailable.
type JournalStore interface {
	// AppendRequest stores one request as its merchant's newest. It is
	// called on every request with the request's context, which may be
	// done when the client went away: the request was served and
	// belongs in the report, so the store writes it even then, bounding
	// its own time if it can stall.
	AppendRequest(ctx context.Context, merchantID string, r JournalRecord) error
	// ReplaceRequest puts r in place of was, the merchant's entry of the
	// same request (Entry.ID), in its place among the others, counting r
	// rather than was: the server corrects with it an entry a store call
	// carried (JournalCarry) when the answer turned out otherwise. An
	// entry no longer listed (trimmed away) is an error wrapping
	// ErrNotFound, and the counts stay as they were.
	ReplaceRequest(ctx context.Context, merchantID string, was, r JournalRecord) error
	// TrimRequests keeps the merchant's newest keep requests and folds
	// the older ones into the counts of CountRequests, which so cover
	// every request ever appended, each once. From a trim on, a store
	// may hold only the newest keep at any time (memory keeps a ring of
	// that size; PostgreSQL holds what came since until the next trim):
	// lists of the newest keep are the same either way.
	TrimRequests(ctx context.Context, merchantID string, keep int) error
	// ListRequests returns the requests among the merchant's newest
	// q.Keep that match q, newest first, from q.Offset and at most
	// q.Limit, and how many match in all. Negative numbers are an error.
	ListRequests(ctx context.Context, merchantID string, q JournalQuery) ([]JournalEntry, int, error)
	// CountRequests counts the merchant's counted requests: those still
	// listed and those trimmed. Per operation, it tells apart the first
	// MaxDistinctViolations distinct violations the merchant made, in the
	// order made, and counts the others together (JournalCounts.Unlisted),
	// so that what a store keeps of them is bounded too.
	CountRequests(ctx context.Context, merchantID string) (JournalCounts, error)
	// ForgetRequests drops what this process alone holds of a merchant
	// gone idle: in memory, its journal and counts; a store the replicas
	// share keeps them, for the replicas that still serve the merchant.
	ForgetRequests(ctx context.Context, merchantID string) error
}

// JournalRecord is one request as a JournalStore keeps it.
type JournalRecord struct {
	// Entry is what GET /_sandbox/requests shows.
	Entry JournalEntry
	// Counted says the request is a call of the service API, which the
	// report covers; control API calls are listed, not counted.
	Counted bool
	// Violating says the contract check refused the call. It is never
	// set for an answer a fault shaped (Entry.InjectedFault): that call
	// is the client's own test, not its violation.
	Violating bool
}

// JournalQuery selects a page of a merchant's journal.
type JournalQuery struct {
	// Keep is the journal's size: only the newest Keep requests are
	// listed, whatever more the store still holds.
	Keep int
	// Status, when not 0, lists only requests answered with it.
	Status int
	// Violations lists only requests with violations.
	Violations bool
	// Offset and Limit are the page, in matching requests.
	Offset, Limit int
}

// MaxDistinctViolations is how many distinct violations (param, code and
// message) of one operation a merchant's counts tell apart: the first it
// made. Every further one is counted with the operation's unlisted
// violations. A violation names what the client sent (an unknown field's
// name, a metadata key), so a client that makes up a new one with every
// request would otherwise grow its counts for good: 10,000 creates of 50
// unknown fields of new names grew the server to 2 GB, and the report
// built from them was refused as too large after 25 s (docs/security.md).
const MaxDistinctViolations = 50

// JournalCounts are a merchant's counted requests, grouped, in any order.
type JournalCounts struct {
	Calls []JournalCallCount
	// Violations are at most MaxDistinctViolations per operation.
	Violations []JournalViolationCount
	// Unlisted counts, per operation with any, the violations past
	// those: counted, not told apart.
	Unlisted []JournalUnlistedCount
}

// JournalCallCount is how many counted calls share an operation ("" when
// the call matched none), a status and whether they were violating and
// injected.
type JournalCallCount struct {
	Operation string
	Status    int
	Violating bool
	Injected  bool
	Calls     int
}

// JournalUnlistedCount is how many violations of an operation's violating
// calls were of none of the distinct violations its counts tell apart.
type JournalUnlistedCount struct {
	Operation  string
	Violations int
}

// JournalViolationCount is how often violating calls of an operation
// ("" never: a call that matched no operation has none counted) made one
// violation.
type JournalViolationCount struct {
	Operation string
	Violation Violation
	Calls     int
}
