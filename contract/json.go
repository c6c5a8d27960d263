// Strict JSON: what encoding/json accepts without a word but changes, found
// before the body is decoded so that the client hears about it.

package contract

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paymock/paymock"
)

const (
	// maxJSONViolations caps what one body can produce: a megabyte of
	// broken strings must not become a ten-megabyte error answer.
	maxJSONViolations = 100
	// maxJSONDepth is encoding/json's own nesting limit; a deeper body is
	// refused as malformed by the contract check, so it is not ours.
	maxJSONDepth = 10000
	// keySetAfter is the number of keys past which an object's duplicate
	// check moves from a linear scan to a map, so a body of a hundred
	// thousand keys costs linear time, not quadratic.
	keySetAfter = 16
	// maxParamKey is how much of one key a param or message shows.
	maxParamKey = 100
)

// CheckJSON reports what encoding/json would silently change in body, each
// as a violation naming the place as a dotted param (metadata.order_ref,
// items.0):
//
//   - invalid_utf8: a string, key or value, that is not valid UTF-8.
//     encoding/json stores such bytes as U+FFFD, so the payment would not
//     give back what was sent. An escaped surrogate without its other half
//     (\ud800 alone) counts too: it is not a character, encoding/json turns
//     it into U+FFFD just the same, and I-JSON (RFC 7493) forbids it.
//   - duplicate_key: an object with the same key twice, compared after
//     unescaping ("a\u0062" repeats "ab"). encoding/json keeps the last
//     value; the client that sent both has a bug the sandbox should show.
//     The param is the repeated key's own path.
//
// A body that is not syntactically valid JSON (empty, truncated, trailing
// data, nested deeper than encoding/json allows) gives nil: saying so is the
// contract check's business. CheckJSON reads the body once and allocates
// nothing unless it finds something (or an object has many keys).
func CheckJSON(body []byte) []paymock.Violation {
	s := jsonScanner{body: body}
	if !s.value() {
		return nil
	}
	s.space()
	if s.pos != len(s.body) {
		return nil
	}
	return s.out
}

// jsonScanner is one pass over a body: a validating recursive descent that
// also keeps what a violation needs to name its place.
type jsonScanner struct {
	body  []byte
	pos   int
	path  smallStack[segment] // one per enclosing object or array, outermost first
	keys  smallStack[keySpan] // keys seen so far in each enclosing object, innermost last
	names []byte              // unescaped keys that held escapes; keySpan points here
	out   []paymock.Violation
}

// smallStack is a stack whose first elements live inside it, so a
// scanner on the goroutine's stack reads a typical body without touching
// the heap. (A slice over an array of the scanner's own would do the same
// in fewer lines, but escape analysis moves such a scanner to the heap.)
type smallStack[T any] struct {
	head [32]T
	more []T // the elements past head
	n    int
}

func (st *smallStack[T]) len() int { return st.n }

func (st *smallStack[T]) at(i int) *T {
	if i < len(st.head) {
		return &st.head[i]
	}
	return &st.more[i-len(st.head)]
}

func (st *smallStack[T]) push(v T) {
	if st.n < len(st.head) {
		st.head[st.n] = v
	} else {
		st.more = append(st.more[:st.n-len(st.head)], v)
	}
	st.n++
}

func (st *smallStack[T]) truncate(n int) {
	st.n = n
	if n > len(st.head) {
		st.more = st.more[:n-len(st.head)]
	}
}

// segment is one step of the path to the value being read.
type segment struct {
	key   keySpan // in an object: the key of the current member
	index int     // in an array: the current element; -1 in an object
}

// keySpan is a key without its quotes: body[off:end] when it had no
// escapes, or names[off:end] holding it unescaped.
type keySpan struct {
	off, end  int
	unescaped bool
	reported  bool // its duplicate is reported already
}

// stringIssue is what makes a string not valid UTF-8, if anything.
type stringIssue struct {
	badBytes  bool   // raw bytes that are not UTF-8
	surrogate string // or the first escape that is half a surrogate pair
}

func (i stringIssue) found() bool { return i.badBytes || i.surrogate != "" }

