// Tests scrape the handler over loopback HTTP and read the answer with
// Prometheus's own text parser, as a Prometheus server would.

package metrics_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/paymock/paymock/metrics"
)

// scrape fetches /metrics from a loopback server and parses it.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("scrape: Content-Type %q, want the Prometheus text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels are exactly
// labels (name, value pairs); found is false when there is no such series.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, found bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		match := true
		for _, lp := range m.GetLabel() {
			if want[lp.GetName()] != lp.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: no such series", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func mustBeAbsent(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) {
	t.Helper()
	if v, ok := value(fams, name, labels...); ok {
		t.Errorf("%s%v = %v, want no such series", name, labels, v)
	}
}

func TestRequest_CountsByOperationAndStatus(t *testing.T) {
	m := metrics.New(metrics.Config{Operations: []string{"createPayment", "retrievePayment", "createPayment"}})
	m.Request("createPayment", 201, 3*time.Millisecond)
	m.Request("createPayment", 201, 4*time.Millisecond)
	m.Request("createPayment", 400, time.Millisecond)
	m.Request("retrievePayment", 404, time.Millisecond)
	m.Request("noSuchOperation", 200, time.Millisecond)
	m.Request("", 404, time.Millisecond)
	m.Request("createPayment", 999, time.Millisecond) // net/http allows up to 999
	m.Request("createPayment", 0, time.Millisecond)

	fams := scrape(t, m.Handler())
	const reqs = "paymock_requests_total"
	mustValue(t, fams, 2, reqs, "operation", "createPayment", "status", "201")
	mustValue(t, fams, 1, reqs, "operation", "createPayment", "status", "400")
	mustValue(t, fams, 1, reqs, "operation", "retrievePayment", "status", "404")
	mustValue(t, fams, 1, reqs, "operation", "other", "status", "200")
	mustValue(t, fams, 1, reqs, "operation", "other", "status", "404")
	mustValue(t, fams, 2, reqs, "operation", "createPayment", "status", "other")
	mustBeAbsent(t, fams, reqs, "operation", "noSuchOperation", "status", "200")
	mustBeAbsent(t, fams, reqs, "operation", "retrievePayment", "status", "200")
	if n := len(fams[reqs].GetMetric()); n != 6 {
		t.Errorf("%s has %d series, want 6 (only those that happened)", reqs, n)
	}

	const dur = "paymock_request_duration_seconds"
	mustValue(t, fams, 5, dur, "operation", "createPayment")
	mustValue(t, fams, 1, dur, "operation", "retrievePayment")
	mustValue(t, fams, 2, dur, "operation", "other")
	for _, mm := range fams[dur].GetMetric() {
		if mm.GetLabel()[0].GetValue() != "createPayment" {
			continue
		}
		if got, want := mm.GetHistogram().GetSampleSum(), 0.010; got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%s{createPayment} sum = %v, want %v", dur, got, want)
		}
	}
}

func TestCounters_CountExactlyAndFoldUnknownValues(t *testing.T) {
	m := metrics.New(metrics.Config{})
	m.ContractViolation("request")
	m.ContractViolation("request")
	m.ContractViolation("response")
	m.ContractViolation("sideways")
	m.WebhookAttempt("retrying")
	m.WebhookAttempt("retrying")
	m.WebhookAttempt("delivered")
	m.WebhookAttempt("failed")
	for range 5 {
		m.EventCreated()
	}
	m.EventFinished("delivered")
	m.EventFinished("delivered")
	m.EventFinished("failed")
	m.InjectedFault("api")
	m.InjectedFault("webhooks")
	m.InjectedFault("webhooks")

	fams := scrape(t, m.Handler())
	tests := []struct {
		want   float64
		name   string
		labels []string
	}{
		{2, "paymock_contract_violations_total", []string{"side", "request"}},
		{1, "paymock_contract_violations_total", []string{"side", "response"}},
		{1, "paymock_contract_violations_total", []string{"side", "other"}},
		{2, "paymock_webhook_attempts_total", []string{"outcome", "retrying"}},
		{1, "paymock_webhook_attempts_total", []string{"outcome", "delivered"}},
		{1, "paymock_webhook_attempts_total", []string{"outcome", "failed"}},
		{0, "paymock_webhook_attempts_total", []string{"outcome", "interrupted"}},
		{5, "paymock_webhook_events_created_total", nil},
		{2, "paymock_webhook_events_finished_total", []string{"state", "delivered"}},
		{1, "paymock_webhook_events_finished_total", []string{"state", "failed"}},
		{0, "paymock_webhook_events_finished_total", []string{"state", "interrupted"}},
		{1, "paymock_injected_faults_total", []string{"target", "api"}},
		{2, "paymock_injected_faults_total", []string{"target", "webhooks"}},
	}
	for _, tt := range tests {
		mustValue(t, fams, tt.want, tt.name, tt.labels...)
	}
	mustBeAbsent(t, fams, "paymock_contract_violations_total", "side", "sideways")
	// "other" appears only once something unknown was counted.
	mustBeAbsent(t, fams, "paymock_webhook_attempts_total", "outcome", "other")
}

