// The attempt: one send of a claimed delivery, signed (and shaped by a
// fault when one applies), posted, classified and recorded.

package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paymock/paymock"
)

// msgInterrupted is the answer of a send Close cut short.
const msgInterrupted = "interrupted: the dispatcher closed during the attempt"

// attempt makes one send of a claimed delivery, claimed at at on its
// merchant's clock, and records what it came to; a retry it leaves
// pending is registered with the scheduler before it returns, so that
// Idle returning means the scheduler knows of it.
func (d *Dispatcher) attempt(del paymock.Delivery, at time.Time) {
	ep, err := d.endpoint(paymock.WebhookEndpoint{ID: del.EndpointID, URL: del.URL, Secret: del.Secret})
	if err != nil {
		d.record(del, paymock.Outcome{Sends: del.Sends, State: paymock.DeliveryFailed, Error: err.Error()}, "")
		return
	}
	n := del.Sends + 1
	ev := paymock.Event{ID: del.EventID, Type: del.EventType, MerchantID: del.MerchantID, Body: del.Body}
	var (
		status      int
		errMsg      string
		interrupted bool
		attempts    []paymock.AttemptRecord
	)
	if sh := shapeOf(del); sh == nil {
		start := time.Now()
		status, errMsg, interrupted = d.post(ep, ev, nil, start.Add(d.timeout))
		attempts = []paymock.AttemptRecord{{Attempt: n, At: paymock.FormatTime(at), StatusCode: status, Error: errMsg,
			DurationMS: time.Since(start).Milliseconds()}}
	} else {
		status, errMsg, interrupted, attempts = d.postShaped(ep, del, ev, sh, n, at)
	}
	if interrupted {
		// Cut short by Close: not recorded, so that the send is made again
		// by whichever sender claims it next.
		d.obs.WebhookAttempt(string(paymock.DeliveryInterrupted))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.box.Release(ctx, del); err != nil {
			d.log.Warn("webhook claim not released; it lapses with its lease", "event", del.EventID, "error", err)
		}
		return
	}
	out, outcome := d.next(n, status, errMsg, del.OneShot, at)
	out.Attempts = attempts
	d.obs.WebhookAttempt(outcome)
	if d.log.Enabled(context.Background(), slog.LevelDebug) { // else its arguments are built for nothing
		d.log.Debug("webhook attempt", "merchant", del.MerchantID, "event", del.EventID, "url", ep.display,
			"attempt", n, "status", status, "error", errMsg)
	}
	if d.record(del, out, errMsg) && out.State == paymock.DeliveryPending {
		d.timerAt(del.MerchantID, out.NextAt)
	}
}

// record records an outcome in the outbox; false when it could not be
// (the claim then lapses, and the send is made again).
func (d *Dispatcher) record(del paymock.Delivery, out paymock.Outcome, lastErr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.box.Attempted(ctx, del, out); err != nil {
		d.log.Warn("webhook attempt not recorded; the delivery is sent again once its claim lapses",
			"event", del.EventID, "error", err)
		return false
	}
	if out.State != paymock.DeliveryPending {
		d.obs.EventFinished(string(out.State))
		if out.State == paymock.DeliveryFailed {
			d.log.Warn("webhook delivery failed", "merchant", del.MerchantID, "event", del.EventID,
				"reason", out.Error, "last_error", lastErr)
		}
	}
	return true
}

