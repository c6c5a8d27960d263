// Tests that the hand-written exposition is what Prometheus's client library served.

package metrics_test

import (
	"bytes"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/paymock/paymock/metrics"
)

// paymockFamilies are paymock's own families as the client library
// registered them: type, label names, help.
var paymockFamilies = map[string]struct {
	typ    dto.MetricType
	labels []string
	help   string
}{
	"paymock_requests_total":                {dto.MetricType_COUNTER, []string{"operation", "status"}, "Requests answered, by operation and HTTP status (injected faults included)."},
	"paymock_request_duration_seconds":      {dto.MetricType_HISTOGRAM, []string{"operation"}, "Time from receiving a request to its answer, by operation (injected delays included)."},
	"paymock_contract_violations_total":     {dto.MetricType_COUNTER, []string{"side"}, "Requests refused by the contract (side=request) and answers that broke it (side=response)."},
	"paymock_webhook_attempts_total":        {dto.MetricType_COUNTER, []string{"outcome"}, "Webhook POSTs, by what came of them."},
	"paymock_webhook_events_created_total":  {dto.MetricType_COUNTER, nil, "Webhook deliveries queued (one per event, endpoint and round); each ends in paymock_webhook_events_finished_total."},
	"paymock_webhook_events_finished_total": {dto.MetricType_COUNTER, []string{"state"}, "Webhook deliveries that reached a final state; created minus finished are pending."},
	"paymock_injected_faults_total":         {dto.MetricType_COUNTER, []string{"target"}, "Faults injected on purpose, by target (api or webhooks)."},
	"paymock_merchants":                     {dto.MetricType_GAUGE, nil, "Merchants the sandbox holds state for."},
	"paymock_stored_payments":               {dto.MetricType_GAUGE, nil, "Payments held in the store, all merchants together."},
	"paymock_scheduled_timers":              {dto.MetricType_GAUGE, nil, "Expiries, webhook retries and scenario steps waiting for their time."},
}

// libraryFamilies gathers the client library's Go and process collectors
// in this process, as the old /metrics served them.
func libraryFamilies(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	got, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather the library's collectors: %v", err)
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range got {
		fams[f.GetName()] = f
	}
	return fams
}

func labelNames(m *dto.Metric) []string {
	var names []string
	for _, l := range m.GetLabel() {
		names = append(names, l.GetName())
	}
	return names
}

func TestExposition_HasEveryFamilyWithItsTypeHelpAndLabels(t *testing.T) {
	lib := libraryFamilies(t)
	m := metrics.New(metrics.Config{
		Operations:      []string{"createPayment"},
		Merchants:       func() int { return 1 },
		StoredPayments:  func() int { return 2 },
		ScheduledTimers: func() int { return 3 },
	})
	m.Request("createPayment", 201, time.Millisecond)
	fams := scrape(t, m.Handler())

	for name, want := range paymockFamilies {
		f, ok := fams[name]
		if !ok {
			t.Errorf("%s is not served", name)
			continue
		}
		if f.GetType() != want.typ || f.GetHelp() != want.help {
			t.Errorf("%s: type %v help %q, want %v %q", name, f.GetType(), f.GetHelp(), want.typ, want.help)
		}
		for _, s := range f.GetMetric() {
			if got := labelNames(s); !slices.Equal(got, want.labels) {
				t.Errorf("%s: labels %v, want %v", name, got, want.labels)
			}
		}
	}
	for name, want := range lib {
		f, ok := fams[name]
		if !ok {
			t.Errorf("%s is served by the library's collectors, not by paymock", name)
			continue
		}
		if f.GetType() != want.GetType() || f.GetHelp() != want.GetHelp() {
			t.Errorf("%s: type %v help %q, the library's %v %q", name, f.GetType(), f.GetHelp(), want.GetType(), want.GetHelp())
		}
		if len(f.GetMetric()) != len(want.GetMetric()) {
			t.Errorf("%s: %d series, the library's %d", name, len(f.GetMetric()), len(want.GetMetric()))
			continue
		}
		for i, s := range f.GetMetric() {
			if got, w := labelNames(s), labelNames(want.GetMetric()[i]); !slices.Equal(got, w) {
				t.Errorf("%s: labels %v, the library's %v", name, got, w)
			}
		}
	}
	for name := range fams {
		if _, ok := paymockFamilies[name]; !ok && lib[name] == nil {
			t.Errorf("%s is served but neither paymock's nor the library's", name)
		}
	}
}

