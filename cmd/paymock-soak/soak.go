// The soak itself: drive, read /metrics as it goes, print a row a minute,
// let the last deliveries end, and judge.

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// result is what a soak saw of the server.
type result struct {
	Samples []sample // while the merchants drove it
	Final   sample   // after the last deliveries ended
	Drained bool     // every delivery ended within drainLimit
}

// drainLimit bounds the wait for the last deliveries: the retry schedule
// (1s, 2s, 4s) and a few attempts' time.
const drainLimit = 90 * time.Second

func soak(ctx context.Context, c config, d *driver, scr *scraper, out io.Writer) (result, error) {
	var res result
	start := time.Now()
	driveCtx, stopDriving := context.WithTimeout(ctx, c.duration)
	defer stopDriving()
	// The merchants may take a while to see their last expiries.
	settleCtx, stopSettling := context.WithTimeout(ctx, c.duration+settleGrace+time.Duration(expireMaxS)*time.Second+30*time.Second)
	defer stopSettling()
	var wg sync.WaitGroup
	wg.Go(func() { d.run(driveCtx, settleCtx) })

	fmt.Fprintf(out, "%6s %8s %9s %10s %6s %9s %8s %9s %7s %11s %7s %9s %7s\n",
		"minute", "req/s", "rss MiB", "heap MiB", "gorout", "5xx", "created", "delivered", "failed", "interrupted", "pending", "merchants", "timers")
	row := func(label string, s sample, perSec float64) {
		fmt.Fprintf(out, "%6s %8.0f %9.1f %10.1f %6.0f %9.0f %8.0f %9.0f %7.0f %11.0f %7.0f %9.0f %7.0f\n",
			label, perSec, s.RSS/(1<<20), s.HeapInuse/(1<<20), s.Goroutines, s.Status5xx, s.Created, s.Delivered, s.Failed,
			s.Interrupted, s.Pending(), s.Merchants, s.Timers)
	}
	tick := time.NewTicker(c.sample)
	defer tick.Stop()
	lastRow, lastReqs := time.Duration(0), 0
	for driveCtx.Err() == nil {
		select {
		case <-driveCtx.Done():
			continue
		case <-tick.C:
		}
		s, err := scr.read(ctx)
		if err != nil {
			stopDriving()
			wg.Wait()
			return res, err
		}
		s.At = time.Since(start)
		res.Samples = append(res.Samples, s)
		if s.At-lastRow >= time.Minute-c.sample/2 {
			reqs := d.totals().Requests
			row(fmt.Sprintf("%.0f", s.At.Minutes()), s, float64(reqs-lastReqs)/(s.At-lastRow).Seconds())
			lastRow, lastReqs = s.At, reqs
		}
	}
	if ctx.Err() != nil {
		wg.Wait()
		return res, ctx.Err()
	}
	wg.Wait() // the merchants have seen their last expiries
	fmt.Fprintf(out, "merchants stopped after %v; waiting for the last deliveries (up to %v)\n",
		time.Since(start).Round(time.Second), drainLimit)
	deadline := time.Now().Add(drainLimit)
	for {
		s, err := scr.read(ctx)
		if err != nil {
			return res, err
		}
		s.At = time.Since(start)
		res.Final = s
		if s.Pending() == 0 {
			res.Drained = true
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		sleep(ctx, time.Second)
	}
	row("end", res.Final, 0)
	return res, nil
}

// growth says whether a series kept growing: the least-squares slope of
// the samples of the second half of the run, times that half's length, is
// how much it grew over it. It kept growing when that is more than both
// frac of its mean (a relative rise) and slack (noise: a GC cycle, a
// burst of requests in flight). ok is false with fewer than
// minSamplesToJudge samples in the second half: too few to judge.
func growth(samples []sample, value func(sample) float64, frac, slack float64) (rise, mean float64, grew, ok bool) {
	if len(samples) < 2 {
		return 0, 0, false, false
	}
	half := samples[len(samples)/2:]
	if len(half) < minSamplesToJudge {
		return 0, 0, false, false
	}
	var sx, sy, sxx, sxy float64
	n := float64(len(half))
	for _, s := range half {
		x, y := s.At.Seconds(), value(s)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n, false, true
	}
	slope := (n*sxy - sx*sy) / den
	span := half[len(half)-1].At.Seconds() - half[0].At.Seconds()
	rise, mean = slope*span, sy/n
	return rise, mean, rise > math.Max(frac*mean, slack), true
}

// The thresholds of growth: memory may rise 5% (or 8 MiB) over the second
// half, goroutines 5% (or 25). A steady 1.5 MiB a minute fails a 20-minute
// soak; the GC's saw tooth and a reset cycle's swing do not.
const (
	growthFrac        = 0.05
	rssSlack          = 8 << 20
	goroutineSlack    = 25
	minSamplesToJudge = 6
)

// verdict lists every reason the soak failed; none means it passed.
func verdict(res result, t totals, r receiverStats) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	f := res.Final
	if f.Status5xx > 0 || t.Status5xx > 0 {
		bad("5xx answers: %.0f counted by the server, %d seen by the merchants", f.Status5xx, t.Status5xx)
	}
	if t.Unexpected > 0 || t.Transport > 0 {
		bad("%d unexpected answers and %d requests without an answer", t.Unexpected, t.Transport)
	}
	if rise, mean, grew, ok := growth(res.Samples, func(s sample) float64 { return s.RSS }, growthFrac, rssSlack); ok && grew {
		bad("resident memory kept growing: +%.1f MiB over the second half (mean %.1f MiB)", rise/(1<<20), mean/(1<<20))
	}
	if rise, mean, grew, ok := growth(res.Samples, func(s sample) float64 { return s.Goroutines }, growthFrac, goroutineSlack); ok && grew {
		bad("goroutines kept growing: +%.0f over the second half (mean %.0f)", rise, mean)
	}
	if !res.Drained {
		bad("deliveries still pending %v after the merchants stopped: %.0f", drainLimit, f.Pending())
	}
	if int(f.Created) != t.Events() {
		bad("events: the merchants caused %d (%d completed, %d failed, %d expired), the server created %.0f",
			t.Events(), t.Completed, t.Failed, t.Expired, f.Created)
	}
	if f.Pending() != 0 {
		bad("events unaccounted for: created %.0f, delivered %.0f + failed %.0f + interrupted %.0f = %.0f",
			f.Created, f.Delivered, f.Failed, f.Interrupted, f.Delivered+f.Failed+f.Interrupted)
	}
	if float64(r.Delivered) != f.Delivered || float64(r.Accepted) != f.Attempts["delivered"] {
		bad("deliveries: the receiver accepted %d attempts of %d events, the server counts %.0f delivered attempts of %.0f events",
			r.Accepted, r.Delivered, f.Attempts["delivered"], f.Delivered)
	}
	sent := f.Attempts["delivered"] + f.Attempts["retrying"] + f.Attempts["failed"] + f.Attempts["interrupted"]
	if float64(r.Attempts) != sent {
		bad("attempts: the receiver got %d, the server counts %.0f", r.Attempts, sent)
	}
	if r.BadSignature > 0 || r.Duplicates > 0 {
		bad("the receiver saw %d deliveries with a bad signature and %d accepted twice", r.BadSignature, r.Duplicates)
	}
	return out
}

