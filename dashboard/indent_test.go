// Tests of the bound on indented JSON.

package dashboard

import (
	"bytes"
	"encoding/json"
	"testing"
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
