// Rule books kept in a store every replica shares: what the store must do,
// and the matching, listing and counting a Set does over it.

package faults

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/paymock/paymock"
)

// RuleStore keeps merchants' fault rules and their counts where every
// replica sees them (package postgres implements it). A Set with a
// RuleStore holds nothing per merchant in memory: a rule added on one
// replica fires on the next matching call on any, and times, hits and
// probability draws are counted once across replicas.
//
// The store keeps two kinds of rows per merchant: API rules (File false),
// each with its whole rule, and the merchant's counts of file rules (File
// true), whose definitions every replica loads from the same file. A file
// rule without a row is fresh: no hits, its full times, no draws. Every
// method must be safe for concurrent use by any number of replicas; an
// unreachable store is an error wrapping paymock.ErrUnavailable.
type RuleStore interface {
	// AddRule stores an API rule for the merchant with no hits and its
	// full times. It refuses with ErrTooManyRules when the merchant holds
	// limit API rules that still fire, and with ErrDuplicateID when the merchant
	// has a rule with r.ID.
	AddRule(ctx context.Context, merchantID string, r Rule, limit int) error
	// Rules returns the merchant's API rules that still fire and its
	// counts of file rules, in any order.
	Rules(ctx context.Context, merchantID string) ([]Stored, error)
	// Candidates is Rules limited to rules of target whose Selector is
	// selector or Wildcard: what one call or delivery may match.
	Candidates(ctx context.Context, merchantID string, target Target, selector string) ([]Stored, error)
	// DrawRule counts one probability draw of a rule that still fires and
	// returns its number, from 1; false when the rule no longer fires.
	DrawRule(ctx context.Context, merchantID string, r Rule, file bool) (n int64, ok bool, err error)
	// HitRule counts one firing of a rule that still fires, taking one
	// from its remaining times if it has times, atomically: of concurrent
	// calls on a rule with n remaining, exactly n succeed. It returns the
	// counts after the hit (Rule.Hits and Rule.Remaining); false when the
	// rule no longer fires.
	HitRule(ctx context.Context, merchantID string, r Rule, file bool) (Stored, bool, error)
	// RemoveRule removes a rule that still fires: an API rule by r.ID, or
	// a file rule for this merchant only. False when there was none.
	RemoveRule(ctx context.Context, merchantID string, r Rule, file bool) (bool, error)
	// ClearRules removes every API rule of the merchant and the file
	// rules given, for this merchant, until ResetRules.
	ClearRules(ctx context.Context, merchantID string, file []Rule) error
	// ResetRules forgets the merchant's rules, counts and draws: file rules
	// fire again from their full times.
	ResetRules(ctx context.Context, merchantID string) error
}

// Stored is one row of a RuleStore.
type Stored struct {
	// Rule is the whole rule for an API rule; for a file rule's counts,
	// its ID and Target. Hits and Remaining hold the counts (Remaining is
	// nil for a rule without times).
	Rule Rule
	// File marks a file rule's counts for the merchant.
	File bool
	// Seq orders API rules: a rule added later has a higher Seq.
	Seq int64
	// Removed marks a file rule the merchant deleted or cleared.
	Removed bool
}

// Errors a RuleStore answers AddRule with.
var (
	ErrTooManyRules = errors.New("faults: the merchant has the most rules it may have")
	ErrDuplicateID  = errors.New("faults: the merchant has a rule with this id")
)

// storeTimeout bounds a call to the store made by a method that takes no
// context (MatchWebhook, Reset and the other forms kept for callers
// without one), so that a database that stops answering cannot hold it.
const storeTimeout = 10 * time.Second

func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// Selector is what a rule is matched by: its operation for an API rule,
// its event type (Wildcard for any) for a webhook rule. r must be
// normalized.
func (r Rule) Selector() string {
	if r.Target == TargetWebhooks {
		if r.EventType == "" {
			return Wildcard
		}
		return r.EventType
	}
	return r.Operation
}

// fileRuleID is a file rule's id on a shared store: the same on every
// replica that loads the same file, made from the rule's place in the file
// and its fields (not the file's path, which may differ between hosts).
func fileRuleID(i int, r Rule) string {
	r.ID, r.Source, r.Remaining, r.Hits = "", "", nil, 0
	b, err := json.Marshal(r)
	if err != nil {
		panic("faults: a rule that does not encode: " + err.Error())
	}
	sum := sha256.Sum256(append(strconv.AppendInt(nil, int64(i), 10), append([]byte{0}, b...)...))
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	out := make([]byte, 0, 4+paymock.IDLength)
	out = append(out, "flt_"...)
	for _, c := range sum[:paymock.IDLength] {
		out = append(out, base62[int(c)%len(base62)])
	}
	return string(out)
}

