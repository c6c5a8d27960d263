// Tests of how deep a metadata value may nest.

package paymock

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/jsonsamples"
)

func TestValidateCreate_MetadataValuesNestAtMostFiveDeep(t *testing.T) {
	meta := func(s string) func(r *CreateRequest) {
		return func(r *CreateRequest) { r.Metadata = json.RawMessage(s) }
	}
	tooDeep := func(key string) []pc { return []pc{{"metadata." + key, "parameter_invalid"}} }
	runCreateCases(t, []createCase{
		{name: "accepts five arrays", edit: meta(`{"a":[[[[[1]]]]]}`)},
		{name: "accepts five objects", edit: meta(`{"a":{"b":{"c":{"d":{"e":{}}}}}}`)},
		{name: "accepts five mixed, spaced", edit: meta(`{ "a" : [ { "b" : [ { "c" : [ ] } ] } ] }`)},
		{name: "accepts brackets inside strings", edit: meta(`{"a":"[[[[[[[[[[","b":["]]]]{{{{{{\"[[[["]}`)},
		{name: "accepts many values five deep", edit: meta(`{"a":[[[[[1]]]],[[[[2]]]]],"b":[[[[[3]]]]]}`)},
		{name: "rejects six arrays", edit: meta(`{"a":[[[[[[1]]]]]]}`), want: tooDeep("a")},
		{name: "rejects six empty arrays, the shortest", edit: meta(`{"":[[[[[[]]]]]]}`), want: tooDeep("")},
		{name: "rejects six objects", edit: meta(`{"a":{"b":{"c":{"d":{"e":{"f":{}}}}}}}`), want: tooDeep("a")},
		{name: "rejects 249 deep", edit: meta(`{"scenario":"complete","k":` + strings.Repeat("[", 249) + strings.Repeat("]", 249) + `}`), want: tooDeep("k")},
		{name: "names each key too deep", edit: meta(`{"a":[[[[[[1]]]]]],"b":1,"c":[{"x":[[[[{}]]]]}]}`), want: []pc{{"metadata.a", "parameter_invalid"}, {"metadata.c", "parameter_invalid"}}},
		{name: "names a value too deep and too long twice", edit: meta(`{"a":[[[[[[` + strings.Repeat("0,", 300) + `0]]]]]]}`),
			want: []pc{{"metadata.a", "parameter_invalid"}, {"metadata.a", "parameter_invalid"}}},
	})
}

func TestJSONDepth_CountsBracketsOutsideStrings(t *testing.T) {
	tests := []struct {
		raw  string
		want int
	}{
		{`1`, 0},
		{`"[[["`, 0},
		{`[]`, 1},
		{`{"a":[1,{"b":2}]}`, 3},
		{`[[],[[]],[]]`, 3},
		{`["\"[[["]`, 1},
		{`["\\",[[]]]`, 3},
		// What a walk outside strings could get wrong, JSON or not: the
		// depth is not floored at 0, so closers first hide openers.
		{``, 0},
		{`"\\\"[{"`, 0},
		{`"a\\",[`, 1},
		{`"ab\`, 0},
		{`["\\\"]",[]]`, 2},
		{`{"k\"ey":"v,:[]{}","n":[null,true,false,-0.5e+2]}`, 2},
		{`["é\u00e9",{"ü":[]}]`, 3},
		{"{\"a\":{\"b\":{\"c\":[\t\n\r]}}}", 4},
		{`]]}[`, 0},
		{`]][[[`, 1},
		{`}{{"a":[]`, 2},
		{`"unterminated [`, 0},
		{strings.Repeat("[", 70) + strings.Repeat("]", 70), 70},
	}
	for _, tc := range tests {
		if got := jsonDepth([]byte(tc.raw)); got != tc.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

// BenchmarkJSONDepth measures the depth of a 200-byte create body and of
// a megabyte of them in one array.
func BenchmarkJSONDepth(b *testing.B) {
	for _, bc := range jsonsamples.Bodies() {
		b.Run(bc.Name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.Data)))
			b.ReportAllocs()
			for b.Loop() {
				jsonDepth(bc.Data)
			}
		})
	}
}
