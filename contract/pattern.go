// Patterns: the documents' schema patterns matched without the regexp
// engine where their shape allows it, since every id, date and URL of
// every body passes one. The regexp stays the judge of anything else.

package contract

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode"
)

// pattern is a schema pattern, compiled. alts, when set, match an ASCII
// string exactly as re does, when any one of them matches all of it; a
// string with other bytes, or a pattern of another shape, goes to re.
type pattern struct {
	re   *regexp.Regexp
	alts [][]patternItem
}

// maxAlts bounds the alternatives a fast form is expanded into: past a
// few, trying each in turn costs more than the regexp's one pass.
const maxAlts = 4

// patternItem is one step of an anchored pattern: a run of min to max
// bytes of a set (max < 0: unbounded), or an optional group of steps,
// always the pattern's last.
type patternItem struct {
	set      asciiSet
	min, max int
	group    []patternItem
}

// asciiSet is a set of ASCII bytes.
type asciiSet [2]uint64

func (s *asciiSet) add(lo, hi rune) {
	for r := max(lo, 0); r <= min(hi, 127); r++ {
		s[r>>6] |= 1 << (r & 63)
	}
}

func (s asciiSet) has(b byte) bool { return b < 128 && s[b>>6]&(1<<(b&63)) != 0 }

func (s asciiSet) disjoint(t asciiSet) bool { return s[0]&t[0] == 0 && s[1]&t[1] == 0 }

// compilePattern compiles a schema pattern as regexp.Compile does, and
// its fast form when it has one.
func compilePattern(expr string) (*pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	p := &pattern{re: re}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		p.alts = simplePattern(tree)
	}
	return p, nil
}

// MatchString reports whether s matches, as regexp.MatchString does.
func (p *pattern) MatchString(s string) bool {
	if p.alts == nil {
		return p.re.MatchString(s)
	}
	// The items hold ASCII bytes only, so a match took none past it;
	// without a match, a string with such a byte is the regexp's: classes
	// like [^/] hold runes past ASCII.
	for _, items := range p.alts {
		if matchItems(items, s) {
			return true
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return p.re.MatchString(s)
		}
	}
	return false
}

// matchItems matches all of s against items, greedily: simplePattern
// only accepts patterns where greed cannot miss a match (every run of
// varying length is followed by the end or by a set it shares no byte
// with).
func matchItems(items []patternItem, s string) bool {
	i := 0
	for _, it := range items {
		if it.group != nil {
			return i == len(s) || matchItems(it.group, s[i:])
		}
		n := 0
		for i < len(s) && (it.max < 0 || n < it.max) && it.set.has(s[i]) {
			i++
			n++
		}
		if n < it.min {
			return false
		}
	}
	return i == len(s)
}

// simplePattern is the fast form of a pattern, or nil: the alternatives
// it is the union of, each anchored at both ends (^...$) and made of runs
// of single characters and at most one trailing optional group of the
// same.
func simplePattern(re *syntax.Regexp) [][]patternItem {
	seqs, ok := expandAlts(re)
	if !ok {
		return nil
	}
	alts := make([][]patternItem, 0, len(seqs))
	for _, seq := range seqs {
		if len(seq) < 2 || seq[0].Op != syntax.OpBeginText || seq[len(seq)-1].Op != syntax.OpEndText {
			return nil
		}
		items, ok := patternSeq(seq[1:len(seq)-1], true)
		if !ok || len(items) == 0 {
			return nil
		}
		alts = append(alts, items)
	}
	return alts
}

// expandAlts writes re as the sequences of steps it is the union of,
// distributing each alternation over the steps around it (a|b)c = ac|bc.
// An optional group stays one step: its two cases are matched in one
// pass. False past maxAlts sequences.
func expandAlts(re *syntax.Regexp) ([][]*syntax.Regexp, bool) {
	switch re.Op {
	case syntax.OpCapture:
		return expandAlts(re.Sub[0])
	case syntax.OpAlternate:
		var out [][]*syntax.Regexp
		for _, sub := range re.Sub {
			seqs, ok := expandAlts(sub)
			if !ok {
				return nil, false
			}
			out = append(out, seqs...)
		}
		return out, len(out) <= maxAlts
	case syntax.OpConcat:
		out := [][]*syntax.Regexp{nil}
		for _, sub := range re.Sub {
			seqs, ok := expandAlts(sub)
			if !ok || len(out)*len(seqs) > maxAlts {
				return nil, false
			}
			next := make([][]*syntax.Regexp, 0, len(out)*len(seqs))
			for _, head := range out {
				for _, tail := range seqs {
					next = append(next, slices.Concat(head, tail))
				}
			}
			out = next
		}
		return out, true
	}
	return [][]*syntax.Regexp{{re}}, true
}