// drawAt is the n-th probability draw (from 1) of a rule for a merchant,
// in [0, 1): a hash of the run's seed, the merchant, the rule and n, so
// the replica that makes the n-th draw, whichever it is, gets the same
// answer as any other would.
func drawAt(seed uint64, merchantID, ruleID string, n int64) float64 {
	h := sha256.New()
	var num [8]byte
	binary.LittleEndian.PutUint64(num[:], seed)
	h.Write(num[:])
	h.Write([]byte(merchantID))
	h.Write([]byte{0})
	h.Write([]byte(ruleID))
	h.Write([]byte{0})
	binary.LittleEndian.PutUint64(num[:], uint64(n))
	h.Write(num[:])
	var sum [sha256.Size]byte
	return float64(binary.LittleEndian.Uint64(h.Sum(sum[:0]))>>11) / (1 << 53)
}

// storeError wraps what the store said with what the Set was doing.
func storeError(what, merchantID string, err error) error {
	return fmt.Errorf("faults: %s for merchant %s: %w", what, merchantID, err)
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

// sharedEntries turns a store's rows into entries, with the file rules
// that still fire for the merchant, in matching order by target. With
// target set, only file rules of that target matching selector are kept
// (the rows are already limited by Candidates).
func (s *Set) sharedEntries(rows []Stored, target Target, selector string) (api, hooks []*entry) {
	counts := map[string]Stored{}
	add := func(e *entry) {
		if e.rule.Target == TargetWebhooks {
			hooks = append(hooks, e)
		} else {
			api = append(api, e)
		}
	}
	for _, row := range rows {
		if row.File {
			counts[row.Rule.ID] = row
			continue
		}
		e := &entry{rule: row.Rule, hits: row.Rule.Hits, order: int(row.Seq)}
		if e.rule.Times != nil {
			if row.Rule.Remaining == nil || *row.Rule.Remaining <= 0 {
				continue
			}
			e.remaining = *row.Rule.Remaining
		}
		e.rule.Hits, e.rule.Remaining = 0, nil
		add(e)
	}
	for i, r := range s.file {
		if target != "" {
			if sel := r.Selector(); r.Target != target || (sel != selector && sel != Wildcard) {
				continue
			}
		}
		e := &entry{rule: r, fromFile: true, order: i}
		if r.Times != nil {
			e.remaining = *r.Times
		}
		if c, ok := counts[r.ID]; ok {
			if c.Removed {
				continue
			}
			e.hits = c.Rule.Hits
			if r.Times != nil && c.Rule.Remaining != nil {
				e.remaining = *c.Rule.Remaining
			}
		}
		if r.Times != nil && e.remaining <= 0 {
			continue
		}
		add(e)
	}
	sortEntries(api)
	sortEntries(hooks)
	return api, hooks
}

func (s *Set) addShared(ctx context.Context, merchantID string, r Rule) (Rule, error) {
	limit := s.maxRules - len(s.file)
	for attempt := 0; ; attempt++ {
		err := ErrTooManyRules
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
		case errors.Is(err, ErrTooManyRules):
			return Rule{}, s.limitReached()
		case errors.Is(err, ErrDuplicateID) && attempt < 3:
			// Replicas seeded alike make the same ids: another one
			// took this one first, so this rule takes a random id.
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

func (s *Set) listShared(ctx context.Context, merchantID string) ([]Rule, error) {
	rows, err := s.store.Rules(ctx, merchantID)
	if err != nil {
		return []Rule{}, storeError("listing rules", merchantID, err)
	}
	api, hooks := s.sharedEntries(rows, "", "")
	out := make([]Rule, 0, len(api)+len(hooks))
	for _, e := range slices.Concat(api, hooks) {
		out = append(out, e.snapshot())
	}
	return out, nil
}

func (s *Set) deleteShared(ctx context.Context, merchantID, id string) error {
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

func (s *Set) clearShared(ctx context.Context, merchantID string) error {
	if err := s.store.ClearRules(ctx, merchantID, s.file); err != nil {
		return storeError("clearing rules", merchantID, err)
	}
	return nil
}

func (s *Set) resetShared(ctx context.Context, merchantID string) error {
	if err := s.store.ResetRules(ctx, merchantID); err != nil {
		return storeError("resetting rules", merchantID, err)
	}
	return nil
}

// matchShared is match over the store: one query for the candidates, then
// for each in matching order a draw (probability below 1) and a hit, each
// counted in the store, until one fires. A rule another replica spent or
// removed in the meantime is skipped like one that lost its draw.
func (s *Set) matchShared(ctx context.Context, merchantID string, target Target, selector string) (Rule, bool, error) {
	rows, err := s.store.Candidates(ctx, merchantID, target, selector)
	if err != nil {
		return Rule{}, false, storeError("matching rules", merchantID, err)
	}
	if len(rows) == 0 && len(s.file) == 0 {
		return Rule{}, false, nil
	}
	api, hooks := s.sharedEntries(rows, target, selector)
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

// sortEntries puts one target's rules in matching order (see the package
// doc).
func sortEntries(entries []*entry) {
	slices.SortStableFunc(entries, func(a, b *entry) int {
		if a.fromFile != b.fromFile {
			if a.fromFile {
				return 1
			}
			return -1
		}
		if aw, bw := a.selector() == Wildcard, b.selector() == Wildcard; aw != bw {
			if aw {
				return 1
			}
			return -1
		}
		if a.fromFile {
			return cmp.Compare(a.order, b.order)
		}
		return cmp.Compare(b.order, a.order)
	})
}
