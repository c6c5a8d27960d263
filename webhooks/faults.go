// Webhook faults: what a matched rule does to a delivery's first send
// (copies, a wrong signature, a skewed timestamp, a delay, a reorder
// window) and how the journal shows it.

package webhooks

import (
	"fmt"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// Faults decides whether a fault shapes a delivery. WebhookFault is asked
// once for each delivery when it is made, in the order deliveries are made;
// a hit counts toward the rule's times and probability draws as the rule
// book sees fit. It must be safe for concurrent use and must not call the
// Dispatcher. (Package faults' Set.MatchWebhook, through a small adapter
// in package sandbox, implements it.)
type Faults interface {
	WebhookFault(merchantID string, eventType paymock.EventType) (paymock.WebhookFault, bool)
}

// DefaultReorderWindow is the window of a Reorder fault without one.
const DefaultReorderWindow = time.Second

// normalized drops what cannot apply and fills the default window; it
// reports whether anything is left to do.
func normalized(f paymock.WebhookFault) (paymock.WebhookFault, bool) {
	f.Duplicate = max(f.Duplicate, 0)
	f.Delay = max(f.Delay, 0)
	switch {
	case !f.Reorder:
		f.Window = 0
	case f.Window <= 0:
		f.Window = DefaultReorderWindow
	}
	return f, f.Duplicate > 1 || f.BadSignature || f.TimestampSkew != 0 || f.Delay > 0 || f.Reorder
}

// matchFaults asks Faults about each valid endpoint of a new round, in
// order. It returns nil when none matched, else the faults by slot.
func (d *Dispatcher) matchFaults(merchantID string, typ paymock.EventType, slots []endpointSlot) []*paymock.WebhookFault {
	if d.faults == nil {
		return nil
	}
	var out []*paymock.WebhookFault
	for i, s := range slots {
		if s.err != nil {
			continue
		}
		f, ok := d.faults.WebhookFault(merchantID, typ)
		if !ok {
			continue
		}
		if f, ok = normalized(f); !ok {
			continue
		}
		if out == nil {
			out = make([]*paymock.WebhookFault, len(slots))
		}
		out[i] = &f
	}
	return out
}

// shape is what faults do to one send.
type shape struct {
	copies       int
	badSignature bool
	skew         time.Duration
	fault        *paymock.WebhookFault // matched for the delivery; nil for none
	window       *paymock.WebhookFault // of the reorder window that held it; nil for none
}

// shapeOf returns the shape of del's next send, or nil for a plain one:
// faults shape the first send only.
func shapeOf(del paymock.Delivery) *shape {
	if del.Sends > 0 || del.Fault == nil && del.Window == nil {
		return nil
	}
	sh := &shape{copies: 1, fault: del.Fault, window: del.Window}
	if f := del.Fault; f != nil {
		sh.copies, sh.badSignature, sh.skew = max(f.Duplicate, 1), f.BadSignature, f.TimestampSkew
	}
	return sh
}

// record describes copy c of a shaped send for the journal.
func (sh *shape) record(c int) *paymock.WebhookFaultRecord {
	r := &paymock.WebhookFaultRecord{}
	var effects []string
	if f := sh.fault; f != nil {
		r.RuleID = f.RuleID
		if sh.copies > 1 {
			r.Duplicate, r.Copy = sh.copies, c
			effects = append(effects, fmt.Sprintf("copy %d of %d, all with the same webhook-id", c, sh.copies))
		}
		if f.BadSignature {
			r.BadSignature = true
			effects = append(effects, "signed with a wrong secret, so the signature does not verify")
		}
		if f.TimestampSkew != 0 {
			r.TimestampSkewS = int64(f.TimestampSkew / time.Second)
			effects = append(effects, fmt.Sprintf("webhook-timestamp %+d s off real time", r.TimestampSkewS))
		}
		if f.Delay > 0 {
			r.DelayMS = f.Delay.Milliseconds()
			effects = append(effects, fmt.Sprintf("held %s on the merchant clock before sending", f.Delay))
		}
	}
	if w := sh.window; w != nil {
		if r.RuleID == "" {
			r.RuleID = w.RuleID
		}
		r.Reorder, r.WindowMS = true, w.Window.Milliseconds()
		effects = append(effects, fmt.Sprintf("held for a %s reorder window, then sent newest first", w.Window))
	}
	r.Effect = strings.Join(effects, "; ")
	return r
}

// wrongKey is a key that is surely not the endpoint's: its bytes inverted.
func wrongKey(key []byte) []byte {
	out := make([]byte, len(key))
	for i, b := range key {
		out[i] = ^b
	}
	return out
}
