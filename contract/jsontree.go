// A strict JSON reader for the compiled checks: it lays a body out as a
// flat list of nodes over the original bytes, without building maps or
// strings, so a check can walk it (again, for oneOf and not) for free.

package contract

import (
	"encoding/json"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/paymock/paymock"
)

// The kinds of a node.
const (
	kindNull uint8 = iota + 1
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one JSON value. An object's members follow it as key, value,
// key, value...; an array's items follow it. after is the index of the
// first node past the value and all it contains.
type node struct {
	kind    uint8
	escaped bool  // a string holding a backslash escape
	off     int32 // the value's first byte (a string's opening quote)
	end     int32 // one past its last byte
	after   int32
	count   int32 // members of an object, items of an array
}

// maxDepth bounds nesting and maxMembers an object's size; bodies past
// either are left to kin-openapi.
const (
	maxDepth   = 64
	maxMembers = 128
)

// maxTreeBytes is the largest body parsed; past it int32 offsets would
// not do.
const maxTreeBytes = 1 << 30

// tree is a parsed body.
type tree struct {
	data  []byte
	nodes []node
}

var treePool = sync.Pool{New: func() any { return &tree{nodes: make([]node, 0, 64)} }}

// parseTree reads data as exactly one JSON value, surrounded by nothing
// but whitespace. It accepts a subset of what encoding/json accepts: any
// body it refuses (invalid UTF-8, a duplicated key, nesting past
// maxDepth, a key with an escape) is left to kin-openapi, never judged
// here. Put the tree back with release.
func parseTree(data []byte) (*tree, bool) { return parseTreeAt(data, 0) }

// parseTreeAt is parseTree of a value met at the given depth of nesting
// in a larger body: it refuses exactly what parseTree would refuse of the
// value there.
func parseTreeAt(data []byte, depth int) (*tree, bool) {
	if len(data) > maxTreeBytes {
		return nil, false
	}
	t := treePool.Get().(*tree)
	t.data, t.nodes = data, t.nodes[:0]
	if len(data) > presizeBytes {
		if n := nodeBound(data); n > cap(t.nodes) {
			t.nodes = make([]node, 0, n)
		}
	}
	p := parser{t: t}
	i := p.value(p.space(0), depth)
	if i < 0 || p.space(i) != len(data) {
		t.release()
		return nil, false
	}
	return t, true
}

// presizeBytes is the size of a body past which its nodes are counted
// before it is parsed. Appending grows a large slice by a quarter at a
// time: a page of 100 payments that each carry the largest metadata
// allowed (1.2 million nodes) copied and cleared 160 MB to parse 2.7 MB,
// most of a list's 370 ms. Counting costs one pass over the bytes.
const presizeBytes = 64 << 10

// nodeBound is at least the number of nodes parseTree makes of data: a
// key and a value per colon, an item per comma or opening bracket, and
// the body's own value.
func nodeBound(data []byte) int {
	n := 1
	for i := paymock.NextJSONStructural(data, 0); i < len(data); i = paymock.NextJSONStructural(data, i+1) {
		switch data[i] {
		case ':':
			n += 2
		case ',', '[':
			n++
		}
	}
	return n
}

func (t *tree) release() {
	if cap(t.nodes) > 4096 {
		return // a one-off huge body does not stay pinned in the pool
	}
	t.data = nil
	treePool.Put(t)
}

// raw is the bytes of n; for a string, without its quotes.
func (t *tree) raw(n *node) []byte {
	if n.kind == kindString {
		return t.data[n.off+1 : n.end-1]
	}
	return t.data[n.off:n.end]
}

type parser struct{ t *tree }

func (p *parser) space(i int) int { return skipSpace(p.t.data, i) }

// value parses the value at i and returns the index past it, or -1.
func (p *parser) value(i, depth int) int {
	d := p.t.data
	if i >= len(d) || depth > maxDepth {
		return -1
	}
	at := len(p.t.nodes)
	p.t.nodes = append(p.t.nodes, node{off: int32(i)})
	var end int
	switch c := d[i]; {
	case c == '{':
		end = p.object(i, at, depth)
	case c == '[':
		end = p.array(i, at, depth)
	case c == '"':
		p.t.nodes[at].kind = kindString
		var esc bool
		end, esc = p.str(i)
		p.t.nodes[at].escaped = esc
	case c == 't':
		p.t.nodes[at].kind = kindBool
		end = p.literal(i, "true")
	case c == 'f':
		p.t.nodes[at].kind = kindBool
		end = p.literal(i, "false")
	case c == 'n':
		p.t.nodes[at].kind = kindNull
		end = p.literal(i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		p.t.nodes[at].kind = kindNumber
		end = p.number(i)
	default:
		return -1
	}
	if end < 0 {
		return -1
	}
	p.t.nodes[at].end = int32(end)
	p.t.nodes[at].after = int32(len(p.t.nodes))
	return end
}

func (p *parser) literal(i int, lit string) int {
	d := p.t.data
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, the JSON
// grammar exactly.
func (p *parser) number(i int) int {
	d := p.t.data
	digits := func(i int) int {
		j := i
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return -1
	}
	if d[i] == '0' {
		i++
	} else if i = digits(i); i < 0 {
		return -1
	}
	if i < len(d) && d[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}

// str reads the string whose quote is at i: no control characters, only
// JSON's escapes, valid UTF-8. It reports whether it holds an escape.
func (p *parser) str(i int) (int, bool) {
	d := p.t.data
	esc := false
	for i++; i < len(d); {
		c := d[i]
		switch {
		case c == '"':
			return i + 1, esc
		case c < 0x20:
			return -1, false
		case c == '\\':
			esc = true
			if i+1 >= len(d) {
				return -1, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					return -1, false
				}
				for _, h := range d[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1, false
					}
				}
				i += 6
			default:
				return -1, false
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n <= 1 {
				return -1, false // encoding/json would rewrite it; kin decides
			}
			i += n
		}
	}
	return -1, false
}

func (p *parser) object(i, at, depth int) int {
	d := p.t.data
	p.t.nodes[at].kind = kindObject
	i = p.space(i + 1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	count := 0
	for {
		if i >= len(d) || d[i] != '"' {
			return -1
		}
		k := len(p.t.nodes)
		p.t.nodes = append(p.t.nodes, node{kind: kindString, off: int32(i)})
		end, esc := p.str(i)
		if end < 0 || esc || count == maxMembers {
			// An escaped key's decoded form is kin's to compare; past
			// maxMembers the duplicate check would cost too much.
			return -1
		}
		p.t.nodes[k].end, p.t.nodes[k].after = int32(end), int32(k+1)
		if p.duplicate(at, k) {
			return -1 // encoding/json keeps the last; kin decides
		}
		i = p.space(end)
		if i >= len(d) || d[i] != ':' {
			return -1
		}
		if i = p.value(p.space(i+1), depth+1); i < 0 {
			return -1
		}
		count++
		i = p.space(i)
		if i >= len(d) {
			return -1
		}
		if d[i] == '}' {
			p.t.nodes[at].count = int32(count)
			return i + 1
		}
		if d[i] != ',' {
			return -1
		}
		i = p.space(i + 1)
	}
}

// duplicate reports whether the key at k repeats an earlier key of the
// object at obj.
func (p *parser) duplicate(obj, k int) bool {
	t := p.t
	key := t.raw(&t.nodes[k])
	for j := obj + 1; j < k; {
		if string(t.raw(&t.nodes[j])) == string(key) {
			return true
		}
		j = int(t.nodes[j+1].after) // past the member's value
	}
	return false
}

func (p *parser) array(i, at, depth int) int {
	d := p.t.data
	p.t.nodes[at].kind = kindArray
	i = p.space(i + 1)
	if i < len(d) && d[i] == ']' {
		return i + 1
	}
	count := 0
	for {
		if i = p.value(i, depth+1); i < 0 {
			return -1
		}
		count++
		i = p.space(i)
		if i >= len(d) {
			return -1
		}
		if d[i] == ']' {
			p.t.nodes[at].count = int32(count)
			return i + 1
		}
		if d[i] != ',' {
			return -1
		}
		i = p.space(i + 1)
	}
}

// str is the string value of n as encoding/json decodes it. Without an
// escape it is a view of the body's bytes, not a copy: the checks only
// read it while the body is alive and unchanged, and keep nothing.
func (t *tree) str(n *node) (string, bool) {
	raw := t.raw(n)
	if !n.escaped {
		return view(raw), true
	}
	var s string
	if err := json.Unmarshal(t.data[n.off:n.end], &s); err != nil {
		return "", false
	}
	return s, true
}

// view is b as a string without copying; see tree.str.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
