// Per-merchant rule books: adding, listing and removing rules, and the
// matching, counting and seeded draws the request chain and the webhook
// sender ask for, over the backend's paymock.FaultRules.

package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/paymock/paymock"
)

// DefaultMaxRules bounds the rules one merchant may add.
const DefaultMaxRules = 1000

// Config configures a Set; every field but Store has a usable zero value.
type Config struct {
	// Store keeps every merchant's rules and counts: the backend's
	// (memory.New().Faults, or a PostgreSQL store's). Required.
	Store paymock.FaultRules
	// Seed seeds the draws of rules with a probability below 1, together
	// with the merchant, the rule and its draw count: the same seed gives
	// the same hits for the same calls, on any backend.
	Seed uint64
	// IDs makes the id of a merchant's new rule ("flt_..."); nil:
	// unguessable random ids.
	IDs func(ctx context.Context, merchantID string) (string, error)
	// FileRules apply to every merchant, each with its own countdown;
	// usually from LoadFile.
	FileRules []Rule
	// Operations are the operation ids an API rule may name besides "*";
	// nil: DefaultOperations.
	Operations []string
	// MaxRules bounds the rules one merchant may add; 0: DefaultMaxRules.
	MaxRules int
}

// Set holds the algorithm over every merchant's fault rules: the order
// they are tried in, their draws, their limit, and the file rules every
// merchant starts with. What it counts is in its store. It is safe for
// concurrent use.
type Set struct {
	store    paymock.FaultRules
	seed     uint64
	ids      func(ctx context.Context, merchantID string) (string, error)
	file     []Rule
	ops      []string
	maxRules int
}

