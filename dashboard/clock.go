// Clock: the merchant's sandbox clock, its mode, and advancing it.

package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxAdvance bounds one advance of the clock as the control API's
// POST /_sandbox/clock/advance does (seconds at most 31536000): a year is
// past any expiry (at most 30 days) and retry schedule.
const maxAdvance = 365 * 24 * time.Hour

func (d *Dashboard) registerClockRoutes() {
	d.mux.HandleFunc("GET "+Prefix+"/clock", d.page(d.handleClock))
	d.mux.HandleFunc("POST "+Prefix+"/clock/advance", d.action(d.handleAdvance))
}

// clockData is what the clock page shows.
type clockData struct {
	Now  time.Time
	Mode string
	By   string // the form's value, kept after a refusal
}

// handleClock handles GET /dashboard/clock.
func (d *Dashboard) handleClock(w http.ResponseWriter, r *http.Request, v *visit) {
	pv := v.view("Clock", "clock")
	now, err := d.cfg.Clock.Now(r.Context(), v.m)
	if err != nil {
		d.failed(r.Context(), w, r, v, "read the merchant's clock", err)
		return
	}
	pv.Data = clockData{Now: now, Mode: d.cfg.Clock.Mode(), By: v.notes.Typed}
	d.render(w, r, http.StatusOK, "clock", pv)
}

// parseAdvance reads how far to move the clock: whole seconds ("3600"),
// a Go duration ("90s", "15m", "1h30m") or days ("2d").
func parseAdvance(s string) (time.Duration, string) {
	const help = " Write seconds (3600), a duration (90s, 15m, 1h30m) or days (2d)."
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "Enter how far to advance the clock." + help
	}
	var d time.Duration
	var err error
	switch {
	case strings.Trim(s, "0123456789") == "":
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		if err == nil && n > int64(maxAdvance/time.Second) {
			return 0, "That is too far: advance by at most 365 days at a time."
		}
		d = time.Duration(n) * time.Second
	case strings.HasSuffix(s, "d") && strings.Trim(s[:len(s)-1], "0123456789") == "":
		var n int64
		n, err = strconv.ParseInt(s[:len(s)-1], 10, 64)
		if err == nil && n > int64(maxAdvance/(24*time.Hour)) {
			return 0, "That is too far: advance by at most 365 days at a time."
		}
		d = time.Duration(n) * 24 * time.Hour
	default:
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, "“" + s + "” is not a length of time." + help
	case d <= 0:
		return 0, "Advance by at least one second: the clock never goes back."
	case d > maxAdvance:
		return 0, "That is too far: advance by at most 365 days at a time."
	case d%time.Second != 0:
		return 0, "Advance by whole seconds: sandbox times have no fractions of a second."
	}
	return d, ""
}

// handleAdvance handles POST /dashboard/clock/advance.
func (d *Dashboard) handleAdvance(w http.ResponseWriter, r *http.Request, v *visit) {
	by := r.PostForm.Get("by")
	dur, msg := parseAdvance(by)
	if msg != "" {
		d.refuse(w, r, v, Prefix+"/clock", msg+" The clock did not move.", by)
		return
	}
	now, fired, err := d.cfg.Clock.Advance(r.Context(), v.m, dur)
	if err != nil {
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, Prefix+"/clock", msg+". The clock did not move.", by)
			return
		}
		d.failed(r.Context(), w, r, v, "advance the clock", err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard clock advanced", "merchant", v.m.ID, "by", dur.String(), "fired", fired)
	d.done(w, r, v, Prefix+"/clock", func(n *notes) {
		n.Flash = "Clock advanced by " + span(dur) + " to " + when(now) + "; " + plural(fired, "scheduled action") + " fired."
	})
}

// span is a length of time in whole seconds as the advance form takes it,
// in days, hours, minutes and seconds without the units that are zero:
// "2d", "1h30m", "1d1s" (where time.Duration's String says "48h0m0s").
func span(d time.Duration) string {
	var b strings.Builder
	for _, u := range []struct {
		unit   time.Duration
		suffix string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.suffix)
			d -= n * u.unit
		}
	}
	if b.Len() == 0 {
		return "0s"
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
