// What a page of payments costs when each carries the largest metadata a
// create accepts, by the shape of its values.

package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// largestMetadata is metadata of 50 keys of 40 characters, each value
// value: the most a create accepts when value is at the value bound.
func largestMetadata(value string) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strings.Repeat("k", 38) + string(rune('A'+i/26)) + string(rune('a'+i%26)) + `":` + value)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// metadataValues are values at the 500-byte bound of each shape: a
// string, an array of numbers, an array of empty objects, and the deepest
// nesting allowed, filled with numbers.
var metadataValues = map[string]string{
	"string":  `"` + strings.Repeat("x", 498) + `"`,
	"numbers": "[" + strings.Repeat("0,", 248) + "0]",
	"objects": "[" + strings.Repeat("{},", 165) + "{}]",
	"nested":  "[[[[[" + strings.Repeat("0,", 244) + "0]]]]]",
}

// BenchmarkList_LargestMetadata lists a page of 100 payments that each
// carry the largest metadata allowed; "small" is the usual one-key
// metadata, for scale.
func BenchmarkList_LargestMetadata(b *testing.B) {
	shapes := []string{"small", "string", "numbers", "objects", "nested"}
	for _, shape := range shapes {
		b.Run(shape, func(b *testing.B) {
			s := benchServer(b)
			req := validCreate()
			if shape != "small" {
				req["metadata"] = largestMetadata(metadataValues[shape])
			}
			body, _ := json.Marshal(req)
			for range 100 {
				benchCreate(b, s, body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, benchRequest("GET", "/api/v1/payments?per_page=100", nil))
				if w.Code != http.StatusOK {
					b.Fatalf("list: %d %.300s", w.Code, w.Body)
				}
			}
		})
	}
}
