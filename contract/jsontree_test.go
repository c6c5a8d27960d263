// Tests of how the tree of a large body is sized.

package contract

import (
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/jsonsamples"
)

// FuzzNodeBound_CoversTheTree checks that nodeBound never says fewer
// nodes than parseTree makes, so that a counted tree never grows.
func FuzzNodeBound_CoversTheTree(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `0`, `{"a":[1,2,{"b":"c,:[\"d"}]}`, ` [ [ ] , { } , "x" ] `, `{"a":{"b":{"c":[null,true,false]}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tr, ok := parseTree([]byte(raw))
		if !ok {
			return
		}
		defer tr.release()
		if n := nodeBound([]byte(raw)); n < len(tr.nodes) {
			t.Fatalf("nodeBound(%q) = %d, parseTree made %d nodes", raw, n, len(tr.nodes))
		}
	})
}

// TestNodeBound_KeepsItsBoundOnTrickyBytes pins the bound on bodies
// where a quote, a backslash or a bracket could mislead a walk outside
// strings, valid JSON or not.
func TestNodeBound_KeepsItsBoundOnTrickyBytes(t *testing.T) {
	tests := []struct {
		data string
		want int
	}{
		{``, 1},
		{`-12.5e3`, 1},
		{`"\\\"[{"`, 1},
		{`"[{,:}]"`, 1},
		{`"a\\",[`, 3},
		{`"ab\`, 1},
		{`{"a":1}`, 3},
		{`{"a":[1,2,{"b":"c\"d"}]}`, 8},
		{`[[[]],[{}]]`, 6},
		{"[ \t\n\r]", 2},
		{`["\\",[[]]]`, 5},
		{`["\\\"]",[]]`, 4},
		{`{"k\"ey":"v,:[]{}","n":[null,true,false,-0.5e+2]}`, 10},
		{`["é\u00e9",{"ü":[]}]`, 6},
		{`]]}[`, 2},
		{`}{{"a":[]`, 4},
		{`[1,,2]`, 4},
		{`{:}`, 3},
		{`"unterminated [`, 1},
		{strings.Repeat("[1,", 70) + "1" + strings.Repeat("]", 70), 141},
	}
	for _, tc := range tests {
		if got := nodeBound([]byte(tc.data)); got != tc.want {
			t.Errorf("nodeBound(%q) = %d, want %d", tc.data, got, tc.want)
		}
	}
}

// BenchmarkNodeBound bounds the nodes of a 200-byte create body and of a
// megabyte of them, the size of body parseTree counts before parsing.
func BenchmarkNodeBound(b *testing.B) {
	for _, bc := range jsonsamples.Bodies() {
		b.Run(bc.Name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.Data)))
			b.ReportAllocs()
			for b.Loop() {
				nodeBound(bc.Data)
			}
		})
	}
}

// TestParseTree_SizesALargeBodyOnce: a large body's nodes are allocated
// once, not grown a quarter at a time through dozens of copies.
func TestParseTree_SizesALargeBodyOnce(t *testing.T) {
	// A page of payments' worth of metadata: 100 x 50 arrays of 249
	// numbers, 1.2 million nodes.
	value := "[" + strings.Repeat("0,", 248) + "0]"
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"metadata":{`)
		for k := range 50 {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"k` + string(rune('a'+k/26)) + string(rune('a'+k%26)) + `":` + value)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	allocs := testing.AllocsPerRun(3, func() {
		tr, ok := parseTree(body)
		if !ok {
			t.Fatal("the body does not parse")
		}
		tr.release()
	})
	// A new tree (the pool keeps none this large), its nodes once, and
	// the duplicate-key check's few: 5. Grown by append, 37.
	if allocs > 8 {
		t.Errorf("parsing %d bytes took %v allocations, want at most 8", len(body), allocs)
	}
}
