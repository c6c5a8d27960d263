// Tests of the soak's judgement: what it reads from /metrics, when a
// series counts as still growing, what the receiver counts, and which
// accounts fail a soak.

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const metricsText = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
go_memstats_heap_inuse_bytes 1.6e+07
process_resident_memory_bytes 4.5056e+07
paymock_merchants 24
paymock_scheduled_timers 700
paymock_requests_total{operation="createPayment",status="201"} 100
paymock_requests_total{operation="createPayment",status="503"} 2
paymock_requests_total{operation="other",status="500"} 1
paymock_requests_total{operation="listPayments",status="400"} 7
paymock_webhook_events_created_total 50
paymock_webhook_events_finished_total{state="delivered"} 40
paymock_webhook_events_finished_total{state="failed"} 3
paymock_webhook_events_finished_total{state="interrupted"} 2
paymock_webhook_attempts_total{outcome="delivered"} 40
paymock_webhook_attempts_total{outcome="retrying"} 20
paymock_webhook_attempts_total{outcome="failed"} 3
paymock_webhook_attempts_total{outcome="interrupted"} 0
`

func TestParseMetrics_ReadsTheWatchedSeries(t *testing.T) {
	s, err := parseMetrics(strings.NewReader(metricsText))
	if err != nil {
		t.Fatal(err)
	}
	if s.Goroutines != 42 || s.HeapInuse != 16e6 || s.RSS != 45056000 || s.Merchants != 24 || s.Timers != 700 {
		t.Errorf("gauges: %+v", s)
	}
	if s.Requests != 110 || s.Status5xx != 3 {
		t.Errorf("requests %v, 5xx %v; want 110 and 3", s.Requests, s.Status5xx)
	}
	if s.Created != 50 || s.Delivered != 40 || s.Failed != 3 || s.Interrupted != 2 || s.Pending() != 5 {
		t.Errorf("events: %+v, pending %v", s, s.Pending())
	}
	if s.Attempts["retrying"] != 20 {
		t.Errorf("attempts: %v", s.Attempts)
	}
}

func TestParseMetrics_RefusesMissingOrUnknownSeries(t *testing.T) {
	cases := map[string]string{
		"renamed counter": strings.Replace(metricsText, "paymock_webhook_events_created_total", "paymock_events_total", 1),
		"unknown state":   metricsText + `paymock_webhook_events_finished_total{state="lost"} 1` + "\n",
		"broken line":     metricsText + "paymock_merchants\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := parseMetrics(strings.NewReader(text)); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestSplitSeries_ReadsQuotedLabels(t *testing.T) {
	name, labels, v, ok := splitSeries(`x{a="1,2",b="say \"hi\""} 3.5 1700000000`)
	if !ok || name != "x" || labels["a"] != "1,2" || labels["b"] != `say "hi"` || v != 3.5 {
		t.Errorf("got %q %v %v %v", name, labels, v, ok)
	}
}

// series makes one sample every 10s with the values of f.
func series(n int, f func(i int) float64) []sample {
	out := make([]sample, n)
	for i := range out {
		out[i] = sample{At: time.Duration(i+1) * 10 * time.Second, RSS: f(i)}
	}
	return out
}

func TestGrowth_TellsLevellingFromGrowing(t *testing.T) {
	rss := func(s sample) float64 { return s.RSS }
	mib := float64(1 << 20)
	cases := []struct {
		name    string
		samples []sample
		grew    bool
		judged  bool
	}{
		{"flat", series(60, func(int) float64 { return 50 * mib }), false, true},
		{"rises then flat", series(60, func(i int) float64 { return float64(min(i, 20)) * 2 * mib }), false, true},
		{"saw tooth of the GC", series(60, func(i int) float64 { return 50*mib + float64(i%3)*8*mib }), false, true},
		{"leaks 1 MiB a sample", series(60, func(i int) float64 { return 50*mib + float64(i)*mib }), true, true},
		// What the 20-minute soak of main at 595ac7c..a107afa saw: about
		// 1.5 MiB a minute (a 10s sample: 0.25 MiB) under a GC saw tooth.
		{"creeps 1.5 MiB a minute", series(120, func(i int) float64 { return 61*mib + float64(i)*mib/4 + float64(i%4)*3*mib }), true, true},
		{"too short", series(10, func(i int) float64 { return float64(i) * 100 * mib }), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rise, mean, grew, ok := growth(c.samples, rss, growthFrac, rssSlack)
			if grew != c.grew || ok != c.judged {
				t.Errorf("rise %.1f MiB, mean %.1f MiB: grew %v, judged %v; want %v, %v", rise/mib, mean/mib, grew, ok, c.grew, c.judged)
			}
		})
	}
}

func TestVerdict_FailsEachUnaccountedFigure(t *testing.T) {
	good := func() (result, totals, receiverStats) {
		f, err := parseMetrics(strings.NewReader(metricsText))
		if err != nil {
			t.Fatal(err)
		}
		f.Status5xx, f.Created, f.Delivered, f.Failed, f.Interrupted = 0, 45, 40, 3, 2
		res := result{Final: f, Drained: true, Samples: series(20, func(int) float64 { return 40 << 20 })}
		tot := totals{Completed: 20, Failed: 15, Expired: 10}
		rcv := receiverStats{Attempts: 63, Accepted: 40, Refused: 23, Events: 45, Delivered: 40}
		return res, tot, rcv
	}
	if p := verdict(good()); len(p) > 0 {
		t.Fatalf("a good soak fails: %q", p)
	}
	cases := []struct {
		name  string
		spoil func(*result, *totals, *receiverStats)
		want  string
	}{
		{"a 5xx", func(r *result, _ *totals, _ *receiverStats) { r.Final.Status5xx = 1 }, "5xx answers"},
		{"an event the merchants did not cause", func(_ *result, t *totals, _ *receiverStats) { t.Expired-- }, "the merchants caused 44"},
		{"a pending event", func(r *result, _ *totals, _ *receiverStats) { r.Final.Delivered--; r.Drained = false }, "unaccounted"},
		{"a delivery the receiver never saw", func(_ *result, _ *totals, rc *receiverStats) { rc.Delivered--; rc.Accepted-- }, "the receiver accepted"},
		{"a bad signature", func(_ *result, _ *totals, rc *receiverStats) { rc.BadSignature = 1 }, "bad signature"},
		{"memory growing", func(r *result, _ *totals, _ *receiverStats) {
			r.Samples = series(20, func(i int) float64 { return float64(40+4*i) * (1 << 20) })
		}, "resident memory kept growing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, tot, rcv := good()
			c.spoil(&res, &tot, &rcv)
			p := verdict(res, tot, rcv)
			if !strings.Contains(strings.Join(p, "\n"), c.want) {
				t.Errorf("problems %q, want one with %q", p, c.want)
			}
		})
	}
}

func TestReceiver_VerifiesAndFailsItsShare(t *testing.T) {
	r, err := startReceiver(1.0/3, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	hook, err := standardwebhooks.NewWebhook(r.secret)
	if err != nil {
		t.Fatal(err)
	}
	post := func(id string, sign bool) int {
		body := []byte(`{"id":"` + id + `","type":"payment.completed"}`)
		req, _ := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
		now := time.Now()
		sig := "v1,AAAA"
		if sign {
			if sig, err = hook.Sign(id, now, body); err != nil {
				t.Fatal(err)
			}
		}
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		req.Header.Set("webhook-signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 300 {
		id := fmt.Sprintf("evt_%d", i)
		for post(id, true) != http.StatusNoContent {
		}
	}
	if got := post("evt_forged", false); got != http.StatusBadRequest {
		t.Errorf("a forged delivery got %d, want 400", got)
	}
	st := r.stats()
	if st.Delivered != 300 || st.Accepted != 300 || st.Duplicates != 0 || st.BadSignature != 1 || st.Events != 301 {
		t.Errorf("stats %+v", st)
	}
	if share := float64(st.Refused) / float64(st.Attempts-1); share < 0.25 || share > 0.42 {
		t.Errorf("refused %d of %d: %.2f, want about a third", st.Refused, st.Attempts-1, share)
	}
}

func TestParse_RefusesWhatIsNotASoak(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--paymock", "x", "--minutes", "0"}, {"--paymock", "x", "--minutes", "121"},
		{"--paymock", "x", "--rate", "0"}, {"--paymock", "x", "--reset-min", "300", "--reset-max", "200"},
		{"--paymock", "x", "--fail-share", "1"}, {"--paymock", "x", "extra"},
	} {
		if _, err := parse(args, io.Discard); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
	c, err := parse([]string{"--paymock", "/bin/paymock", "--minutes", "0.5"}, io.Discard)
	if err != nil || c.duration != 30*time.Second || c.merchants != 24 {
		t.Errorf("parse: %+v, %v", c, err)
	}
}