// post makes one signed POST, shaped by sh when it is not nil, that must
// be answered by deadline. It returns the status code (0 without an
// answer), an error message ("" on a 2xx), and whether Close cut the
// attempt short.
func (d *Dispatcher) post(ep endpoint, ev paymock.Event, sh *shape, deadline time.Time) (int, string, bool) {
	ctx, cancel := context.WithDeadline(d.sendCtx, deadline)
	defer cancel()
	now := d.now()
	if sh != nil {
		now = now.Add(sh.skew)
	}
	ts := now.Unix()
	var sig string
	if sh != nil && sh.badSignature {
		sig = signKey(wrongKey(ep.key), ev.ID, ts, ev.Body)
	} else {
		sig = ep.signers.sign(ev.ID, ts, ev.Body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, "request not built: " + err.Error(), false
	}
	// Keys already canonical: Header.Set would canonicalise each anew.
	// The values share one array, one allocation rather than five; each
	// slice is full, so an append elsewhere copies rather than overwrites.
	vals := [...]string{"application/json", UserAgent, ev.ID, strconv.FormatInt(ts, 10), sig}
	req.Header = http.Header{
		"Content-Type":      vals[0:1:1],
		"User-Agent":        vals[1:2:2],
		"Webhook-Id":        vals[2:3:3],
		"Webhook-Timestamp": vals[3:4:4],
		"Webhook-Signature": vals[4:5:5],
	}
	resp, err := d.transport.RoundTrip(req)
	if err != nil {
		switch {
		case d.sendCtx.Err() != nil:
			return 0, msgInterrupted, true
		case errors.Is(ctx.Err(), context.DeadlineExceeded) && sh.shared():
			return 0, fmt.Sprintf("timeout: no answer before the send's %s ran out (a shaped send's messages share it)", d.timeout), false
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return 0, fmt.Sprintf("timeout: no answer within %s", d.timeout), false
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL is in the record already
		}
		return 0, "request failed: " + err.Error(), false
	}
	if resp.Body != http.NoBody { // a 204's: nothing to read, no reader to make
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	_ = resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return code, "", false
	case code == http.StatusGone:
		return code, msgGone, false
	case code >= 300 && code < 400:
		return code, fmt.Sprintf("endpoint answered %d %s (redirects are not followed)", code, http.StatusText(code)), false
	}
	return code, fmt.Sprintf("endpoint answered %d %s", code, http.StatusText(code)), false
}

// postShaped makes a shaped send: the unknown-type message an
// unknown_type fault adds, then the send's copies one after the other, all
// within the one attempt timeout. Sharing it keeps a shaped send as short
// as a plain one, so it ends within its claim's lease (the timeout plus
// 5 s) and is recorded like any other: copies that each took a timeout
// outlived the lease against a receiver that never answers, so another
// sender claimed the delivery again, its first send was never recorded,
// and senders went on sending it until a reset. Copies the timeout leaves
// no time for are not sent, and the last copy's record says so. The
// send's outcome is that of the first copy answered with a 2xx, or else of
// the last copy sent; the unknown-type message's answer is recorded only,
// unless it used the whole timeout and no copy went out.
func (d *Dispatcher) postShaped(ep endpoint, del paymock.Delivery, ev paymock.Event, sh *shape, n int, at time.Time) (int, string, bool, []paymock.AttemptRecord) {
	deadline := time.Now().Add(d.timeout)
	made := make([]paymock.AttemptRecord, 0, sh.copies+1)
	if sh.unknownType {
		unknown, err := unknownTypeEvent(del)
		if err != nil {
			d.log.Warn("webhook fault not applied", "event", del.EventID, "fault", "unknown_type", "error", err)
		} else {
			start := time.Now()
			status, msg, intr := d.post(ep, unknown, sh, deadline)
			if intr {
				return 0, msgInterrupted, true, nil
			}
			made = append(made, paymock.AttemptRecord{Attempt: n, At: paymock.FormatTime(at), StatusCode: status, Error: msg,
				DurationMS: time.Since(start).Milliseconds(), Fault: sh.recordUnknown(unknown.ID)})
		}
	}
	if sh.extraFields {
		body, err := withExtraFields(ev.Body)
		if err != nil {
			d.log.Warn("webhook fault not applied", "event", del.EventID, "fault", "extra_fields", "error", err)
			sh.extraFields = false // so the journal does not claim it
		} else {
			ev.Body = body
		}
	}
	decided, interrupted, cut, sent := -1, false, false, 0
	for c := 1; c <= sh.copies && time.Now().Before(deadline); c++ {
		start := time.Now()
		status, msg, intr := d.post(ep, ev, sh, deadline)
		sent = c
		made = append(made, paymock.AttemptRecord{Attempt: n, At: paymock.FormatTime(at), StatusCode: status, Error: msg,
			DurationMS: time.Since(start).Milliseconds(), Fault: sh.record(c)})
		if msg == "" && decided < 0 {
			decided = len(made) - 1
		}
		if intr {
			interrupted, cut = decided < 0, true
			break
		}
	}
	if sent == 0 {
		// The unknown-type message took the whole timeout: the event
		// itself did not go out, so the send failed and is retried.
		return 0, fmt.Sprintf("timeout: the send's %s ran out before the event went out", d.timeout), false, made
	}
	if sent < sh.copies && !cut {
		last := made[len(made)-1].Fault
		last.Effect += fmt.Sprintf("; the send's %s timeout, which its copies share, ran out: copies %d to %d were not sent",
			d.timeout, sent+1, sh.copies)
	}
	if decided < 0 {
		decided = len(made) - 1
	}
	a := made[decided]
	return a.StatusCode, a.Error, interrupted, made
}
