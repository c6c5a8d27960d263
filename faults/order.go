// The order rules are tried in, the entries a Set matches over, the ids
// of file rules and the seeded draws: what makes one backend's answers the
// same as another's.

package faults

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/paymock/paymock"
)

// entry is a rule as a Set matches it, with its counts.
type entry struct {
	rule      Rule // normalized, with ID and Source, without counts
	remaining int  // with rule.Times; unused without
	hits      int
	fromFile  bool
	order     int // API rules: Seq; file rules: place in the file
}

// selector is e.rule.Selector() without copying the rule.
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

// entries turns a store's rows into entries, with the file rules
// that still fire for the merchant, in matching order by target. With
// target set, only file rules of that target matching selector are kept
// (the rows are already limited by Candidates).
func (s *Set) entries(rows []paymock.StoredFaultRule, target Target, selector string) (api, hooks []*entry) {
	counts := map[string]paymock.StoredFaultRule{}
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
