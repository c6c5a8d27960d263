// The event outbox held in memory: events and deliveries in maps, each
// merchant's pending deliveries in a heap by due time, and claims with
// leases exactly as the database keeps them.

package memory

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paymock/paymock"
)

// Outbox is a paymock.Outbox held in memory, and the paymock.EventStore of
// the Payments it was made with, safe for concurrent use.
//
// Claims are real: a claimed delivery is not claimed again until its
// lease runs out or its claim ends (Attempted, Release), and an outcome
// recorded under a lapsed claim is dropped, as in the database. In one
// process a lease never runs out while its sender lives, since senders
// record within it; the lease is what makes the algorithm the same.
//
// Each merchant's events and deliveries are its book, under the book's
// own lock: a walk over one merchant's journal (the dashboard's list of
// an endpoint's deliveries, a trim, a settle) never holds up another
// merchant's events or sends. The outbox's mu guards only the map of
// books, and is never held while a book's lock is taken.
//
// Lock order: a payment book's lock (Payments.Update) before an outbox
// book's, in UpdateWithEvent; the outbox never calls the payments, so the
// order holds everywhere.
type Outbox struct {
	payments *Payments
	lastID   atomic.Int64 // taken under a book's lock, so a merchant's ids grow in the order made

	mu    sync.Mutex
	books map[string]*outboxBook
}

// outboxBook is one merchant's events and pending deliveries.
type outboxBook struct {
	mu sync.Mutex
	// dead is set when a reset took the book out of the outbox, so that a
	// change racing with it finds the new book instead.
	dead bool

	events  []*outEvent // in the order stored
	byID    map[string]*outEvent
	dels    map[int64]*outDelivery // every delivery of the merchant's events, by id
	pending dueHeap                // the pending deliveries, earliest due first
	// chains holds, per chain, its pending deliveries in the order made:
	// only the first may be claimed.
	chains map[string][]*outDelivery
	// windowClaims holds, per endpoint URL, the unsent deliveries of a
	// reorder window claimed there (some may have ended since).
	windowClaims map[string][]*outDelivery
	// windowed holds, per endpoint URL, the deliveries a reorder window
	// held when made (some sent or ended since): what Window looks at.
	windowed map[string][]*outDelivery
}

type outEvent struct {
	ev      paymock.Event
	oneShot bool
	rounds  int
	dels    []*outDelivery // every round's, in order
}

type outDelivery struct {
	d     paymock.Delivery
	index int // in the merchant's pending heap; -1 once final
}

// NewOutbox returns an empty outbox whose UpdateWithEvent updates
// payments.
func NewOutbox(payments *Payments) *Outbox {
	return &Outbox{payments: payments, books: make(map[string]*outboxBook)}
}

// book returns the merchant's book with its lock held, or nil when it has
// none and create is false. The caller unlocks it.
func (o *Outbox) book(merchantID string, create bool) *outboxBook {
	return lockLive(func() *outboxBook {
		o.mu.Lock()
		defer o.mu.Unlock()
		b := o.books[merchantID]
		if b == nil && create {
			b = &outboxBook{byID: make(map[string]*outEvent), dels: make(map[int64]*outDelivery),
				chains: make(map[string][]*outDelivery), windowClaims: make(map[string][]*outDelivery),
				windowed: make(map[string][]*outDelivery)}
			o.books[merchantID] = b
		}
		return b
	})
}

var (
	_ paymock.Outbox     = (*Outbox)(nil)
	_ paymock.EventStore = (*Outbox)(nil)
)

// UpdateWithEvent implements paymock.EventStore: the event is stored under
// the payment book's lock, inside the update, so that the transition and
// its event land together or not at all.
func (o *Outbox) UpdateWithEvent(ctx context.Context, merchantID, id string, fn func(*paymock.Payment) error,
	event func(paymock.Payment) (paymock.Outgoing, error)) (paymock.Payment, paymock.Outgoing, []int64, error) {
	var (
		out paymock.Outgoing
		ids []int64
	)
	p, err := o.payments.Update(ctx, merchantID, id, func(p *paymock.Payment) error {
		if err := fn(p); err != nil {
			return err
		}
		var err error
		if out, err = event(*p); err != nil {
			return err
		}
		ids, err = o.addEvent(out)
		return err
	})
	return p, out, ids, err
}

// AddEvent implements paymock.Outbox.
func (o *Outbox) AddEvent(_ context.Context, out paymock.Outgoing) ([]int64, error) {
	return o.addEvent(out)
}