// patternSeq compiles a sequence of steps; a group is allowed only as
// the last step of the outermost sequence.
func patternSeq(subs []*syntax.Regexp, outer bool) ([]patternItem, bool) {
	var items []patternItem
	for n, sub := range subs {
		last := n == len(subs)-1
		switch sub.Op {
		case syntax.OpEmptyMatch:
			continue // the empty side of an alternation, (|:[0-9]*)
		case syntax.OpLiteral:
			for _, r := range sub.Rune {
				set, ok := runeSet(r, sub.Flags&syntax.FoldCase != 0)
				if !ok {
					return nil, false
				}
				items = append(items, patternItem{set: set, min: 1, max: 1})
			}
		case syntax.OpQuest:
			if c := sub.Sub[0]; c.Op == syntax.OpCapture || c.Op == syntax.OpConcat {
				if !outer || !last {
					return nil, false
				}
				if c.Op == syntax.OpCapture {
					c = c.Sub[0]
				}
				body := []*syntax.Regexp{c}
				if c.Op == syntax.OpConcat {
					body = c.Sub
				}
				group, ok := patternSeq(body, false)
				if !ok || len(group) == 0 || group[0].min == 0 {
					return nil, false
				}
				items = append(items, patternItem{group: group})
				continue
			}
			fallthrough
		default:
			it, ok := patternRun(sub)
			if !ok {
				return nil, false
			}
			items = append(items, it)
		}
	}
	// Greed is exact only where a run of varying length cannot give back
	// a byte the next step would take.
	for n, it := range items {
		if it.group != nil || it.min == it.max || n == len(items)-1 {
			continue
		}
		next := items[n+1]
		if next.group != nil {
			next = next.group[0]
		}
		if next.min == 0 || !it.set.disjoint(next.set) {
			return nil, false
		}
	}
	return items, true
}

// patternRun compiles one character, or one repeated.
func patternRun(re *syntax.Regexp) (patternItem, bool) {
	lo, hi := 1, 1
	switch re.Op {
	case syntax.OpStar:
		lo, hi, re = 0, -1, re.Sub[0]
	case syntax.OpPlus:
		lo, hi, re = 1, -1, re.Sub[0]
	case syntax.OpQuest:
		lo, hi, re = 0, 1, re.Sub[0]
	case syntax.OpRepeat:
		lo, hi, re = re.Min, re.Max, re.Sub[0]
	}
	set, ok := charSet(re)
	if !ok {
		return patternItem{}, false
	}
	return patternItem{set: set, min: lo, max: hi}, true
}

// charSet is the ASCII part of a single-character expression.
func charSet(re *syntax.Regexp) (asciiSet, bool) {
	var set asciiSet
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) != 1 {
			return set, false
		}
		return runeSet(re.Rune[0], re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			set.add(re.Rune[i], re.Rune[i+1])
		}
		return set, true
	case syntax.OpAnyCharNotNL:
		set.add(0, '\n'-1)
		set.add('\n'+1, 127)
		return set, true
	case syntax.OpAnyChar:
		set.add(0, 127)
		return set, true
	}
	return set, false
}

// runeSet is the set of one ASCII literal, both cases when folded.
func runeSet(r rune, fold bool) (asciiSet, bool) {
	var set asciiSet
	if r >= 0x80 {
		return set, false
	}
	set.add(r, r)
	if fold {
		// Only the ASCII folds matter: a string with any other byte goes
		// to the regexp.
		for c := unicode.SimpleFold(r); c != r; c = unicode.SimpleFold(c) {
			set.add(c, c)
		}
	}
	return set, true
}
