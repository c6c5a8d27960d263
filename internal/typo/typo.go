// Package typo measures how many typos apart two names are, for the
// "did you mean" of a mistyped route, flag or environment variable.
package typo

// Distance is the number of single-byte typos between a and b: a byte
// added, dropped or replaced, or two adjacent bytes swapped (the optimal
// string alignment distance, Damerau-Levenshtein with each substring
// edited once). It takes time len(a)*len(b): callers bound the lengths.
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
