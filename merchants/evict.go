// Eviction: at the cap, the least recently used empty merchant makes room.

package merchants

import (
	"context"
	"math"

	"github.com/paymock/paymock"
)

// maxExaminedPerEviction bounds the merchants one evictOne asks the store
// about (two store reads and the sandbox's Empty each). A kept merchant is
// examined again once it has been used, so a tenant that touches many
// kept merchants could otherwise make every new token's request read the
// store for each of them; past the bound that request gets the 429, and
// the next one goes on from the merchants not examined yet, since those
// examined are kept again until their next use.
const maxExaminedPerEviction = 32

// candidate is a merchant eviction may examine, with its lastUsed as it
// was read: the merchant is evicted, or marked kept, only as of that use.
type candidate struct {
	e  *entry
	at int64
}

// evictOne drops the least recently used open-mode merchant that holds
// nothing (no created keys, no added endpoints, and Config.Empty), to make
// room for a new one, and reports whether it did. Filling the cap with
// empty merchants then cannot lock out the next one; merchants with
// something stored are never evicted, nor one with a request under way
// (Registry.Visit), which is not examined either. One found holding
// something is marked kept until its next use and not asked about again
// before it: what keeps a merchant (a payment, a fault rule, a created
// key, an added endpoint) goes only through a request of its own (a
// reset, a delete, a revoke). Deliveries under way end by themselves, so
// one kept only for them waits for its next use, or for the idle TTL.
func (r *Registry) evictOne(ctx context.Context) bool {
	if r.empty == nil || !r.open {
		return false
	}
	r.evictMu.Lock()
	defer r.evictMu.Unlock()
	var buf [maxExaminedPerEviction]candidate
	for _, c := range r.evictionCandidates(buf[:0]) {
		holds, err := r.holdsSomething(ctx, c.e.ID)
		if err != nil {
			r.log.Warn("no merchant evicted: the store cannot be read", "error", err)
			return false
		}
		if holds {
			// Unless used meanwhile, which asks about it again.
			c.e.lastUsed.CompareAndSwap(c.at, c.at|keptMark)
			continue
		}
		r.mu.Lock()
		// A request that authenticated meanwhile keeps its merchant, as
		// does one under way since before; the next oldest is tried.
		gone := r.byID[c.e.ID] == c.e && c.e.lastUsed.Load() == c.at && c.e.take()
		if gone {
			delete(r.byID, c.e.ID)
			delete(r.lastAdded, c.e.ID)
		}
		r.mu.Unlock()
		if !gone {
			continue
		}
		if err := r.store.ReleaseMerchant(ctx, c.e.ID); err != nil {
			r.log.Warn("evicted merchant not released in the store", "merchant", c.e.ID, "error", err)
		}
		if r.evicted != nil {
			r.evicted(c.e.ID)
		}
		r.log.Info("evicted an empty open-mode merchant to make room for a new one", "merchant", c.e.ID, "max_merchants", r.maxMerchants)
		return true
	}
	return false
}

// evictionCandidates appends to out (empty, of capacity
// maxExaminedPerEviction) the least recently used merchants not kept,
// oldest first, from one pass over the merchants held: a pass per
// examination would cost the cap's size each time. The caller holds
// evictMu, the only marker of merchants kept, and gives out, so that it
// can stay on its stack.
func (r *Registry) evictionCandidates(out []candidate) []candidate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	// Once out is full, only a merchant older than its youngest gets in:
	// most of the cap is passed over with one comparison.
	youngest := int64(math.MaxInt64)
	for _, e := range r.byID {
		at := e.lastUsed.Load()
		// A merchant with a request under way is not taken (entry.visits):
		// it costs no examination either.
		if at >= youngest || at&keptMark != 0 || e.visits.Load() != 0 {
			continue
		}
		i := len(out)
		if i < cap(out) {
			out = append(out, candidate{})
		} else {
			i-- // the youngest falls off
		}
		for ; i > 0 && out[i-1].at > at; i-- {
			out[i] = out[i-1]
		}
		out[i] = candidate{e: e, at: at}
		if len(out) == cap(out) {
			youngest = out[len(out)-1].at
		}
	}
	return out
}

// holdsSomething reports whether a merchant has created keys or added
// endpoints in the store, or anything the sandbox holds (Config.Empty).
func (r *Registry) holdsSomething(ctx context.Context, merchantID string) (bool, error) {
	keys, err := r.store.Keys(ctx, merchantID)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if k.Source != paymock.KeyOpen {
			return true, nil
		}
	}
	eps, err := r.store.Endpoints(ctx, merchantID)
	if err != nil {
		return false, err
	}
	return len(eps) > 0 || !r.empty(ctx, merchantID), nil
}
