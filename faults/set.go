// Per-merchant rule books: adding, listing and removing rules, and the
// matching, counting and seeded draws the request chain and the webhook
// sender ask for.

package faults

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/paymock/paymock"
)

// DefaultMaxRules bounds the rules one merchant may add.
const DefaultMaxRules = 1000

// Config configures a Set; every field has a usable zero value.
type Config struct {
	// Seed seeds each merchant's draws for rules with a probability below
	// 1, together with the merchant id: the same seed gives the same hits
	// for the same calls.
	Seed uint64
	// IDs makes rule ids ("flt_..."); nil: unguessable random ids.
	IDs interface{ New(prefix string) string }
	// FileRules apply to every merchant, each with its own countdown;
	// usually from LoadFile.
	FileRules []Rule
	// Operations are the operation ids an API rule may name besides "*";
	// nil: DefaultOperations.
	Operations []string
	// MaxRules bounds the rules one merchant may add; 0: DefaultMaxRules.
	MaxRules int
	// Store, when set, keeps every merchant's rules and counts where all
	// replicas see them; file rules then get ids made from the file, the
	// same on every replica. nil: each merchant's rules live in this Set.
	Store RuleStore
}

// Set holds every merchant's fault rules. It is safe for concurrent use.
type Set struct {
	seed     uint64
	ids      interface{ New(prefix string) string }
	file     []Rule
	ops      []string
	maxRules int
	store    RuleStore // nil: the books below hold everything
	// books maps a merchant id to its *book. A merchant that never had a
	// rule, while there are no file rules, has no book: matching then
	// costs one lock-free map look-up.
	books sync.Map
}