func (o *Outbox) addEvent(out paymock.Outgoing) ([]int64, error) {
	ev := out.Event
	if ev.MerchantID == "" || ev.ID == "" {
		return nil, errors.New("storing an event: no merchant or no id")
	}
	b := o.book(ev.MerchantID, true)
	defer b.mu.Unlock()
	if _, dup := b.byID[ev.ID]; dup {
		return nil, fmt.Errorf("storing event %s: already stored", ev.ID)
	}
	ev.Body = bytes.Clone(ev.Body)
	// Only the payment's id is read again; the rest of it, a dozen
	// strings and a map, would be pointers for every garbage collection
	// to trace for as long as the journal keeps the event.
	ev.Payment = paymock.Payment{ID: ev.Payment.ID}
	e := &outEvent{ev: ev, oneShot: out.OneShot}
	b.events = append(b.events, e)
	b.byID[ev.ID] = e
	return o.addRoundLocked(b, e, out.Deliveries), nil
}

// addRoundLocked stores the next round of e's deliveries.
func (o *Outbox) addRoundLocked(b *outboxBook, e *outEvent, dels []paymock.Delivery) []int64 {
	e.rounds++
	ids := make([]int64, 0, len(dels))
	for i, d := range dels {
		d.ID, d.MerchantID, d.EventID, d.EventType = o.lastID.Add(1), e.ev.MerchantID, e.ev.ID, e.ev.Type
		d.PaymentID, d.Body, d.OneShot, d.Round, d.Position = e.ev.Payment.ID, e.ev.Body, e.oneShot, e.rounds, i
		d.Attempts, d.Sends, d.ClaimedUntil = nil, 0, time.Time{}
		od := &outDelivery{d: d, index: -1}
		if d.State == paymock.DeliveryPending {
			heap.Push(&b.pending, od)
			if d.Chain != "" {
				b.chains[d.Chain] = append(b.chains[d.Chain], od)
			}
			if d.Window != nil {
				b.windowed[d.URL] = append(b.windowed[d.URL], od)
			}
		} else {
			od.d.NextAt = time.Time{}
		}
		e.dels = append(e.dels, od)
		b.dels[d.ID] = od
		ids = append(ids, d.ID)
	}
	return ids
}

