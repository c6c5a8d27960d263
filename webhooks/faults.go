// Webhook faults: what a matched rule does to a delivery's first send
// (copies, a wrong signature, a skewed timestamp, a delay, a reorder
// window) and how the journal shows it.

package webhooks

import (
	"cmp"
	"fmt"
	"slices"
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
	WebhookFault(merchantID string, eventType paymock.EventType) (Fault, bool)
}

// Fault is what a matched webhook rule does to the first send of one
// delivery. Several effects may be set together; zero fields do nothing.
type Fault struct {
	// RuleID names the rule in the journal ("flt_...").
	RuleID string
	// Duplicate sends the first send this many times in all, one after the
	// other, with the same webhook-id; each copy verifies.
	Duplicate int
	// BadSignature signs with a wrong key, so verification fails.
	BadSignature bool
	// TimestampSkew moves webhook-timestamp this far from real time; the
	// signature is computed over the moved value, so only a receiver's
	// tolerance check fails.
	TimestampSkew time.Duration
	// Delay holds the first send this long on the merchant's clock.
	Delay time.Duration
	// Reorder opens a reorder window of Window (DefaultReorderWindow when
	// 0) on the endpoint: deliveries to it that fall due while it is open
	// are sent newest first when it closes.
	Reorder bool
	Window  time.Duration
}

// DefaultReorderWindow is the window of a Reorder fault without one.
const DefaultReorderWindow = time.Second

