// Each merchant's fault rules and their counts, held in the process: the
// paymock.FaultRules of a memory Backend.

package memory

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/paymock/paymock"
)

// FaultRules keeps fault rules in memory. A merchant that never had a rule
// has no book: Candidates then costs one lock-free map look-up, and a
// merchant with rules for other calls only an atomic load more. It is
// safe for concurrent use.
type FaultRules struct {
	books sync.Map // merchant id → *faultBook
}

var _ paymock.FaultRules = (*FaultRules)(nil)

// NewFaultRules returns an empty FaultRules.
func NewFaultRules() *FaultRules { return &FaultRules{} }

// faultBook is one merchant's records: API rules that still fire, and
// counts of file rules once one was drawn for, hit, deleted or cleared.
type faultBook struct {
	mu      sync.Mutex
	records map[string]*faultRecord // by rule id
	seq     int64                   // of the last API rule added
	// index counts, per target, the records Candidates returns by
	// selector, for reading without the lock; nil when there are none.
	index [2]atomic.Pointer[map[string]int]
	// dead is set when a reset removed the book, so that a change racing
	// with it retries on the new book.
	dead bool
}

type faultRecord struct {
	rule     paymock.FaultRule // as added (an API rule) or its ID and Target (a file rule)
	selector string
	file     bool
	seq      int64
	hits     int
	times    bool // the rule has times: remaining counts down
	left     int
	draws    int64
	removed  bool
}

// live says the record still fires: not removed, not spent.
func (r *faultRecord) live() bool { return !r.removed && (!r.times || r.left > 0) }

func (r *faultRecord) stored() paymock.StoredFaultRule {
	st := paymock.StoredFaultRule{Rule: r.rule, File: r.file, Seq: r.seq, Removed: r.removed}
	st.Rule.Hits, st.Rule.Remaining = r.hits, nil
	if r.times {
		st.Rule.Remaining = new(r.left)
	}
	return st
}

func targetIndex(t paymock.FaultTarget) int {
	if t == paymock.FaultTargetWebhooks {
		return 1
	}
	return 0
}

// reindex publishes the counts Candidates reads; called with the book
// locked after the records changed.
func (b *faultBook) reindex() {
	var idx [2]map[string]int
	for _, r := range b.records {
		i := targetIndex(r.rule.Target)
		if idx[i] == nil {
			idx[i] = map[string]int{}
		}
		idx[i][r.selector]++
	}
	for i := range idx {
		if idx[i] == nil {
			b.index[i].Store(nil)
		} else {
			b.index[i].Store(&idx[i])
		}
	}
}

// book returns the merchant's book, or nil when it has none and create is
// not set.
func (f *FaultRules) book(merchantID string, create bool) *faultBook {
	if v, ok := f.books.Load(merchantID); ok {
		return v.(*faultBook)
	}
	if !create {
		return nil
	}
	v, _ := f.books.LoadOrStore(merchantID, &faultBook{records: map[string]*faultRecord{}})
	return v.(*faultBook)
}

// locked runs fn on the merchant's book, locked, creating the book when
// create is set; fn is not run when there is no book. A book a reset
// removed meanwhile is not written: fn runs again on the new one.
func (f *FaultRules) locked(merchantID string, create bool, fn func(b *faultBook)) {
	b := lockLive(func() *faultBook { return f.book(merchantID, create) })
	if b == nil {
		return
	}
	defer b.mu.Unlock()
	fn(b)
}

// AddRule implements paymock.FaultRules.
func (f *FaultRules) AddRule(ctx context.Context, merchantID string, r paymock.FaultRule, limit int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	f.locked(merchantID, true, func(b *faultBook) {
		if _, ok := b.records[r.ID]; ok {
			err = paymock.ErrDuplicateFaultRule
			return
		}
		n := 0
		for _, rec := range b.records {
			if !rec.file {
				n++
			}
		}
		if n >= limit {
			err = paymock.ErrTooManyFaultRules
			return
		}
		b.seq++
		rec := &faultRecord{rule: r, selector: r.Selector(), seq: b.seq}
		rec.rule.Hits, rec.rule.Remaining = 0, nil
		if r.Times != nil {
			rec.times, rec.left = true, *r.Times
		}
		b.records[r.ID] = rec
		b.reindex()
	})
	return err
}

// Rules implements paymock.FaultRules.
func (f *FaultRules) Rules(ctx context.Context, merchantID string) ([]paymock.StoredFaultRule, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []paymock.StoredFaultRule
	f.locked(merchantID, false, func(b *faultBook) {
		for _, rec := range b.records {
			out = append(out, rec.stored())
		}
	})
	return out, nil
}