// New returns a Set. File rules are validated again against Operations
// (LoadFile may have checked other names) and given their ids, made from
// their places in the file and their fields: the same on every replica and
// every backend.
func New(cfg Config) (*Set, error) {
	if cfg.Store == nil {
		return nil, errors.New("faults: no store for the rules (Config.Store)")
	}
	s := &Set{store: cfg.Store, seed: cfg.Seed, ids: cfg.IDs, ops: cfg.Operations, maxRules: cfg.MaxRules}
	if s.ids == nil {
		random := paymock.NewIDs(nil)
		s.ids = func(context.Context, string) (string, error) { return random.New("flt"), nil }
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
		r.ID = fileRuleID(i, r)
		s.file = append(s.file, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// RuleNotFound is the error for an unknown rule id, or another merchant's.
func RuleNotFound(id string) *paymock.Error {
	return &paymock.Error{Type: paymock.NotFound, Code: "resource_missing",
		Message: "no such fault rule: '" + clip(id, 60) + "'", Param: "id"}
}

// Add validates r, fills its defaults, gives it an id and adds it to the
// merchant's rules. A rule that does not validate is an
// invalid_request_error listing every violation; a store that cannot be
// reached, an error wrapping paymock.ErrUnavailable. ID, Source, Remaining
// and Hits of r are ignored.
func (s *Set) Add(ctx context.Context, merchantID string, r Rule) (Rule, error) {
	if vs := r.ValidateFor(s.ops); len(vs) > 0 {
		return Rule{}, paymock.Invalid(vs...)
	}
	r = r.Normalize()
	id, err := s.ids(ctx, merchantID)
	if err != nil {
		return Rule{}, storeError("numbering a rule", merchantID, err)
	}
	r.ID, r.Source, r.Remaining, r.Hits = id, "api", nil, 0
	limit := s.maxRules - len(s.file)
	for attempt := 0; ; attempt++ {
		err := paymock.ErrTooManyFaultRules
		if limit > 0 {
			err = s.store.AddRule(ctx, merchantID, r, limit)
		}
		switch {
		case err == nil:
			e := &entry{rule: r}
			if r.Times != nil {
				e.remaining = *r.Times
			}
			return e.snapshot(), nil
		case errors.Is(err, paymock.ErrTooManyFaultRules):
			return Rule{}, s.limitReached()
		case errors.Is(err, paymock.ErrDuplicateFaultRule) && attempt < 3:
			// An id taken already (a sequence reset by hand, or a
			// generator that repeats itself): this rule takes a random one.
			r.ID = paymock.NewIDs(nil).New("flt")
		default:
			return Rule{}, storeError("adding a rule", merchantID, err)
		}
	}
}

func (s *Set) limitReached() error {
	return paymock.Invalid(paymock.Violation{Code: "fault_limit_reached",
		Message: fmt.Sprintf("a merchant may have at most %d fault rules: delete some first", s.maxRules)})
}

// List returns the merchant's rules, API rules then webhook rules, each in
// matching order, with their remaining times and hits. It is never nil;
// on a store that cannot be reached it is empty, with an error wrapping
// paymock.ErrUnavailable.
func (s *Set) List(ctx context.Context, merchantID string) ([]Rule, error) {
	rows, err := s.store.Rules(ctx, merchantID)
	if err != nil {
		return []Rule{}, storeError("listing rules", merchantID, err)
	}
	api, hooks := s.entries(rows, "", "")
	out := make([]Rule, 0, len(api)+len(hooks))
	for _, l := range [][]*entry{api, hooks} {
		for _, e := range l {
			out = append(out, e.snapshot())
		}
	}
	return out, nil
}

// Delete removes one rule from the merchant's rules; a file rule is
// removed for this merchant only. An unknown id, or another merchant's,
// is RuleNotFound.
func (s *Set) Delete(ctx context.Context, merchantID, id string) error {
	r, file := s.fileRule(id)
	if !file {
		r = Rule{ID: id}
	}
	ok, err := s.store.RemoveRule(ctx, merchantID, r, file)
	if err != nil {
		return storeError("deleting a rule", merchantID, err)
	}
	if !ok {
		return RuleNotFound(id)
	}
	return nil
}

// Clear removes every rule of the merchant, file rules included, until a
// Reset brings the file rules back.
func (s *Set) Clear(ctx context.Context, merchantID string) error {
	if err := s.store.ClearRules(ctx, merchantID, s.file); err != nil {
		return storeError("clearing rules", merchantID, err)
	}
	return nil
}

// Reset forgets the merchant's rules, counts and draws, as a sandbox reset
// does: file rules apply again from their full times.
func (s *Set) Reset(ctx context.Context, merchantID string) error {
	if err := s.store.ResetRules(ctx, merchantID); err != nil {
		return storeError("resetting rules", merchantID, err)
	}
	return nil
}

// Forget drops what this process holds of a merchant that is gone idle
// (see paymock.FaultRules.ForgetRules).
func (s *Set) Forget(ctx context.Context, merchantID string) error {
	if err := s.store.ForgetRules(ctx, merchantID); err != nil {
		return storeError("forgetting rules", merchantID, err)
	}
	return nil
}

// MatchAPI returns the rule that shapes this call of the operation, if one
// fires: see the package doc for the order. A hit counts toward the rule's
// hits and times; a rule whose times run out stops firing. A merchant with
// no rule for the operation or "*" costs the store's Candidates and
// nothing more (in memory: no lock and no allocation).
func (s *Set) MatchAPI(ctx context.Context, merchantID, operation string) (Rule, bool, error) {
	return s.match(ctx, merchantID, TargetAPI, operation)
}

// MatchWebhook is MatchAPI for a delivery of an event of eventType: rules
// naming the event type come before rules for any event.
func (s *Set) MatchWebhook(ctx context.Context, merchantID, eventType string) (Rule, bool, error) {
	return s.match(ctx, merchantID, TargetWebhooks, eventType)
}

// match asks the store for the candidates, then for each in matching order
// draws (probability below 1) and hits, each counted in the store, until
// one fires. A rule spent or removed in the meantime (by a concurrent call
// or another replica) is skipped like one that lost its draw.
func (s *Set) match(ctx context.Context, merchantID string, target Target, selector string) (Rule, bool, error) {
	rows, err := s.store.Candidates(ctx, merchantID, target, selector)
	if err != nil {
		return Rule{}, false, storeError("matching rules", merchantID, err)
	}
	if len(rows) == 0 && !s.fileMayMatch(target, selector) {
		return Rule{}, false, nil
	}
	api, hooks := s.entries(rows, target, selector)
	list := api
	if target == TargetWebhooks {
		list = hooks
	}
	for _, e := range list {
		// A rule that can never fire is not drawn for: its draws would
		// all lose, so leaving them out changes no other answer.
		p := *e.rule.Probability
		if p <= 0 {
			continue
		}
		if p < 1 {
			n, ok, err := s.store.DrawRule(ctx, merchantID, e.rule, e.fromFile)
			if err != nil {
				return Rule{}, false, storeError("drawing for a rule", merchantID, err)
			}
			if !ok || drawAt(s.seed, merchantID, e.rule.ID, n) >= p {
				continue
			}
		}
		hit, ok, err := s.store.HitRule(ctx, merchantID, e.rule, e.fromFile)
		if err != nil {
			return Rule{}, false, storeError("counting a hit", merchantID, err)
		}
		if !ok {
			continue
		}
		e.hits = hit.Rule.Hits
		if e.rule.Times != nil && hit.Rule.Remaining != nil {
			e.remaining = *hit.Rule.Remaining
		}
		return e.snapshot(), true, nil
	}
	return Rule{}, false, nil
}

// fileMayMatch says whether a file rule of target is for selector or any:
// without one, a merchant with no stored candidates has nothing to match.
func (s *Set) fileMayMatch(target Target, selector string) bool {
	for i := range s.file {
		r := &s.file[i]
		if sel := r.Selector(); r.Target == target && (sel == selector || sel == Wildcard) {
			return true
		}
	}
	return false
}

// fileRule returns the file rule with this id.
func (s *Set) fileRule(id string) (Rule, bool) {
	for _, r := range s.file {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// storeError wraps what the store said with what the Set was doing.
func storeError(what, merchantID string, err error) error {
	return fmt.Errorf("faults: %s for merchant %s: %w", what, merchantID, err)
}
