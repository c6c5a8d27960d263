// Eviction: at the cap, the least recently used empty open-mode merchant
// makes room for a new one.

package merchants

import (
	"context"

	"github.com/paymock/paymock"
)

// evictOne drops the least recently used open-mode merchant that holds
// nothing (no created keys, no added endpoints, and Config.Empty), to make
// room for a new one, and reports whether it did. Filling the cap with
// empty merchants then cannot lock out the next one; merchants with
// something stored are never evicted. Each merchant is asked about at most
// once: one found holding something is marked kept.
func (r *Registry) evictOne(ctx context.Context) bool {
	if r.empty == nil || !r.open {
		return false
	}
	r.evictMu.Lock()
	defer r.evictMu.Unlock()
	for {
		var oldest *entry
		var at int64
		r.mu.RLock()
		for _, e := range r.byID {
			if e.kept.Load() {
				continue
			}
			if t := e.lastUsed.Load(); oldest == nil || t < at {
				oldest, at = e, t
			}
		}
		r.mu.RUnlock()
		if oldest == nil {
			return false
		}
		holds, err := r.holdsSomething(ctx, oldest.ID)
		if err != nil {
			r.log.Warn("no merchant evicted: the store cannot be read", "error", err)
			return false
		}
		if holds {
			oldest.kept.Store(true)
			continue
		}
		r.mu.Lock()
		// A request that authenticated meanwhile keeps its merchant; the
		// next oldest is tried.
		gone := r.byID[oldest.ID] == oldest && oldest.lastUsed.Load() == at
		if gone {
			delete(r.byID, oldest.ID)
			delete(r.lastAdded, oldest.ID)
		}
		r.mu.Unlock()
		if !gone {
			continue
		}
		if err := r.store.ReleaseMerchant(ctx, oldest.ID); err != nil {
			r.log.Warn("evicted merchant not released in the store", "merchant", oldest.ID, "error", err)
		}
		if r.evicted != nil {
			r.evicted(oldest.ID)
		}
		r.log.Info("evicted an empty open-mode merchant to make room for a new one", "merchant", oldest.ID, "max_merchants", r.maxMerchants)
		return true
	}
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
