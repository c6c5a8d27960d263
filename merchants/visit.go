// Visits: a request's hold on its merchant, which eviction and
// forgetting wait for.

package merchants

import (
	"context"
	"math"

	"github.com/paymock/paymock"
)

// Visit is a request's hold on its merchant, from Registry.Visit until it
// calls End once, when the request is over: a merchant visited is neither
// evicted nor forgotten, so that no request under way answers for a
// merchant the registry no longer holds (whose clock and journal went,
// and whose payments a store would keep for no one).
type Visit = interface{ End() }

// Visit is Authenticate for a request: the merchant is held until the
// Visit's End, called when the request is over, whatever it was
// answered. It costs Authenticate an atomic add, and End one more.
func (r *Registry) Visit(ctx context.Context, key string) (*paymock.Merchant, Visit, error) {
	for {
		e, err := r.authenticate(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		if r.foundToVisit != nil {
			r.foundToVisit()
		}
		if e.visits.Add(1) > 0 {
			return &e.Merchant, e, nil
		}
		// Taken between being found and being visited: the key is looked
		// up again, as by a request that came just after.
		e.visits.Add(-1)
	}
}

// End ends a visit (Registry.Visit).
func (e *entry) End() { e.visits.Add(-1) }

// taken is entry.visits once the merchant is evicted or forgotten: a
// visit beginning after it finds it below zero.
const taken = math.MinInt32

// take marks a merchant evicted or forgotten, unless a request under way
// has it; the caller holds r.mu and then drops it from r.byID.
func (e *entry) take() bool { return e.visits.CompareAndSwap(0, taken) }
