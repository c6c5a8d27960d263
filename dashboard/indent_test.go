// Tests of the bound on indented JSON.

package dashboard

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/jsonsamples"
)

// FuzzIndentedSize_BoundsJSONIndent checks that indentedSize never says
// less than json.Indent writes, so that no value it lets through indents
// past maxIndented.
func FuzzIndentedSize_BoundsJSONIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":"c\"d"}]}`, ` [ [ ] , { } ] `, `"x"`, `[[[[[[[[[[]]]]]]]]]]`, `{"a":"\\","b":[null,true]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var b bytes.Buffer
		if json.Indent(&b, []byte(raw), "", "  ") != nil {
			return
		}
		if got := indentedSize([]byte(raw)); got < b.Len() {
			t.Fatalf("indentedSize(%q) = %d, json.Indent writes %d", raw, got, b.Len())
		}
	})
}

// TestIndentedSize_KeepsItsSizeOnTrickyBytes pins the size on values where
// a quote, a backslash or a bracket could mislead a walk outside strings,
// valid JSON or not: every byte counts once, and the depth is floored at 0.
func TestIndentedSize_KeepsItsSizeOnTrickyBytes(t *testing.T) {
	tests := []struct {
		raw  string
		want int
	}{
		{``, 0},
		{` `, 1},
		{`-12.5e3`, 7},
		{`"\""`, 4},
		{`"\\\"[{"`, 8},
		{`"a\\",[`, 11},
		{`"ab\`, 4},
		{`{"a":1}`, 12},
		{`{"a":[1,2,{"b":"c\"d"}]}`, 60},
		{` [ 1 , 2 ] `, 18},
		{`[[],[[]],[]]`, 58},
		{`["\\",[[]]]`, 38},
		{`["\\\"]",[]]`, 27},
		{`["é\u00e9",{"ü":[]}]`, 50},
		{"{\"a\":{\"b\":{\"c\":[\t\n\r]}}}", 66},
		{`]]}[`, 10},
		{`]][[[`, 22},
		{`}{{"a":[]`, 31},
		{`[1,,2]`, 16},
		{`{:}`, 8},
		{`"unterminated [`, 15},
		{strings.Repeat("[", 70) + strings.Repeat("]", 70), 10080},
	}
	for _, tc := range tests {
		if got := indentedSize([]byte(tc.raw)); got != tc.want {
			t.Errorf("indentedSize(%q) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

// BenchmarkIndentedSize sizes the indented form of the bodies every walk
// outside JSON strings is measured on (jsonsamples).
func BenchmarkIndentedSize(b *testing.B) {
	for _, bc := range jsonsamples.Bodies() {
		b.Run(bc.Name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.Data)))
			b.ReportAllocs()
			for b.Loop() {
				indentedSize(bc.Data)
			}
		})
	}
}