// normalized drops what cannot apply and fills the default window; it
// reports whether anything is left to do.
func (f Fault) normalized() (Fault, bool) {
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

// FaultRecord is how the journal shows the fault that shaped an attempt.
// Its effect fields are named as in the rule (POST /_sandbox/faults).
type FaultRecord struct {
	RuleID string `json:"rule_id"`
	// Effect says in plain words what was done to this attempt.
	Effect string `json:"effect"`
	// Duplicate is how many copies of the send went out; Copy is which one
	// this attempt is, from 1.
	Duplicate      int   `json:"duplicate,omitempty"`
	Copy           int   `json:"copy,omitempty"`
	BadSignature   bool  `json:"bad_signature,omitempty"`
	TimestampSkewS int64 `json:"timestamp_skew_s,omitempty"`
	DelayMS        int64 `json:"delay_ms,omitempty"`
	Reorder        bool  `json:"reorder,omitempty"`
	WindowMS       int64 `json:"window_ms,omitempty"`
	// Sent is this delivery's place in its reorder window's sending order
	// (1 went first) of Held deliveries the window held.
	Sent int `json:"sent,omitempty"`
	Held int `json:"held,omitempty"`
}

// matchFaults asks Faults about each valid endpoint of a new round, in
// order. It returns nil when none matched, and then the zero time; else
// the faults by slot and the merchant clock, from which delays and windows
// are timed. It is called without d.mu.
func (d *Dispatcher) matchFaults(merchantID string, typ paymock.EventType, slots []endpointSlot) ([]*Fault, time.Time) {
	if d.faults == nil {
		return nil, time.Time{}
	}
	var out []*Fault
	for i, s := range slots {
		if s.err != nil {
			continue
		}
		f, ok := d.faults.WebhookFault(merchantID, typ)
		if !ok {
			continue
		}
		if f, ok = f.normalized(); !ok {
			continue
		}
		if out == nil {
			out = make([]*Fault, len(slots))
		}
		out[i] = &f
	}
	if out == nil {
		return nil, time.Time{}
	}
	return out, d.clock.Now(merchantID)
}

// window is an open reorder window of one endpoint of one merchant.
type window struct {
	j       *journal
	key     string // endpoint URL
	fault   *Fault // of the delivery that opened it
	closeAt time.Time
	members []*delivery
}

// hold is what faults do to one delivery.
type hold struct {
	fault    *Fault  // matched when the delivery was made; shapes its first send
	delayed  bool    // the fault's delay has been waited
	window   *window // the reorder window holding it
	windowed bool    // it has been through a reorder window
	reorder  reorderInfo
}

// reorderInfo is what a closed window did to one of its deliveries.
type reorderInfo struct {
	fault    *Fault // of the window's opener; nil: the delivery was in no window
	sent, of int
}

// holdLocked lets a fault's delay, or a reorder window, hold a delivery
// whose first send is due: it reports whether it did, with the timers to
// register. now is the merchant clock (set whenever del has a fault).
func (d *Dispatcher) holdLocked(del *delivery, now time.Time) (followUp, bool) {
	h := del.hold
	var fl *Fault
	if h != nil {
		fl = h.fault
		if fl != nil && fl.Delay > 0 && !h.delayed {
			h.delayed = true
			del.waiting, del.nextAt = true, now.Add(fl.Delay)
			return followUp{timers: []timer{{at: del.nextAt, fn: func() { d.retryDue(del) }}}}, true
		}
		if h.windowed {
			return followUp{}, false
		}
	}
	j := del.entry.j
	if w := j.windows[del.ep.url]; w != nil {
		if h == nil {
			h = &hold{}
			del.hold = h
		}
		w.members = append(w.members, del)
		h.window = w
		del.waiting, del.nextAt = true, w.closeAt
		return followUp{}, true
	}
	if fl == nil || !fl.Reorder {
		return followUp{}, false
	}
	w := &window{j: j, key: del.ep.url, fault: fl, closeAt: now.Add(fl.Window), members: []*delivery{del}}
	if j.windows == nil {
		j.windows = make(map[string]*window)
	}
	j.windows[w.key] = w
	h.window = w
	del.waiting, del.nextAt = true, w.closeAt
	return followUp{timers: []timer{{at: w.closeAt, fn: func() { d.closeWindow(w) }}}}, true
}

// closeWindow sends what a reorder window held, newest first, one at a
// time: each is attempted before the next goes, so the receiver sees them
// in that order whatever the number of workers. Like retryDue it returns
// once they have been attempted.
func (d *Dispatcher) closeWindow(w *window) {
	d.mu.Lock()
	if w.j.windows[w.key] == w {
		delete(w.j.windows, w.key)
	}
	if d.closed {
		d.mu.Unlock() // Close has interrupted the members
		return
	}
	var live []*delivery
	for _, del := range w.members {
		if del.hold.window == w && del.state == StatePending && !droppedLocked(del) {
			live = append(live, del)
		}
	}
	slices.SortFunc(live, func(a, b *delivery) int { return cmp.Compare(b.seq, a.seq) })
	jobs := make([]job, len(live))
	for i, del := range live {
		del.hold.window, del.hold.windowed = nil, true
		del.hold.reorder = reorderInfo{fault: w.fault, sent: i + 1, of: len(live)}
		del.waiting, del.nextAt = false, time.Time{}
		// Tokens for all of them now, so Idle waits for the last one.
		d.acquireLocked(del.ms)
		jobs[i] = job{del}
	}
	d.mu.Unlock()
	for _, j := range jobs {
		d.sendAndWait([]job{j})
	}
}

// shape is what faults do to one send.
type shape struct {
	copies       int
	badSignature bool
	skew         time.Duration
	fault        *Fault
	reorder      reorderInfo
}

// shapeLocked returns the shape of del's next send, or nil for a plain one:
// faults shape the first send only.
func shapeLocked(del *delivery) *shape {
	h := del.hold
	if del.sends > 0 || h == nil || h.fault == nil && h.reorder.fault == nil {
		return nil
	}
	sh := &shape{copies: 1, fault: h.fault, reorder: h.reorder}
	if f := h.fault; f != nil {
		sh.copies = max(f.Duplicate, 1)
		sh.badSignature, sh.skew = f.BadSignature, f.TimestampSkew
	}
	return sh
}

// postShaped makes a shaped send: its copies one after the other. The
// send's outcome is that of the first copy answered with a 2xx, or else
// of the last copy.
func (d *Dispatcher) postShaped(ep endpoint, ev paymock.Event, sh *shape, n int, at time.Time) (int, string, bool, []attempt) {
	made := make([]attempt, 0, sh.copies)
	decided, interrupted := -1, false
	for c := 1; c <= sh.copies; c++ {
		start := time.Now()
		status, msg, intr := d.post(ep, ev, sh)
		made = append(made, attempt{n: n, at: at, status: status, err: msg, dur: time.Since(start), fault: sh.record(c)})
		if msg == "" && decided < 0 {
			decided = len(made) - 1
		}
		if intr {
			interrupted = decided < 0
			break
		}
	}
	if decided < 0 {
		decided = len(made) - 1
	}
	a := made[decided]
	return a.status, a.err, interrupted, made
}

// record describes copy c of a shaped send for the journal.
func (sh *shape) record(c int) *FaultRecord {
	r := &FaultRecord{}
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
	if ro := sh.reorder; ro.fault != nil {
		if r.RuleID == "" {
			r.RuleID = ro.fault.RuleID
		}
		r.Reorder, r.WindowMS, r.Sent, r.Held = true, ro.fault.Window.Milliseconds(), ro.sent, ro.of
		if ro.of == 0 { // held in a shared store's window, whose count no replica keeps
			effects = append(effects, fmt.Sprintf("held for a %s reorder window, then sent newest first", ro.fault.Window))
		} else if ro.of == 1 {
			effects = append(effects, fmt.Sprintf("held for a %s reorder window; no other delivery to this endpoint fell due in it", ro.fault.Window))
		} else {
			effects = append(effects, fmt.Sprintf("held for a %s reorder window with %d other deliveries to this endpoint, then sent %s of %d, newest first",
				ro.fault.Window, ro.of-1, ordinal(ro.sent), ro.of))
		}
	}
	r.Effect = strings.Join(effects, "; ")
	return r
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// wrongKey is a key that is surely not the endpoint's: its bytes inverted.
func wrongKey(key []byte) []byte {
	out := make([]byte, len(key))
	for i, b := range key {
		out[i] = ^b
	}
	return out
}
