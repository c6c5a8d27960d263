// What the merchant registry asks before evicting an open-mode merchant
// at the cap, and what the sandbox drops of one it evicted.

package sandbox

import "context"

// holdsNothing reports whether the sandbox holds nothing of a merchant
// that eviction would lose: no payment at all, no delivery under way or
// due, no fault rule of its own. Its journal and clock are not counted:
// every merchant's first request is journaled, and a flood of new tokens
// must find room.
func (s *Sandbox) holdsNothing(ctx context.Context, merchantID string) bool {
	if s.hooks.Busy(merchantID) {
		return false
	}
	if _, total, err := s.store.List(ctx, merchantID, 0, 1); err != nil || total > 0 {
		return false
	}
	rules, err := s.faults.List(ctx, merchantID)
	if err != nil {
		return false
	}
	for _, r := range rules {
		if r.Source == "api" {
			return false
		}
	}
	return true
}

// dropEvicted drops what the sandbox holds of a merchant evicted to make
// room. It held no payment; one made by a request racing the eviction
// goes with the rest on a backend only this process uses.
func (s *Sandbox) dropEvicted(ctx context.Context, merchantID string) {
	s.drop(ctx, merchantID, "evicted")
}

// drop drops what this process holds of a merchant the registry no longer
// holds (why: "forgotten" or "evicted"): its timers, its webhook timers,
// its fault rules and draws and its journal, and tells the backend, which
// drops the rest when nothing else can reach it (paymock.Backend.Release).
func (s *Sandbox) drop(ctx context.Context, merchantID, why string) {
	s.sched.Forget(merchantID)
	if err := s.hooks.Forget(ctx, merchantID, s.release); err != nil {
		s.log.Warn(why+" merchant's events not released", "merchant", merchantID, "error", err)
	}
	if err := s.faults.Forget(ctx, merchantID); err != nil {
		s.log.Warn(why+" merchant's fault rules not dropped", "merchant", merchantID, "error", err)
	}
	if err := s.server.Forget(ctx, merchantID); err != nil {
		s.log.Warn(why+" merchant's request journal not dropped", "merchant", merchantID, "error", err)
	}
}
