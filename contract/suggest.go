// Suggestions for a path the document does not have: the route a client
// most likely meant (GET /api/v1/payment -> /api/v1/payments).

package contract

import (
	"net/http"
	"strings"

	"github.com/paymock/paymock/internal/typo"
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
				dist := typo.Distance(w, got[i])
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
