// Due work held in memory: each merchant's pending payments in a heap by
// the instant they change by themselves.

package memory

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/paymock/paymock"
)

// dueEntry is one instant a payment of the book changes by itself: its
// expiry, pushed when it is inserted pending, or the earlier scenario step
// SetDue records. An entry is checked against the payment when it comes
// due, and dropped once the payment is no longer pending: the heap holds
// no pointer, so a million pending payments cost the collector nothing.
type dueEntry struct {
	sec  int64
	nsec int32
	rec  uint32 // the payment's record number: creation order
	to   uint8  // statusCodes index
}

func (e dueEntry) at() time.Time { return time.Unix(e.sec, int64(e.nsec)).UTC() }

func (e dueEntry) by(sec int64, nsec int32) bool {
	return e.sec < sec || e.sec == sec && e.nsec <= nsec
}

// dueQueue is a book's due entries, earliest first and, at one instant, in
// creation order (PostgreSQL orders by due_at, seq). The book's lock
// guards it.
type dueQueue []dueEntry

func (q dueQueue) Len() int { return len(q) }
func (q dueQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.sec != b.sec {
		return a.sec < b.sec
	}
	if a.nsec != b.nsec {
		return a.nsec < b.nsec
	}
	return a.rec < b.rec
}
func (q dueQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)   { *q = append(*q, x.(dueEntry)) }
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// add is heap.Push without the entry boxed in an interface, which would
// allocate for every pending payment stored: appended, then moved up as
// Push moves it.
func (q *dueQueue) add(at time.Time, to paymock.Status, rec uint32) {
	*q = append(*q, dueEntry{sec: at.Unix(), nsec: int32(at.Nanosecond()), rec: rec, to: uint8(statusCode(to))})
	heap.Fix(q, len(*q)-1)
}

func statusCode(s paymock.Status) int {
	for i, c := range statusCodes() {
		if i > 0 && c == s {
			return i
		}
	}
	return 0
}

// Due is the in-memory paymock.DueStore over the payments of a Payments
// and the clocks of a Clocks, as PostgreSQL's is over the payments and
// clocks tables.
type Due struct {
	payments *Payments
	clocks   *Clocks
}

var _ paymock.DueStore = (*Due)(nil)

// NewDue returns the due work of payments, on the merchants' clocks.
func NewDue(payments *Payments, clocks *Clocks) *Due {
	return &Due{payments: payments, clocks: clocks}
}

// SetDue implements paymock.DueStore.
func (d *Due) SetDue(_ context.Context, merchantID, id string, at time.Time, to paymock.Status) error {
	switch to {
	case paymock.StatusCompleted, paymock.StatusFailed, paymock.StatusExpired:
	default:
		return fmt.Errorf("set due %s: %q is not a final status", id, to)
	}
	b := d.payments.book(merchantID, false)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.find(d.payments.hash(id), id)
	if !ok || b.decode(i).Status != paymock.StatusPending {
		return nil
	}
	b.due.add(at, to, uint32(i))
	return nil
}

// Due implements paymock.DueStore.
func (d *Due) Due(_ context.Context, merchantID string, until time.Time, limit int) ([]paymock.DuePayment, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due: limit %d must be positive", limit)
	}
	b := d.payments.book(merchantID, false)
	if b == nil {
		return nil, nil
	}
	return b.listDue(until, limit), nil
}

// listDue takes up to limit of the book's pending payments due by until,
// earliest first. Entries of payments no longer pending go; the others
// stay, to be listed again until the payment moves. A payment with a step
// has its expiry queued too: it is listed once, at the earlier.
func (b *book) listDue(until time.Time, limit int) []paymock.DuePayment {
	sec, nsec := until.Unix(), int32(until.Nanosecond())
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []paymock.DuePayment
	var keep []dueEntry
	var listed map[uint32]bool
	codes := statusCodes()
	for len(out) < limit && len(b.due) > 0 && b.due[0].by(sec, nsec) {
		e := heap.Pop(&b.due).(dueEntry)
		p := b.decode(int(e.rec))
		if p.Status != paymock.StatusPending {
			continue
		}
		keep = append(keep, e)
		if listed[e.rec] {
			continue
		}
		if listed == nil {
			listed = make(map[uint32]bool)
		}
		listed[e.rec] = true
		out = append(out, paymock.DuePayment{MerchantID: b.merchantID, ID: p.ID, At: e.at(), To: codes[e.to]})
	}
	for _, e := range keep {
		heap.Push(&b.due, e)
	}
	return out
}

// DueAll implements paymock.DueStore: each book whose merchant's clock is
// real is read up to its clock's time, and the lists merged. The slots of
// dropped books are nil, and skipped.
func (d *Due) DueAll(_ context.Context, now time.Time, base time.Duration, limit int) ([]paymock.DuePayment, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due: limit %d must be positive", limit)
	}
	d.payments.mu.RLock()
	books := slices.Clone(d.payments.byNum)
	d.payments.mu.RUnlock()
	var out []paymock.DuePayment
	for _, b := range books {
		if b == nil {
			continue
		}
		off, real := d.clocks.offset(b.merchantID, base)
		if !real {
			continue
		}
		out = append(out, b.listDue(now.Add(off), limit)...)
	}
	slices.SortStableFunc(out, func(a, b paymock.DuePayment) int { return a.At.Compare(b.At) })
	if len(out) > limit {
		out = out[:limit]
	}
	return slices.Clip(out), nil
}