func TestExposition_SortsFamiliesAndSeriesAsTheLibraryDoes(t *testing.T) {
	m := metrics.New(metrics.Config{Operations: []string{"retrievePayment", "createPayment", "listPayments"}})
	m.Request("retrievePayment", 404, 0)
	m.Request("createPayment", 400, 0)
	m.Request("createPayment", 201, 0)
	m.Request("listPayments", 999, 0)
	m.Request("nope", 200, 0)
	m.WebhookAttempt("sideways")

	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var names []string
	var requests []string
	for line := range strings.Lines(buf.String()) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(name)[0])
		}
		if strings.HasPrefix(line, "paymock_requests_total{") || strings.HasPrefix(line, "paymock_webhook_attempts_total{") {
			requests = append(requests, strings.Fields(line)[0])
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("families are not sorted by name: %v", names)
	}
	want := []string{
		`paymock_requests_total{operation="createPayment",status="201"}`,
		`paymock_requests_total{operation="createPayment",status="400"}`,
		`paymock_requests_total{operation="listPayments",status="other"}`,
		`paymock_requests_total{operation="other",status="200"}`,
		`paymock_requests_total{operation="retrievePayment",status="404"}`,
		`paymock_webhook_attempts_total{outcome="delivered"}`,
		`paymock_webhook_attempts_total{outcome="failed"}`,
		`paymock_webhook_attempts_total{outcome="interrupted"}`,
		`paymock_webhook_attempts_total{outcome="other"}`,
		`paymock_webhook_attempts_total{outcome="retrying"}`,
	}
	if !slices.Equal(requests, want) {
		t.Errorf("series in the order\n%s\nwant\n%s", strings.Join(requests, "\n"), strings.Join(want, "\n"))
	}
}

func TestRequest_DurationsFillTheLibrarysBuckets(t *testing.T) {
	// The same observations go to a histogram of the client library with
	// the old buckets; every bucket, the count and the sum must match,
	// bounds themselves included (a bucket's bound is "less or equal").
	observations := []time.Duration{0, time.Nanosecond, time.Millisecond, time.Millisecond + 1,
		2500 * time.Microsecond, 3 * time.Millisecond, 10 * time.Millisecond, 99 * time.Millisecond,
		250 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
		10*time.Second + 1, time.Minute}
	lib := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "h",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	m := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	for _, d := range observations {
		lib.Observe(d.Seconds())
		m.Request("createPayment", 200, d)
	}
	var want dto.Metric
	if err := lib.Write(&want); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	got := fams["paymock_request_duration_seconds"].GetMetric()[0].GetHistogram()
	if got.GetSampleCount() != want.GetHistogram().GetSampleCount() {
		t.Errorf("count %d, the library's %d", got.GetSampleCount(), want.GetHistogram().GetSampleCount())
	}
	if math.Abs(got.GetSampleSum()-want.GetHistogram().GetSampleSum()) > 1e-9 {
		t.Errorf("sum %v, the library's %v", got.GetSampleSum(), want.GetHistogram().GetSampleSum())
	}
	wb := want.GetHistogram().GetBucket()
	gb := got.GetBucket()
	// The parser reads +Inf as a bucket; the library's Write leaves it out.
	if len(gb) != len(wb)+1 || gb[len(gb)-1].GetUpperBound() != math.Inf(1) || gb[len(gb)-1].GetCumulativeCount() != got.GetSampleCount() {
		t.Fatalf("%d buckets (last %v), want %d and +Inf holding the count", len(gb), gb[len(gb)-1], len(wb))
	}
	for i := range wb {
		if gb[i].GetUpperBound() != wb[i].GetUpperBound() || gb[i].GetCumulativeCount() != wb[i].GetCumulativeCount() {
			t.Errorf("bucket %d: le=%v %d, the library's le=%v %d", i, gb[i].GetUpperBound(), gb[i].GetCumulativeCount(),
				wb[i].GetUpperBound(), wb[i].GetCumulativeCount())
		}
	}
}