// Candidates implements paymock.FaultRules: without a record for the
// selector or for any, it takes no lock and allocates nothing.
func (f *FaultRules) Candidates(ctx context.Context, merchantID string, target paymock.FaultTarget, selector string) ([]paymock.StoredFaultRule, error) {
	b := f.book(merchantID, false)
	if b == nil {
		return nil, nil
	}
	idx := b.index[targetIndex(target)].Load()
	if idx == nil || ((*idx)[selector] == 0 && (*idx)[paymock.FaultWildcard] == 0) {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []paymock.StoredFaultRule
	f.locked(merchantID, false, func(b *faultBook) {
		for _, rec := range b.records {
			if rec.rule.Target == target && (rec.selector == selector || rec.selector == paymock.FaultWildcard) {
				out = append(out, rec.stored())
			}
		}
	})
	return out, nil
}

// fileRecord returns the merchant's record of a file rule, adding it fresh
// (no hits, full times) when there is none; called with the book locked.
func (b *faultBook) fileRecord(r paymock.FaultRule) *faultRecord {
	rec := b.records[r.ID]
	if rec == nil {
		rec = &faultRecord{rule: paymock.FaultRule{ID: r.ID, Target: r.Target}, selector: r.Selector(), file: true}
		if r.Times != nil {
			rec.times, rec.left = true, *r.Times
		}
		b.records[r.ID] = rec
		b.reindex()
	}
	return rec
}

// record returns the record of a rule that still fires, adding a file
// rule's fresh; nil when there is none. Called with the book locked.
func (b *faultBook) record(r paymock.FaultRule, file bool) *faultRecord {
	var rec *faultRecord
	if file {
		rec = b.fileRecord(r)
	} else {
		rec = b.records[r.ID]
	}
	if rec == nil || rec.file != file || !rec.live() {
		return nil
	}
	return rec
}

// DrawRule implements paymock.FaultRules.
func (f *FaultRules) DrawRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	var n int64
	var ok bool
	f.locked(merchantID, true, func(b *faultBook) {
		if rec := b.record(r, file); rec != nil {
			rec.draws++
			n, ok = rec.draws, true
		}
	})
	return n, ok, nil
}

// HitRule implements paymock.FaultRules. An API rule whose times run out
// goes: nothing can bring it back.
func (f *FaultRules) HitRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (paymock.StoredFaultRule, bool, error) {
	if err := ctx.Err(); err != nil {
		return paymock.StoredFaultRule{}, false, err
	}
	var st paymock.StoredFaultRule
	var ok bool
	f.locked(merchantID, true, func(b *faultBook) {
		rec := b.record(r, file)
		if rec == nil {
			return
		}
		rec.hits++
		if rec.times {
			rec.left--
		}
		st, ok = rec.stored(), true
		st.Rule = r
		st.Rule.Hits, st.Rule.Remaining = rec.hits, nil
		if rec.times {
			st.Rule.Remaining = new(rec.left)
			if rec.left <= 0 && !file {
				delete(b.records, r.ID)
				b.reindex()
			}
		}
	})
	return st, ok, nil
}

// RemoveRule implements paymock.FaultRules.
func (f *FaultRules) RemoveRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var ok bool
	f.locked(merchantID, file, func(b *faultBook) {
		rec := b.record(r, file)
		if rec == nil {
			return
		}
		ok = true
		if file {
			rec.removed = true
		} else {
			delete(b.records, r.ID)
		}
		b.reindex()
	})
	return ok, nil
}

// ClearRules implements paymock.FaultRules, under the merchant's lock: a
// concurrent hit sees every rule gone or none.
func (f *FaultRules) ClearRules(ctx context.Context, merchantID string, file []paymock.FaultRule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.locked(merchantID, len(file) > 0, func(b *faultBook) {
		for id, rec := range b.records {
			if !rec.file {
				delete(b.records, id)
			}
		}
		for _, r := range file {
			b.fileRecord(r).removed = true
		}
		b.reindex()
	})
	return nil
}

// ResetRules implements paymock.FaultRules.
func (f *FaultRules) ResetRules(ctx context.Context, merchantID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if v, ok := f.books.LoadAndDelete(merchantID); ok {
		b := v.(*faultBook)
		b.mu.Lock()
		b.dead = true
		b.mu.Unlock()
	}
	return nil
}

// ForgetRules implements paymock.FaultRules: in memory this process holds
// everything, so a merchant gone idle is reset.
func (f *FaultRules) ForgetRules(ctx context.Context, merchantID string) error {
	return f.ResetRules(ctx, merchantID)
}