func TestGauges_ReadCallbacksAtEachScrape(t *testing.T) {
	var mu sync.Mutex
	merchants, payments := 3, 10
	m := metrics.New(metrics.Config{
		Merchants:      func() int { mu.Lock(); defer mu.Unlock(); return merchants },
		StoredPayments: func() int { mu.Lock(); defer mu.Unlock(); return payments },
		// ScheduledTimers left nil: its gauge is left out.
	})
	fams := scrape(t, m.Handler())
	mustValue(t, fams, 3, "paymock_merchants")
	mustValue(t, fams, 10, "paymock_stored_payments")
	if _, ok := fams["paymock_scheduled_timers"]; ok {
		t.Error("paymock_scheduled_timers is served although its callback is nil")
	}

	mu.Lock()
	merchants, payments = 4, 0
	mu.Unlock()
	fams = scrape(t, m.Handler())
	mustValue(t, fams, 4, "paymock_merchants")
	mustValue(t, fams, 0, "paymock_stored_payments")
}

func TestHandler_ServesRuntimeAndProcessFigures(t *testing.T) {
	m := metrics.New(metrics.Config{ScheduledTimers: func() int { return 7 }})
	fams := scrape(t, m.Handler())
	mustValue(t, fams, 7, "paymock_scheduled_timers")
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes"} {
		v, ok := value(fams, name)
		if !ok {
			t.Errorf("%s is not served", name)
			continue
		}
		if v <= 0 {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
}

func TestNew_EachSandboxHasItsOwnRegistry(t *testing.T) {
	// Two in one process must neither panic on duplicate registration nor
	// share counts.
	a := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	b := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	a.Request("createPayment", 201, 0)
	mustValue(t, scrape(t, a.Handler()), 1, "paymock_requests_total", "operation", "createPayment", "status", "201")
	if _, ok := scrape(t, b.Handler())["paymock_requests_total"]; ok {
		t.Error("a request counted on one Metrics shows on another")
	}
	if _, ok := scrape(t, a.Handler())["paymock_requests_total"]; !ok {
		t.Error("a second scrape lost the count")
	}
}

func TestNilMetrics_DoesNothingAndServes404(t *testing.T) {
	var m *metrics.Metrics
	m.Request("createPayment", 200, time.Millisecond)
	m.ContractViolation("request")
	m.WebhookAttempt("delivered")
	m.EventCreated()
	m.EventFinished("delivered")
	m.InjectedFault("api")
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404 when metrics are off", res.StatusCode)
	}
}

func TestRequest_ConcurrentCallsLoseNothing(t *testing.T) {
	m := metrics.New(metrics.Config{Operations: []string{"listPayments"}})
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				// Half the calls race to make the same new series.
				m.Request("listPayments", 200+(i+w)%2, time.Microsecond)
				m.EventCreated()
			}
		})
	}
	wg.Wait()
	fams := scrape(t, m.Handler())
	mustValue(t, fams, workers*each/2, "paymock_requests_total", "operation", "listPayments", "status", "200")
	mustValue(t, fams, workers*each/2, "paymock_requests_total", "operation", "listPayments", "status", "201")
	mustValue(t, fams, workers*each, "paymock_webhook_events_created_total")
}

func TestRequest_AllocatesNothingOnceASeriesExists(t *testing.T) {
	m := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	m.Request("createPayment", 201, time.Millisecond)
	m.Request("unknown", 201, time.Millisecond)
	allocs := testing.AllocsPerRun(1000, func() {
		m.Request("createPayment", 201, time.Millisecond)
		m.Request("unknown", 201, time.Millisecond)
		m.ContractViolation("request")
		m.WebhookAttempt("retrying")
		m.EventCreated()
		m.EventFinished("failed")
		m.InjectedFault("api")
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

func BenchmarkRequest(b *testing.B) {
	ops := []string{"createPayment", "listPayments", "retrievePayment", "completePayment", "failPayment", "expirePayment"}
	m := metrics.New(metrics.Config{Operations: ops})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.Request(ops[i%len(ops)], 200+i%2, time.Millisecond)
			i++
		}
	})
}

func BenchmarkWebhookAttempt(b *testing.B) {
	m := metrics.New(metrics.Config{})
	b.ReportAllocs()
	for b.Loop() {
		m.WebhookAttempt("retrying")
	}
}

func BenchmarkRequestSerial(b *testing.B) {
	m := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	b.ReportAllocs()
	for b.Loop() {
		m.Request("createPayment", 201, time.Millisecond)
	}
}

func TestWriteTo_WritesWhatAScrapeServes(t *testing.T) {
	m := metrics.New(metrics.Config{Operations: []string{"createPayment"}})
	m.Request("createPayment", 201, time.Millisecond)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	mustValue(t, fams, 1, "paymock_requests_total", "operation", "createPayment", "status", "201")
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "paymock_webhook_attempts_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s is not written", name)
		}
	}
}

func TestHandler_TurnsAwayScrapesBeyondEight(t *testing.T) {
	// Eight scrapes are held inside a gauge's callback; a ninth arrives
	// while they are, and must be refused rather than queued.
	entered := make(chan struct{})
	release := make(chan struct{})
	var released atomic.Bool
	m := metrics.New(metrics.Config{Merchants: func() int {
		if !released.Load() {
			entered <- struct{}{}
			<-release
		}
		return 1
	}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for range 8 {
		wg.Go(func() {
			res, err := srv.Client().Get(srv.URL + "/metrics")
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			codes <- res.StatusCode
		})
	}
	for range 8 {
		<-entered
	}

	res, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ninth scrape: status %d, want 503", res.StatusCode)
	}
	var shape struct {
		Error struct{ Type, Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &shape); err != nil || shape.Error.Type != "api_error" || shape.Error.Message == "" {
		t.Errorf("ninth scrape: body %q is not the API's error shape (%v)", body, err)
	}

	released.Store(true)
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("a held scrape got %d, want 200", c)
		}
	}
	// With the eight done, a scrape is served again.
	scrape(t, m.Handler())
}