func TestExposition_EscapedLabelValuesRoundTrip(t *testing.T) {
	for _, op := range []string{`quote"d`, `back\slash`, "line\nfeed", `all "\` + "\n" + `" of them \\n`, "ünïcode ✓"} {
		m := metrics.New(metrics.Config{Operations: []string{op}})
		m.Request(op, 200, time.Millisecond)
		fams := scrape(t, m.Handler())
		mustValue(t, fams, 1, "paymock_requests_total", "operation", op, "status", "200")
		mustValue(t, fams, 1, "paymock_request_duration_seconds", "operation", op)
	}
}

// near reports whether a and b are within a factor of each other: figures
// read a moment apart move a little.
func near(a, b, factor float64) bool {
	if a == b {
		return true
	}
	if a <= 0 || b <= 0 {
		return false
	}
	return a/b <= factor && b/a <= factor
}

func TestExposition_GoAndProcessFiguresMeanWhatTheLibrarysMean(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process figures are read from Linux's /proc")
	}
	// No collection between the two reads: one would shrink the live
	// heap's figures between them (the race detector's allocations make
	// one likely).
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	m := metrics.New(metrics.Config{})
	lib := libraryFamilies(t)
	ours := scrape(t, m.Handler())
	// Set by configuration: equal.
	for _, name := range []string{"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads",
		"process_max_fds", "process_virtual_memory_max_bytes", "process_start_time_seconds"} {
		w, _ := value(lib, name)
		if g, ok := value(ours, name); !ok || g != w {
			t.Errorf("%s = %v, the library's %v", name, g, w)
		}
	}
	if g, w := ours["go_info"].GetMetric()[0].GetLabel()[0].GetValue(), lib["go_info"].GetMetric()[0].GetLabel()[0].GetValue(); g != w {
		t.Errorf("go_info version %q, the library's %q", g, w)
	}
	// Sizes and counts of a moment apart: the same magnitude. A figure in
	// the wrong unit (pages for bytes, ticks for seconds) is off by 100 or
	// 4096.
	// Goroutines: ours are counted while the scrape's own test server and
	// client run (its accept loop, the connection's, the client's read and
	// write loops), so a few more than the library's, which no factor
	// bounds when the library counts three.
	w, _ := value(lib, "go_goroutines")
	if g, ok := value(ours, "go_goroutines"); !ok || math.Abs(g-w) > 6 && !near(g, w, 2) {
		t.Errorf("go_goroutines = %v, the library's %v", g, w)
	}
	for _, name := range []string{"go_threads", "go_memstats_alloc_bytes", "go_memstats_heap_alloc_bytes",
		"go_memstats_heap_inuse_bytes", "go_memstats_heap_sys_bytes", "go_memstats_sys_bytes", "go_memstats_next_gc_bytes",
		"go_memstats_stack_inuse_bytes", "go_memstats_stack_sys_bytes", "go_memstats_mspan_sys_bytes", "go_memstats_gc_sys_bytes",
		"go_memstats_mallocs_total", "go_memstats_alloc_bytes_total", "go_memstats_heap_objects",
		"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds"} {
		w, _ := value(lib, name)
		if g, ok := value(ours, name); !ok || !near(g, w, 2) {
			t.Errorf("%s = %v, the library's %v", name, g, w)
		}
	}
	// CPU seconds, not ticks: at most a second more than the library's
	// read a moment before.
	w, _ = value(lib, "process_cpu_seconds_total")
	if g, _ := value(ours, "process_cpu_seconds_total"); g > w+1 {
		t.Errorf("process_cpu_seconds_total = %v, the library's %v a moment before", g, w)
	}
	// Read after the library's: never less, for what only grows.
	for _, name := range []string{"go_memstats_mallocs_total", "go_memstats_alloc_bytes_total", "process_cpu_seconds_total",
		"go_gc_duration_seconds", "process_network_receive_bytes_total"} {
		w, _ := value(lib, name)
		if g, ok := value(ours, name); !ok || g < w {
			t.Errorf("%s = %v, less than the library's %v read before it", name, g, w)
		}
	}
}
