// Suggestions for a path the document does not have: the route a client
// most likely meant (GET /api/v1/payment -> /api/v1/payments).

package contract

import (
	"net/http"
	"strings"
)

// maxSuggestLen bounds the paths looked at: a suggestion is for a typo,
// and a long path costs the distance's quadratic time for nothing.
const maxSuggestLen = 512

// suggest is the path of the document r most likely meant, or "": one
// whose segments are those of r's path, but for one segment a small typo
// away (an "s" missing or too many, a letter swapped) or one trailing
// slash. Parameters take r's value, so /api/v1/payment/pay_1 suggests
// /api/v1/payments/pay_1. Routes that take r's method come first.
func (d *Document) suggest(r *http.Request) string {
	p := r.URL.Path
	if len(p) > maxSuggestLen {
		return ""
	}
	got := strings.Split(strings.TrimSuffix(p, "/"), "/")
	best, bestCost := "", 0
	for _, tmpl := range d.doc.Paths.InMatchingOrder() {
		item := d.doc.Paths.Value(tmpl)
		want := strings.Split(tmpl, "/")
		if item == nil || len(want) != len(got) {
			continue
		}
		out := make([]string, len(want))
		cost, typos := 0, 0
		for i, w := range want {
			switch {
			case strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") && got[i] != "":
				out[i] = got[i]
			case w == got[i]:
				out[i] = w
			default:
				dist := distance(w, got[i])
				if dist > 2 || dist >= len(w) {
					typos = 2
				}
				out[i], cost, typos = w, cost+dist, typos+1
			}
		}
		if typos > 1 {
			continue
		}
		if item.GetOperation(r.Method) == nil {
			cost += 10 // another method's route: a weaker guess
		}
		if s := strings.Join(out, "/"); s != p && (best == "" || cost < bestCost) {
			best, bestCost = s, cost
		}
	}
	return best
}

// distance is the Damerau-Levenshtein distance of a and b (an adjacent
// swap counts one), in bytes.
func distance(a, b string) int {
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
