// Package jsonsamples holds the JSON bodies the benchmarks of the walks
// outside JSON strings measure (paymock.NextJSONStructural and its
// callers in the root package and contract), so that their figures are of
// the same bytes.
package jsonsamples

import "strings"

// Sample is one body, named for its size.
type Sample struct {
	Name string
	Data []byte
}

// Bodies are a create body of about 200 bytes, with escaped quotes, and a
// megabyte of them in one array.
func Bodies() []Sample {
	small := `{"amount":10.50,"currency":"USD","customer":{"email":"buyer@example.com","name":"A \"B\" C"},` +
		`"metadata":{"order":"4242424242","tags":["x","y"],"n":[1,2,3]},"success_url":"https://shop.example.com/ok"}`
	large := "[" + strings.Repeat(small+",", (1<<20)/(len(small)+1)-1) + small + "]"
	return []Sample{{"200B", []byte(small)}, {"1MB", []byte(large)}}
}
