// Tests of the walk over a JSON document's structural bytes.

package paymock

import (
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/jsonsamples"
)

// structuralBytewise is the walk as countValues, nodeBound, jsonDepth and
// indentedSize each held it before they shared NextJSONStructural, kept
// as its oracle: byte by byte, a backslash in a string skipping the next.
func structuralBytewise(data []byte) []int {
	var at []int
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '}', '[', ']', ',', ':':
			at = append(at, i)
		}
	}
	return at
}

// structuralOf is every index NextJSONStructural stops at.
func structuralOf(data []byte) []int {
	var at []int
	for i := NextJSONStructural(data, 0); i < len(data); i = NextJSONStructural(data, i+1) {
		at = append(at, i)
	}
	return at
}

func TestNextJSONStructural_StopsOutsideStringsOnly(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []int
	}{
		{"nothing in nothing", ``, nil},
		{"nothing in a scalar", `-12.5e3`, nil},
		{"an object", `{"a":1}`, []int{0, 4, 6}},
		{"spaced", ` [ 1 , 2 ] `, []int{1, 5, 9}},
		{"brackets in a string", `"[{,:}]"`, nil},
		{"an escaped quote does not close", `["a\"]",1]`, []int{0, 7, 9}},
		{"an escaped backslash does not escape the quote", `["a\\",1]`, []int{0, 6, 8}},
		{"three backslashes escape the quote", `["\\\"]",[]]`, []int{0, 8, 9, 10, 11}},
		{"a string from the first byte", `"\\",[`, []int{4, 5}},
		{"a backslash at the end", `["ab\`, []int{0}},
		{"a string left open", `[1,"unterminated [`, []int{0, 2}},
		{"a string that opens at the end", `[1,"`, []int{0, 2}},
		{"quotes back to back", `["","\"",""]`, []int{0, 3, 8, 11}},
		{"unbalanced", `]]}[`, []int{0, 1, 2, 3}},
		{"multibyte text", `["é\u00e9",{"ü":[]}]`, []int{0, 11, 12, 17, 18, 19, 20, 21}},
		{"a long string", `[` + `"` + strings.Repeat(`x\"`, 100) + `",0]`, []int{0, 303, 305}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := structuralOf([]byte(tc.data))
			if !slices.Equal(got, tc.want) {
				t.Errorf("structural bytes of %q at %v, want %v", tc.data, got, tc.want)
			}
			if want := structuralBytewise([]byte(tc.data)); !slices.Equal(got, want) {
				t.Errorf("structural bytes of %q at %v, the bytewise walk finds %v", tc.data, got, want)
			}
		})
	}
}

func TestNextJSONStructural_ReturnsTheLengthPastTheEnd(t *testing.T) {
	data := []byte(`[1]`)
	for _, i := range []int{3, 4} {
		if got := NextJSONStructural(data, i); got != len(data) {
			t.Errorf("NextJSONStructural(%q, %d) = %d, want %d", data, i, got, len(data))
		}
	}
}

// FuzzNextJSONStructural_StopsWhereTheBytewiseWalkStops holds the walk to
// its bytewise oracle on any bytes, JSON or not.
func FuzzNextJSONStructural_StopsWhereTheBytewiseWalkStops(f *testing.F) {
	for _, s := range []string{``, `{"a":[1,2,{"b":"c\"d"}]}`, `["\\",[[]]]`, `"ab\`, `]]}[`, `{"k\"ey":"v,:[]{}"}`, `"\\\"[{"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := structuralOf(data), structuralBytewise(data); !slices.Equal(got, want) {
			t.Fatalf("structural bytes of %q at %v, the bytewise walk finds %v", data, got, want)
		}
	})
}

// BenchmarkNextJSONStructural walks a 200-byte create body and a megabyte
// of them in one array.
func BenchmarkNextJSONStructural(b *testing.B) {
	for _, bc := range jsonsamples.Bodies() {
		b.Run(bc.Name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.Data)))
			b.ReportAllocs()
			for b.Loop() {
				for i := NextJSONStructural(bc.Data, 0); i < len(bc.Data); i = NextJSONStructural(bc.Data, i+1) {
				}
			}
		})
	}
}