func (s *jsonScanner) space() {
	for s.pos < len(s.body) {
		switch s.body[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value reads one value; false means the body is not valid JSON.
func (s *jsonScanner) value() bool {
	s.space()
	if s.pos >= len(s.body) {
		return false
	}
	switch c := s.body[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		_, _, issue, ok := s.str()
		if ok && issue.found() {
			s.invalidString(issue)
		}
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

func (s *jsonScanner) literal(word string) bool {
	if len(s.body)-s.pos < len(word) || string(s.body[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}

// number reads a number per RFC 8259's grammar.
func (s *jsonScanner) number() bool {
	b, i := s.body, s.pos
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.pos = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *jsonScanner) array() bool {
	if s.path.len() >= maxJSONDepth {
		return false
	}
	s.pos++ // [
	at := s.path.len()
	s.path.push(segment{index: 0})
	s.space()
	if s.pos < len(s.body) && s.body[s.pos] == ']' {
		s.pos++
		s.path.truncate(at)
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.space()
		if s.pos >= len(s.body) {
			return false
		}
		switch s.body[s.pos] {
		case ',':
			s.pos++
			s.path.at(at).index++
		case ']':
			s.pos++
			s.path.truncate(at)
			return true
		default:
			return false
		}
	}
}

func (s *jsonScanner) object() bool {
	if s.path.len() >= maxJSONDepth {
		return false
	}
	s.pos++ // {
	at := s.path.len()
	s.path.push(segment{index: -1})
	keysFrom, namesFrom := s.keys.len(), len(s.names)
	var set map[string]bool // key -> its duplicate is reported; made past keySetAfter keys
	s.space()
	if s.pos < len(s.body) && s.body[s.pos] == '}' {
		s.pos++
		s.path.truncate(at)
		return true
	}
	for {
		s.space()
		if s.pos >= len(s.body) || s.body[s.pos] != '"' {
			return false
		}
		start, end, issue, ok := s.str()
		if !ok {
			return false
		}
		k := s.keySpan(start, end)
		s.path.at(at).key = k
		if issue.found() {
			s.invalidKey()
		}
		set = s.remember(k, keysFrom, set)

		s.space()
		if s.pos >= len(s.body) || s.body[s.pos] != ':' {
			return false
		}
		s.pos++
		if !s.value() {
			return false
		}
		s.space()
		if s.pos >= len(s.body) {
			return false
		}
		switch s.body[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.path.truncate(at)
			s.keys.truncate(keysFrom)
			s.names = s.names[:namesFrom]
			return true
		default:
			return false
		}
	}
}

// remember adds k to the keys of the object whose keys start at keysFrom,
// reporting it if the object has it already. It returns the object's key
// set, made once the object has more keys than a linear scan should cover.
func (s *jsonScanner) remember(k keySpan, keysFrom int, set map[string]bool) map[string]bool {
	name := s.keyBytes(k)
	if set != nil {
		reported, dup := set[string(name)]
		if !dup {
			set[string(name)] = false
		} else if !reported {
			set[string(name)] = true
			s.duplicate()
		}
		return set
	}
	for i := keysFrom; i < s.keys.len(); i++ {
		if prev := s.keys.at(i); string(s.keyBytes(*prev)) == string(name) {
			if !prev.reported {
				prev.reported = true
				s.duplicate()
			}
			return nil
		}
	}
	s.keys.push(k)
	if s.keys.len()-keysFrom > keySetAfter {
		set = make(map[string]bool, 2*keySetAfter)
		for i := keysFrom; i < s.keys.len(); i++ {
			k := s.keys.at(i)
			set[string(s.keyBytes(*k))] = k.reported
		}
	}
	return set
}

// str reads a string at s.pos (an opening quote), returning where its
// content starts and ends (before the closing quote). ok is false when it
// is not a valid JSON string.
func (s *jsonScanner) str() (start, end int, issue stringIssue, ok bool) {
	b := s.body
	i := s.pos + 1
	start = i
	for i < len(b) {
		c := b[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				issue.badBytes = true
			}
			i += size
			continue
		}
		switch {
		case c == '"':
			s.pos = i + 1
			return start, i, issue, true
		case c < 0x20:
			return 0, 0, issue, false
		case c != '\\':
			i++
			continue
		}
		// An escape.
		if i+1 >= len(b) {
			return 0, 0, issue, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
			continue
		case 'u':
		default:
			return 0, 0, issue, false
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return 0, 0, issue, false
		}
		switch {
		case r >= 0xD800 && r < 0xDC00: // high half: a low half must follow
			if lo, ok := hex4(b, i+8); ok && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
				i += 12
				continue
			}
			fallthrough
		case r >= 0xDC00 && r < 0xE000: // a low half alone
			if issue.surrogate == "" {
				issue.surrogate = string(b[i : i+6])
			}
		}
		i += 6
	}
	return 0, 0, issue, false
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// keySpan makes the span of a key read by str: the body's own bytes when
// the key has no escape, else its unescaped form appended to s.names.
func (s *jsonScanner) keySpan(start, end int) keySpan {
	raw := s.body[start:end]
	if !hasBackslash(raw) {
		return keySpan{off: start, end: end}
	}
	off := len(s.names)
	s.names = unescape(s.names, raw)
	return keySpan{off: off, end: len(s.names), unescaped: true}
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// unescape appends the content of a string str has accepted, with its
// escapes resolved as encoding/json resolves them (a lone surrogate becomes
// U+FFFD; bytes that are not UTF-8 are kept, so that two different broken
// keys do not read as duplicates).
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw, i+2)
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo, _ := hex4(raw, i+2); lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // " \ /
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

func (s *jsonScanner) keyBytes(k keySpan) []byte {
	if k.unescaped {
		return s.names[k.off:k.end]
	}
	return s.body[k.off:k.end]
}

// add records a violation unless the body has produced enough of them.
func (s *jsonScanner) add(v paymock.Violation) {
	if len(s.out) < maxJSONViolations {
		s.out = append(s.out, v)
	}
}

func (s *jsonScanner) invalidString(issue stringIssue) {
	param := s.param(s.path.len())
	where := param
	if where == "" {
		where = "the request body"
	}
	msg := where + " is not valid UTF-8"
	if !issue.badBytes {
		msg += ": the escape " + issue.surrogate + " is half of a surrogate pair without the other half"
	}
	s.add(paymock.Violation{Param: param, Code: "invalid_utf8", Message: msg})
}

// invalidKey reports the key of the innermost object's current member.
func (s *jsonScanner) invalidKey() {
	n := s.path.len()
	s.add(paymock.Violation{
		Param:   s.param(n),
		Code:    "invalid_utf8",
		Message: fmt.Sprintf("%s has a key that is not valid UTF-8 (%q)", s.placeOf(n-1), s.segmentText(n-1)),
	})
}

// duplicate reports the key of the innermost object's current member.
func (s *jsonScanner) duplicate() {
	n := s.path.len()
	s.add(paymock.Violation{
		Param:   s.param(n),
		Code:    "duplicate_key",
		Message: fmt.Sprintf("duplicate key %q in %s", s.segmentText(n-1), s.placeOf(n-1)),
	})
}

// placeOf names, for a message, the container the first n path segments
// lead to.
func (s *jsonScanner) placeOf(n int) string {
	if p := s.param(n); p != "" {
		return p
	}
	return "the request body"
}

// param joins the first n path segments with dots.
func (s *jsonScanner) param(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(s.segmentText(i))
	}
	return sb.String()
}

// segmentText is one path segment as a person reads it: an array index, or
// a key made valid UTF-8 and cut to a readable length.
func (s *jsonScanner) segmentText(i int) string {
	seg := s.path.at(i)
	if seg.index >= 0 {
		return strconv.Itoa(seg.index)
	}
	k := strings.ToValidUTF8(string(s.keyBytes(seg.key)), "\uFFFD")
	if len(k) > maxParamKey {
		cut := maxParamKey
		for cut > 0 && !utf8.RuneStart(k[cut]) {
			cut--
		}
		k = k[:cut] + "…"
	}
	return k
}