// report prints the closing figures and the verdict.
func report(out io.Writer, res result, t totals, r receiverStats, problems []string) {
	f := res.Final
	fmt.Fprintf(out, "merchants: %d requests, %d payments (%d completed, %d failed, %d expired, %d left pending), %d resets\n",
		t.Requests, t.Creates, t.Completed, t.Failed, t.Expired, t.LeftAlone, t.Resets)
	fmt.Fprintf(out, "server: %.0f requests, %.0f 5xx; events created %.0f = delivered %.0f + failed %.0f + interrupted %.0f + pending %.0f\n",
		f.Requests, f.Status5xx, f.Created, f.Delivered, f.Failed, f.Interrupted, f.Pending())
	fmt.Fprintf(out, "server attempts: delivered %.0f, retrying %.0f, failed %.0f, interrupted %.0f\n",
		f.Attempts["delivered"], f.Attempts["retrying"], f.Attempts["failed"], f.Attempts["interrupted"])
	fmt.Fprintf(out, "receiver: %d attempts, %d accepted, %d refused on purpose, %d bad signatures; %d events, %d delivered\n",
		r.Attempts, r.Accepted, r.Refused, r.BadSignature, r.Events, r.Delivered)
	for _, g := range []struct {
		name  string
		value func(sample) float64
		slack float64
		unit  float64
		fmt   string
	}{
		{"resident memory", func(s sample) float64 { return s.RSS }, rssSlack, 1 << 20, "%+.1f MiB (mean %.1f MiB)"},
		{"goroutines", func(s sample) float64 { return s.Goroutines }, goroutineSlack, 1, "%+.0f (mean %.0f)"},
	} {
		rise, mean, grew, ok := growth(res.Samples, g.value, growthFrac, g.slack)
		state := "levels off"
		switch {
		case !ok:
			state = fmt.Sprintf("not judged: fewer than %d samples in the second half", minSamplesToJudge)
		case grew:
			state = "KEPT GROWING"
		}
		fmt.Fprintf(out, "%s over the second half: "+g.fmt+": %s\n", g.name, rise/g.unit, mean/g.unit, state)
	}
	for _, p := range t.Problems {
		fmt.Fprintln(out, "  seen:", p)
	}
	if len(problems) == 0 {
		fmt.Fprintln(out, "PASS: no 5xx, memory and goroutines level off, every event accounted for")
		return
	}
	for _, p := range problems {
		fmt.Fprintln(out, "FAIL:", p)
	}
}