// AddRound implements paymock.Outbox. The limit is exact: the merchant's
// pending heap is its count, read and grown under the one lock.
func (o *Outbox) AddRound(_ context.Context, merchantID, eventID string, dels []paymock.Delivery, limit int) ([]int64, error) {
	b := o.book(merchantID, false)
	if b == nil {
		return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	defer b.mu.Unlock()
	e := b.byID[eventID]
	if e == nil {
		return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	if limit > 0 && len(b.pending) >= limit {
		return nil, fmt.Errorf("event %s: %d deliveries pending: %w", eventID, len(b.pending), paymock.ErrLimitReached)
	}
	return o.addRoundLocked(b, e, dels), nil
}

// event returns one of the merchant's events with its book's lock held,
// or nil and no lock held.
func (o *Outbox) event(merchantID, eventID string) (*outboxBook, *outEvent) {
	b := o.book(merchantID, false)
	if b == nil {
		return nil, nil
	}
	if e := b.byID[eventID]; e != nil {
		return b, e
	}
	b.mu.Unlock()
	return nil, nil
}

// Round implements paymock.Outbox.
func (o *Outbox) Round(_ context.Context, merchantID, eventID string, round int) ([]paymock.Delivery, error) {
	b, e := o.event(merchantID, eventID)
	if e == nil {
		return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	defer b.mu.Unlock()
	var out []paymock.Delivery
	for _, od := range e.dels {
		if od.d.Round == round {
			out = append(out, od.copy())
		}
	}
	return out, nil
}

// copy is the delivery as a caller may keep it: its attempts its own.
func (od *outDelivery) copy() paymock.Delivery {
	d := od.d
	d.Attempts = slices.Clone(d.Attempts)
	return d
}

// head reports whether od heads its chain.
func (b *outboxBook) head(od *outDelivery) bool {
	return od.d.Chain == "" || b.chains[od.d.Chain][0] == od
}

// Claim implements paymock.Outbox. It walks the merchant's heap in due
// order, so a claim costs the deliveries it passes over (claimed, or not
// heading their chain), not all those pending.
func (o *Outbox) Claim(_ context.Context, c paymock.Claim) ([]paymock.Delivery, error) {
	if c.Lease <= 0 || c.Limit <= 0 || c.MerchantID == "" {
		return nil, fmt.Errorf("claim: a merchant, a positive lease (%s) and a positive limit (%d) are needed", c.Lease, c.Limit)
	}
	b := o.book(c.MerchantID, false)
	if b == nil {
		return nil, nil
	}
	defer b.mu.Unlock()
	if len(b.pending) == 0 || b.pending[0].d.NextAt.After(c.Until) {
		return nil, nil // the usual case when nothing is due
	}
	var (
		cands []*outDelivery  // in due order
		taken map[string]bool // endpoints whose window's turn this claim took
	)
	// claimable reports whether od may be claimed now, and takes its
	// window's turn if it is held by one.
	claimable := func(od *outDelivery) bool {
		d := &od.d
		if d.ClaimedUntil.After(c.Now) || d.NextAt.After(c.Until) || !b.head(od) {
			return false
		}
		if d.Window == nil || d.Sends > 0 {
			return true
		}
		if taken[d.URL] || b.windowBusy(d.URL, c.Now) {
			return false
		}
		if taken == nil {
			taken = map[string]bool{}
		}
		taken[d.URL] = true
		return true
	}
	if c.IDs != nil {
		var byDue []*outDelivery
		for _, id := range c.IDs {
			if od := b.dels[id]; od != nil && od.index >= 0 {
				byDue = append(byDue, od)
			}
		}
		sort.Slice(byDue, func(i, j int) bool { return dueBefore(&byDue[i].d, &byDue[j].d) })
		for _, od := range byDue {
			if len(cands) < c.Limit && claimable(od) {
				cands = append(cands, od)
			}
		}
	} else {
		var buf [8]*outDelivery
		passed := buf[:0]
		for len(cands) < c.Limit && len(b.pending) > 0 && !b.pending[0].d.NextAt.After(c.Until) {
			od := heap.Pop(&b.pending).(*outDelivery)
			passed = append(passed, od)
			if claimable(od) {
				cands = append(cands, od)
			}
		}
		for _, od := range passed {
			heap.Push(&b.pending, od)
		}
	}
	out := make([]paymock.Delivery, 0, len(cands))
	until := c.Now.Add(c.Lease)
	for _, od := range cands {
		od.d.ClaimedUntil = until
		if od.d.Window != nil && od.d.Sends == 0 {
			b.windowClaims[od.d.URL] = append(b.windowClaims[od.d.URL], od)
		}
		out = append(out, od.copy())
	}
	return out, nil
}

// windowBusy reports whether an unsent delivery a reorder window holds on
// url is claimed at now; it forgets the claims that have ended.
func (b *outboxBook) windowBusy(url string, now time.Time) bool {
	claims := slices.DeleteFunc(b.windowClaims[url], func(od *outDelivery) bool {
		return od.d.State != paymock.DeliveryPending || od.d.Sends > 0 || !od.d.ClaimedUntil.After(now)
	})
	if len(claims) == 0 {
		delete(b.windowClaims, url)
		return false
	}
	b.windowClaims[url] = claims
	return true
}

// DueDeliveries implements paymock.Outbox.
func (o *Outbox) DueDeliveries(_ context.Context, merchantID string, until time.Time, limit int) ([]paymock.Delivery, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due deliveries: limit %d must be positive", limit)
	}
	b := o.book(merchantID, false)
	if b == nil {
		return nil, nil
	}
	defer b.mu.Unlock()
	var due []*outDelivery
	for _, od := range b.pending {
		if !od.d.NextAt.After(until) && b.head(od) {
			due = append(due, od)
		}
	}
	sort.Slice(due, func(i, j int) bool { return dueBefore(&due[i].d, &due[j].d) })
	out := make([]paymock.Delivery, 0, min(len(due), limit))
	for _, od := range due[:min(len(due), limit)] {
		out = append(out, od.copy())
	}
	return out, nil
}

// DueMerchants implements paymock.Outbox. Clocks are not kept here, so
// every merchant's is taken as base ahead of real time: a merchant whose
// clock was advanced further has its deliveries brought by the timers of
// the process that advanced it, which is this one.
func (o *Outbox) DueMerchants(_ context.Context, now time.Time, base time.Duration, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due merchants: limit %d must be positive", limit)
	}
	until := now.Add(base)
	o.mu.Lock()
	type held struct {
		id string
		b  *outboxBook
	}
	books := make([]held, 0, len(o.books))
	for id, b := range o.books {
		books = append(books, held{id, b})
	}
	o.mu.Unlock()
	var out []string
	for _, h := range books {
		h.b.mu.Lock()
		if !h.b.dead && len(h.b.pending) > 0 && !h.b.pending[0].d.NextAt.After(until) {
			out = append(out, h.id)
		}
		h.b.mu.Unlock()
	}
	slices.Sort(out)
	return out[:min(len(out), limit)], nil
}

// Attempted implements paymock.Outbox.
func (o *Outbox) Attempted(_ context.Context, del paymock.Delivery, u paymock.Outcome) error {
	b := o.book(del.MerchantID, false)
	if b == nil {
		return nil // reset
	}
	defer b.mu.Unlock()
	od := b.dels[del.ID]
	if od == nil || od.index < 0 || !od.d.ClaimedUntil.Equal(del.ClaimedUntil) {
		return nil // reset, or the claim lapsed and is another sender's
	}
	od.d.Attempts = append(od.d.Attempts, u.Attempts...)
	od.d.Sends, od.d.State, od.d.Error, od.d.ClaimedUntil = u.Sends, u.State, u.Error, time.Time{}
	if u.State == paymock.DeliveryPending {
		od.d.NextAt = u.NextAt
		heap.Fix(&b.pending, od.index)
		return nil
	}
	od.d.NextAt = time.Time{}
	heap.Remove(&b.pending, od.index)
	if c := od.d.Chain; c != "" {
		chain := slices.DeleteFunc(b.chains[c], func(x *outDelivery) bool { return x == od })
		if len(chain) == 0 {
			delete(b.chains, c)
		} else {
			b.chains[c] = chain
		}
	}
	return nil
}

// Release implements paymock.Outbox.
func (o *Outbox) Release(_ context.Context, del paymock.Delivery) error {
	b := o.book(del.MerchantID, false)
	if b == nil {
		return nil
	}
	defer b.mu.Unlock()
	if od := b.dels[del.ID]; od != nil && od.d.ClaimedUntil.Equal(del.ClaimedUntil) {
		od.d.ClaimedUntil = time.Time{}
	}
	return nil
}

// Window implements paymock.Outbox: the window is the latest pending
// delivery to that endpoint held by a reorder window still open.
func (o *Outbox) Window(_ context.Context, merchantID, url string, now time.Time) (time.Time, *paymock.WebhookFault, error) {
	b := o.book(merchantID, false)
	if b == nil {
		return time.Time{}, nil, nil
	}
	defer b.mu.Unlock()
	held := slices.DeleteFunc(b.windowed[url], func(od *outDelivery) bool {
		return od.d.State != paymock.DeliveryPending || od.d.Sends > 0
	})
	if len(held) == 0 {
		delete(b.windowed, url)
	} else {
		b.windowed[url] = held
	}
	var latest *outDelivery
	for _, od := range held {
		if d := &od.d; d.NextAt.After(now) && (latest == nil || d.NextAt.After(latest.d.NextAt)) {
			latest = od
		}
	}
	if latest == nil {
		return time.Time{}, nil, nil
	}
	f := *latest.d.Window
	return latest.d.NextAt, &f, nil
}

// Events implements paymock.Outbox.
func (o *Outbox) Events(_ context.Context, merchantID string, offset, limit int) ([]paymock.EventRecord, int, error) {
	out := []paymock.EventRecord{}
	b := o.book(merchantID, false)
	if b == nil {
		return out, 0, nil
	}
	defer b.mu.Unlock()
	total := len(b.events)
	for i := max(offset, 0); i < total && (limit <= 0 || len(out) < limit); i++ {
		out = append(out, b.events[total-1-i].record())
	}
	return out, total, nil
}

// Event implements paymock.Outbox.
func (o *Outbox) Event(_ context.Context, merchantID, eventID string) (paymock.EventRecord, bool, error) {
	b, e := o.event(merchantID, eventID)
	if e == nil {
		return paymock.EventRecord{}, false, nil
	}
	defer b.mu.Unlock()
	return e.record(), true, nil
}

func (e *outEvent) record() paymock.EventRecord {
	r := paymock.EventRecord{ID: e.ev.ID, Type: e.ev.Type, CreatedAt: paymock.FormatTime(e.ev.CreatedAt),
		PaymentID: e.ev.Payment.ID, Payload: bytes.Clone(e.ev.Body),
		Deliveries: make([]paymock.DeliveryRecord, 0, len(e.dels))}
	for _, od := range e.dels {
		r.Deliveries = append(r.Deliveries, od.copy().Record())
	}
	return r
}

// EndpointDeliveries implements paymock.Outbox.
func (o *Outbox) EndpointDeliveries(_ context.Context, merchantID, endpointID string, offset, limit int) ([]paymock.EndpointDeliveryRecord, int, error) {
	out := []paymock.EndpointDeliveryRecord{}
	b := o.book(merchantID, false)
	if b == nil {
		return out, 0, nil
	}
	defer b.mu.Unlock()
	offset = max(offset, 0)
	total := 0
	for i := len(b.events) - 1; i >= 0; i-- {
		e := b.events[i]
		for k := len(e.dels) - 1; k >= 0; k-- {
			od := e.dels[k]
			if od.d.EndpointID != endpointID {
				continue
			}
			if total >= offset && (limit <= 0 || len(out) < limit) {
				out = append(out, paymock.EndpointDeliveryRecord{EventID: e.ev.ID, EventType: e.ev.Type,
					PaymentID: e.ev.Payment.ID, DeliveryRecord: od.copy().Record()})
			}
			total++
		}
	}
	return out, total, nil
}

// Claimed implements paymock.Outbox.
func (o *Outbox) Claimed(_ context.Context, merchantID string, now time.Time) (bool, error) {
	if b := o.book(merchantID, false); b != nil {
		defer b.mu.Unlock()
		for _, od := range b.pending {
			if od.d.ClaimedUntil.After(now) {
				return true, nil
			}
		}
	}
	return false, nil
}

// Pending implements paymock.Outbox.
func (o *Outbox) Pending(_ context.Context, merchantID string) (bool, error) {
	b := o.book(merchantID, false)
	if b == nil {
		return false, nil
	}
	defer b.mu.Unlock()
	return len(b.pending) > 0, nil
}

// ResetEvents implements paymock.Outbox.
func (o *Outbox) ResetEvents(_ context.Context, merchantID string) error {
	o.mu.Lock()
	b := o.books[merchantID]
	delete(o.books, merchantID)
	o.mu.Unlock()
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dead = true
	for _, e := range b.events {
		b.dropLocked(e)
	}
	return nil
}

func (b *outboxBook) dropLocked(e *outEvent) {
	for _, od := range e.dels {
		delete(b.dels, od.d.ID)
		od.index = -1 // an Attempted still under way records nothing
	}
}

// TrimEvents implements paymock.Outbox. It costs a walk over the events,
// not their deliveries: each event knows its own.
func (o *Outbox) TrimEvents(_ context.Context, merchantID string, keep paymock.KeepEvents) error {
	if keep.Events <= 0 || keep.Deliveries <= 0 {
		return fmt.Errorf("trim events: keep %d events and %d deliveries: both must be positive", keep.Events, keep.Deliveries)
	}
	b := o.book(merchantID, false)
	if b == nil {
		return nil
	}
	defer b.mu.Unlock()
	if len(b.events) <= keep.Events && len(b.dels) <= keep.Deliveries {
		return nil
	}
	// kept is how many of the newest events the bounds keep.
	kept, held := 0, 0
	for i := len(b.events) - 1; i >= 0; i-- {
		held += len(b.events[i].dels)
		if kept > 0 && (kept == keep.Events || held > keep.Deliveries) {
			break
		}
		kept++
	}
	old := len(b.events) - kept
	rest := b.events[:0]
	for i, e := range b.events {
		if i < old && !slices.ContainsFunc(e.dels, func(od *outDelivery) bool { return od.index >= 0 }) {
			delete(b.byID, e.ev.ID)
			b.dropLocked(e)
			continue
		}
		rest = append(rest, e)
	}
	clear(b.events[len(rest):])
	b.events = rest
	return nil
}

// dueBefore is due order: by due instant, then in the order made, except
// that a reorder window sends what it holds newest first.
func dueBefore(a, b *paymock.Delivery) bool {
	if c := a.NextAt.Compare(b.NextAt); c != 0 {
		return c < 0
	}
	return cmp.Less(dueKey(a), dueKey(b))
}

func dueKey(d *paymock.Delivery) int64 {
	if d.Window != nil {
		return -d.ID
	}
	return d.ID
}

// dueHeap is a merchant's pending deliveries, earliest due first.
type dueHeap []*outDelivery

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return dueBefore(&h[i].d, &h[j].d) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *dueHeap) Push(x any) {
	od := x.(*outDelivery)
	od.index = len(*h)
	*h = append(*h, od)
}
func (h *dueHeap) Pop() any {
	old := *h
	od := old[len(old)-1]
	old[len(old)-1] = nil
	od.index = -1
	*h = old[:len(old)-1]
	return od
}
