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
// room: its timers, deliveries, clock, fault draws and journal. Its
// payments store is not reset: it held none, and one made by a request
// racing the eviction stays with the merchant, whose token comes back to
// the same id.
func (s *Sandbox) dropEvicted(ctx context.Context, merchantID string) {
	s.sched.Forget(merchantID)
	if !s.shared {
		if err := s.hooks.Reset(ctx, merchantID); err != nil {
			s.log.Warn("evicted merchant's events not dropped", "merchant", merchantID, "error", err)
		}
		if err := s.clocks.Reset(ctx, merchantID); err != nil {
			s.log.Warn("evicted merchant's clock not dropped", "merchant", merchantID, "error", err)
		}
	}
	if err := s.faults.Forget(ctx, merchantID); err != nil {
		s.log.Warn("evicted merchant's fault rules not dropped", "merchant", merchantID, "error", err)
	}
	if err := s.server.Forget(ctx, merchantID); err != nil {
		s.log.Warn("evicted merchant's request journal not dropped", "merchant", merchantID, "error", err)
	}
}
