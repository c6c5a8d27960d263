// Webhook faults: what a matched rule does to a delivery's first send
// (copies, a wrong signature, a skewed timestamp, a delay, a reorder
// window, a message of unknown type before it, extra fields in it) and how
// the journal shows it.

package webhooks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// Faults decides whether a fault shapes a delivery. WebhookFault is asked
// once for each delivery when it is made, in the order deliveries are made;
// a hit counts toward the rule's times and probability draws as the rule
// book sees fit. It must be safe for concurrent use and must not call the
// Dispatcher. (Package faults' Set.MatchWebhook, through a small adapter
// in package sandbox, implements it.) ctx is the caller's of Publish,
// Redeliver or SendTest, which prepares the deliveries.
type Faults interface {
	WebhookFault(ctx context.Context, merchantID string, eventType paymock.EventType) (paymock.WebhookFault, bool)
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
	return f, f.Duplicate > 1 || f.BadSignature || f.TimestampSkew != 0 || f.Delay > 0 || f.Reorder ||
		f.UnknownType || f.ExtraFields
}

// matchFaults asks Faults about each valid endpoint of a new round, in
// order. It returns nil when none matched, else the faults by slot.
func (d *Dispatcher) matchFaults(ctx context.Context, merchantID string, typ paymock.EventType, slots []endpointSlot) []*paymock.WebhookFault {
	if d.faults == nil {
		return nil
	}
	var out []*paymock.WebhookFault
	for i, s := range slots {
		if s.err != nil {
			continue
		}
		f, ok := d.faults.WebhookFault(ctx, merchantID, typ)
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
	unknownType  bool // one unknown-type message goes out before the copies
	extraFields  bool
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
		sh.unknownType, sh.extraFields = f.UnknownType, f.ExtraFields
	}
	return sh
}

// shared reports whether the send's messages share one timeout: more
// than one goes out (see postShaped).
func (sh *shape) shared() bool { return sh != nil && (sh.copies > 1 || sh.unknownType) }

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
		if sh.extraFields {
			r.ExtraFields = true
			effects = append(effects, fmt.Sprintf("payload carried the extra fields %s and data.%s, signed with them",
				paymock.FaultExtraField, paymock.FaultExtraField))
		}
	}
	if w := sh.window; w != nil {
		if r.RuleID == "" {
			r.RuleID = w.RuleID
		}
		r.Reorder, r.WindowMS = true, w.Window.Milliseconds()
		effects = append(effects, fmt.Sprintf("held for a %s reorder window, then sent newest first", w.Window))
	}
	if len(effects) == 0 {
		// An unknown_type fault's record is on the message it added; the
		// real message after it went out as it always does.
		return nil
	}
	r.Effect = strings.Join(effects, "; ")
	return r
}

// recordUnknown describes the unknown-type message sent as webhookID.
func (sh *shape) recordUnknown(webhookID string) *paymock.WebhookFaultRecord {
	return &paymock.WebhookFaultRecord{RuleID: sh.fault.RuleID, UnknownType: true, WebhookID: webhookID,
		Effect: fmt.Sprintf("a message of type %s (webhook-id %s), correctly signed, went out before the event; "+
			"its answer decides nothing, and a receiver should take it with a 2xx and ignore it",
			paymock.FaultUnknownEventType, webhookID)}
}

// wireEvent is the payload every event and test event has.
type wireEvent struct {
	ID        string            `json:"id"`
	Type      paymock.EventType `json:"type"`
	CreatedAt string            `json:"created_at"`
	Data      json.RawMessage   `json:"data"`
}

// unknownTypeEvent is the message an unknown_type fault sends before del:
// the event's payload with type paymock.FaultUnknownEventType and an id of
// its own. The id is derived from the event, round and endpoint, so runs
// with one seed send the same ids, and no two deliveries share one.
func unknownTypeEvent(del paymock.Delivery) (paymock.Event, error) {
	var ev wireEvent
	if err := json.Unmarshal(del.Body, &ev); err != nil {
		return paymock.Event{}, fmt.Errorf("read event %s for an unknown_type fault: %w", del.EventID, err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%d/unknown_type", del.EventID, del.Round, del.Position))
	digits := new(big.Int).SetBytes(sum[:]).Text(62)
	ev.ID, ev.Type = "evt_"+digits[:paymock.IDLength], paymock.FaultUnknownEventType
	body, err := paymock.EncodeJSON(ev)
	if err != nil {
		return paymock.Event{}, fmt.Errorf("encode an unknown_type message: %w", err)
	}
	return paymock.Event{ID: ev.ID, Type: ev.Type, MerchantID: del.MerchantID, Body: body}, nil
}

// extraFieldsData is the value of paymock.FaultExtraField inside data: an
// object, so a receiver meets nesting it does not know, not only a
// string.
const extraFieldsData = `{"note":"a field this receiver does not know: ignore it","tags":["forward","compatible"]}`

// withExtraFields returns body with paymock.FaultExtraField added last at
// its top level and last inside its data object; the rest keeps its order
// and bytes.
func withExtraFields(body []byte) ([]byte, error) {
	var ev wireEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("read the payload for an extra_fields fault: %w", err)
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return nil, fmt.Errorf("an extra_fields fault needs data to be an object, got %.20q", data)
	}
	grown := append([]byte{}, data[:len(data)-1]...)
	if len(bytes.TrimSpace(data[1:len(data)-1])) > 0 {
		grown = append(grown, ',')
	}
	grown = append(fmt.Appendf(grown, "%q:%s", paymock.FaultExtraField, extraFieldsData), '}')
	// The top-level field's tag must be FaultExtraField's value; the
	// test of this fault reads it under that name.
	out, err := paymock.EncodeJSON(struct {
		wireEvent
		Extra string `json:"paymock_extra"`
	}{wireEvent{ev.ID, ev.Type, ev.CreatedAt, grown}, "added by a paymock extra_fields fault: ignore it"})
	if err != nil {
		return nil, fmt.Errorf("encode the payload of an extra_fields fault: %w", err)
	}
	return out, nil
}

// wrongKey is a key that is surely not the endpoint's: its bytes inverted.
func wrongKey(key []byte) []byte {
	out := make([]byte, len(key))
	for i, b := range key {
		out[i] = ^b
	}
	return out
}