// New returns a Set. File rules are validated again against Operations
// (LoadFile may have checked other names) and given their ids, one per
// rule, shared by every merchant.
func New(cfg Config) (*Set, error) {
	s := &Set{seed: cfg.Seed, ids: cfg.IDs, ops: cfg.Operations, maxRules: cfg.MaxRules, store: cfg.Store}
	if s.ids == nil {
		s.ids = paymock.NewIDs(nil)
	}
	if s.maxRules <= 0 {
		s.maxRules = DefaultMaxRules
	}
	var errs []error
	for i, r := range cfg.FileRules {
		if vs := r.ValidateFor(s.ops); len(vs) > 0 {
			where := r.Source
			if where == "" {
				where = "file rule " + strconv.Itoa(i+1)
			}
			errs = append(errs, fmt.Errorf("faults: %s: %w", where, paymock.Invalid(vs...)))
			continue
		}
		r = r.Normalize()
		r.Remaining, r.Hits = nil, 0
		if s.store != nil {
			r.ID = fileRuleID(i, r)
		} else {
			r.ID = s.ids.New("flt")
		}
		s.file = append(s.file, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// entry is a rule in one merchant's book with its own counts.
type entry struct {
	rule      Rule // normalized, with ID and Source
	remaining int  // with rule.Times; unused without
	hits      int
	fromFile  bool
	order     int // API rules: when added; file rules: place in the file
}

// selector is e.rule.Selector() without copying the rule, on the hot path.
func (e *entry) selector() string {
	if e.rule.Target == TargetWebhooks {
		if e.rule.EventType == "" {
			return Wildcard
		}
		return e.rule.EventType
	}
	return e.rule.Operation
}

func (e *entry) snapshot() Rule {
	r := e.rule
	r.Hits = e.hits
	if r.Times != nil {
		t, rem := *r.Times, e.remaining
		r.Times, r.Remaining = &t, &rem
	}
	p := *r.Probability
	r.Probability = &p
	return r
}

// ruleList is one target's rules in matching order, with a count of rules
// per selector that MatchAPI reads without the lock.
type ruleList struct {
	entries []*entry
	index   atomic.Pointer[map[string]int]
}

// reindex sorts the rules into matching order (see the package doc) and
// publishes the counts; called with the book locked.
func (l *ruleList) reindex() {
	sortEntries(l.entries)
	if len(l.entries) == 0 {
		l.index.Store(nil)
		return
	}
	idx := map[string]int{}
	for _, e := range l.entries {
		idx[e.selector()]++
	}
	l.index.Store(&idx)
}

// book is one merchant's rules, counts and draws.
type book struct {
	mu    sync.Mutex
	api   ruleList
	hooks ruleList
	rng   *rand.Rand
	added int // API rules ever added, for newest-first order
	// dead is set when a reset or forget removed the book from the Set, so
	// an Add racing with it retries on the new book.
	dead bool
}

func (s *Set) newBook(merchantID string) *book {
	h := fnv.New64a()
	h.Write([]byte(merchantID))
	b := &book{rng: rand.New(rand.NewPCG(s.seed, h.Sum64()))}
	for i, r := range s.file {
		e := &entry{rule: r, fromFile: true, order: i}
		if r.Times != nil {
			e.remaining = *r.Times
		}
		b.list(r.Target).entries = append(b.list(r.Target).entries, e)
	}
	b.api.reindex()
	b.hooks.reindex()
	return b
}

func (b *book) list(t Target) *ruleList {
	if t == TargetWebhooks {
		return &b.hooks
	}
	return &b.api
}

// find returns a merchant's book, creating it when create is set or when
// file rules give every merchant one.
func (s *Set) find(merchantID string, create bool) *book {
	if v, ok := s.books.Load(merchantID); ok {
		return v.(*book)
	}
	if !create && len(s.file) == 0 {
		return nil
	}
	v, _ := s.books.LoadOrStore(merchantID, s.newBook(merchantID))
	return v.(*book)
}

// Add validates r, fills its defaults, gives it an id and adds it to the
// merchant's rules. A rule that does not validate is an
// invalid_request_error listing every violation. ID, Source, Remaining and
// Hits of r are ignored. On a shared store it is AddContext with a bounded
// context.
func (s *Set) Add(merchantID string, r Rule) (Rule, error) {
	ctx, cancel := s.context()
	defer cancel()
	return s.AddContext(ctx, merchantID, r)
}

// AddContext is Add; on a shared store (Config.Store) it may also fail
// with an error wrapping paymock.ErrUnavailable.
func (s *Set) AddContext(ctx context.Context, merchantID string, r Rule) (Rule, error) {
	if vs := r.ValidateFor(s.ops); len(vs) > 0 {
		return Rule{}, paymock.Invalid(vs...)
	}
	r = r.Normalize()
	r.ID, r.Source, r.Remaining, r.Hits = s.ids.New("flt"), "api", nil, 0
	if s.store != nil {
		return s.addShared(ctx, merchantID, r)
	}
	for {
		b := s.find(merchantID, true)
		b.mu.Lock()
		if b.dead {
			b.mu.Unlock()
			continue
		}
		if n := len(b.api.entries) + len(b.hooks.entries); n >= s.maxRules {
			b.mu.Unlock()
			return Rule{}, s.limitReached()
		}
		b.added++
		e := &entry{rule: r, order: b.added}
		if r.Times != nil {
			e.remaining = *r.Times
		}
		l := b.list(r.Target)
		l.entries = append(l.entries, e)
		l.reindex()
		out := e.snapshot()
		b.mu.Unlock()
		return out, nil
	}
}

// context is what a method without one gives the store: a bounded context
// on a shared store, none needed in memory.
func (s *Set) context() (context.Context, context.CancelFunc) {
	if s.store == nil {
		return context.Background(), func() {}
	}
	return bounded()
}

// List returns the merchant's rules, API rules then webhook rules, each in
// matching order, with their remaining times and hits. It is never nil; on
// a shared store that cannot be reached it is empty (ListContext says why).
func (s *Set) List(merchantID string) []Rule {
	ctx, cancel := s.context()
	defer cancel()
	out, _ := s.ListContext(ctx, merchantID)
	return out
}

// ListContext is List; on a shared store it may fail with an error
// wrapping paymock.ErrUnavailable, and the list is then empty.
func (s *Set) ListContext(ctx context.Context, merchantID string) ([]Rule, error) {
	if s.store != nil {
		return s.listShared(ctx, merchantID)
	}
	out := []Rule{}
	b := s.find(merchantID, false)
	if b == nil {
		return out, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range []*ruleList{&b.api, &b.hooks} {
		for _, e := range l.entries {
			out = append(out, e.snapshot())
		}
	}
	return out, nil
}

// RuleNotFound is the error for an unknown rule id, or another merchant's.
func RuleNotFound(id string) *paymock.Error {
	return &paymock.Error{Type: paymock.NotFound, Code: "resource_missing",
		Message: "no such fault rule: '" + clip(id, 60) + "'", Param: "id"}
}

// Delete removes one rule from the merchant's rules; a file rule is
// removed for this merchant only. An unknown id, or another merchant's,
// is RuleNotFound.
func (s *Set) Delete(merchantID, id string) error {
	ctx, cancel := s.context()
	defer cancel()
	return s.DeleteContext(ctx, merchantID, id)
}

// DeleteContext is Delete; on a shared store it may also fail with an
// error wrapping paymock.ErrUnavailable.
func (s *Set) DeleteContext(ctx context.Context, merchantID, id string) error {
	if s.store != nil {
		return s.deleteShared(ctx, merchantID, id)
	}
	b := s.find(merchantID, false)
	if b == nil {
		return RuleNotFound(id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range []*ruleList{&b.api, &b.hooks} {
		for i, e := range l.entries {
			if e.rule.ID == id {
				l.entries = slices.Delete(l.entries, i, i+1)
				l.reindex()
				return nil
			}
		}
	}
	return RuleNotFound(id)
}

// Clear removes every rule of the merchant, file rules included, until a
// Reset brings the file rules back. On a shared store that cannot be
// reached it does nothing (ClearContext says why).
func (s *Set) Clear(merchantID string) {
	ctx, cancel := s.context()
	defer cancel()
	_ = s.ClearContext(ctx, merchantID)
}

// ClearContext is Clear; on a shared store it may fail with an error
// wrapping paymock.ErrUnavailable.
func (s *Set) ClearContext(ctx context.Context, merchantID string) error {
	if s.store != nil {
		return s.clearShared(ctx, merchantID)
	}
	b := s.find(merchantID, false)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.api.entries, b.hooks.entries = nil, nil
	b.api.reindex()
	b.hooks.reindex()
	return nil
}

// Reset forgets the merchant's rules and counts and restarts its draws, as
// a sandbox reset does: file rules apply again from their full times. On
// a shared store that cannot be reached it does nothing (ResetContext says
// why).
func (s *Set) Reset(merchantID string) {
	ctx, cancel := s.context()
	defer cancel()
	_ = s.ResetContext(ctx, merchantID)
}

// ResetContext is Reset; on a shared store it may fail with an error
// wrapping paymock.ErrUnavailable.
func (s *Set) ResetContext(ctx context.Context, merchantID string) error {
	if s.store != nil {
		return s.resetShared(ctx, merchantID)
	}
	if v, ok := s.books.LoadAndDelete(merchantID); ok {
		b := v.(*book)
		b.mu.Lock()
		b.dead = true
		b.mu.Unlock()
	}
	return nil
}

// Forget drops everything the Set holds for a merchant that is gone. On a
// shared store the Set holds nothing of a merchant: the rules stay, for
// the other replicas, as the merchant's payments and clock do.
func (s *Set) Forget(merchantID string) {
	if s.store == nil {
		_ = s.ResetContext(context.Background(), merchantID)
	}
}

// MatchAPI returns the rule that shapes this call of the operation, if one
// fires: see the package doc for the order. A hit counts toward the rule's
// hits and times; a rule whose times run out leaves the list. In memory, a
// merchant with no rule for the operation or "*" pays a map look-up, no
// lock and no allocation. On a shared store that cannot be reached no
// rule fires (MatchAPIContext says why).
func (s *Set) MatchAPI(merchantID, operation string) (Rule, bool) {
	if s.store != nil {
		ctx, cancel := bounded()
		defer cancel()
		r, ok, _ := s.matchShared(ctx, merchantID, TargetAPI, operation)
		return r, ok
	}
	b := s.find(merchantID, false)
	if b == nil {
		return Rule{}, false
	}
	return b.match(&b.api, operation)
}

// MatchAPIContext is MatchAPI; on a shared store it pays one query for
// the merchant's candidate rules, one more for each draw and hit, and may
// fail with an error wrapping paymock.ErrUnavailable.
func (s *Set) MatchAPIContext(ctx context.Context, merchantID, operation string) (Rule, bool, error) {
	if s.store != nil {
		return s.matchShared(ctx, merchantID, TargetAPI, operation)
	}
	r, ok := s.MatchAPI(merchantID, operation)
	return r, ok, nil
}

// MatchWebhook is MatchAPI for a delivery of an event of eventType: rules
// naming the event type come before rules for any event.
func (s *Set) MatchWebhook(merchantID, eventType string) (Rule, bool) {
	if s.store != nil {
		ctx, cancel := bounded()
		defer cancel()
		r, ok, _ := s.matchShared(ctx, merchantID, TargetWebhooks, eventType)
		return r, ok
	}
	b := s.find(merchantID, false)
	if b == nil {
		return Rule{}, false
	}
	return b.match(&b.hooks, eventType)
}

// MatchWebhookContext is MatchWebhook as MatchAPIContext is MatchAPI.
func (s *Set) MatchWebhookContext(ctx context.Context, merchantID, eventType string) (Rule, bool, error) {
	if s.store != nil {
		return s.matchShared(ctx, merchantID, TargetWebhooks, eventType)
	}
	r, ok := s.MatchWebhook(merchantID, eventType)
	return r, ok, nil
}

func (b *book) match(l *ruleList, selector string) (Rule, bool) {
	idx := l.index.Load()
	if idx == nil || ((*idx)[selector] == 0 && (*idx)[Wildcard] == 0) {
		return Rule{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range l.entries {
		if sel := e.selector(); sel != selector && sel != Wildcard {
			continue
		}
		// Every candidate with a probability below 1 draws, so the
		// sequence of draws depends only on the calls and the rules.
		if p := *e.rule.Probability; p < 1 && b.rng.Float64() >= p {
			continue
		}
		e.hits++
		if e.rule.Times != nil {
			e.remaining--
			if e.remaining <= 0 {
				l.entries = slices.Delete(l.entries, i, i+1)
				l.reindex()
			}
		}
		return e.snapshot(), true
	}
	return Rule{}, false
}
