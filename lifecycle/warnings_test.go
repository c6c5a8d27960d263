// Tests that the warning of an unknown metadata.scenario is bounded in rate and size per merchant.

package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/webhooks"
)

// realTime is a real-time source that moves only when the test says.
type realTime struct {
	mu  sync.Mutex
	now time.Time
}

func (r *realTime) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *realTime) sleep(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(d)
}

// logSink is a slog.Handler's buffer, safe for the engine's goroutines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// warnings are the WARN records logged so far, each as its JSON fields.
func (s *logSink) warnings(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(s.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] == "WARN" {
			out = append(out, rec)
		}
	}
	return out
}

// newLoggedEngine is an engine over the memory backend on frozen clocks,
// logging to w, whose real time is rt's.
func newLoggedEngine(t testing.TB, w io.Writer, rt *realTime) (*Engine, paymock.Backend) {
	t.Helper()
	b := memory.New()
	clocks, err := NewClocks(ClockConfig{Mode: ClockFrozen, Start: t0, Now: rt.Now, Store: b.Clocks})
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := webhooks.New(webhooks.Config{Outbox: b.Outbox})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Close(context.Background()) })
	e, err := NewEngine(Config{
		Logger: slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Store:  b.Payments, Clocks: clocks, Scheduler: NewScheduler(clocks), Due: b.Due, Advances: b.Advances,
		IDs: paymock.NewMerchantIDs(nil, b.Sequences, b.Merchants), Webhooks: hooks, Events: b.Events,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, b
}

// create stores a pending payment of m and tells the engine, as a create
// request does, with metadata.scenario set to scenario.
func create(t testing.TB, e *Engine, b paymock.Backend, m *paymock.Merchant, n int, scenario string) {
	t.Helper()
	ctx := context.Background()
	p := paymock.Payment{ID: fmt.Sprintf("pay_%s_%06d", m.ID, n), MerchantID: m.ID, Amount: 1050, Currency: "EUR",
		Status: paymock.StatusPending, CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := b.Payments.Insert(ctx, p, -1); err != nil {
		t.Fatalf("insert %s: %v", p.ID, err)
	}
	e.Created(ctx, m, p, Trigger{MetadataScenario: scenario})
}

// warned is what a test expects of one WARN record; a zero count or
// length is an attribute that must be absent.
type warned struct {
	merchant   string
	scenario   string
	bytes      int // scenario_truncated_from_bytes
	suppressed int
}

func TestCreated_UnknownScenarioWarnsAtMostOncePerMerchantPerMinute(t *testing.T) {
	long := strings.Repeat("x", 10*1024)
	// Two bytes each after one: the 64th byte starts the 33rd "é".
	accents := "a" + strings.Repeat("é", 5000)
	// step is some creates of one merchant, after sleeping so long.
	type step struct {
		sleep    time.Duration
		merchant string
		scenario string
		creates  int
	}
	tests := []struct {
		name  string
		steps []step
		want  []warned
	}{
		{"a flood from one merchant logs one warning in the minute",
			[]step{{0, "acme", "nope", 1000}},
			[]warned{{merchant: "acme", scenario: "nope"}}},
		{"another merchant still gets its own warning",
			[]step{{0, "acme", "nope", 1000}, {0, "globex", "nope", 1000}},
			[]warned{{merchant: "acme", scenario: "nope"}, {merchant: "globex", scenario: "nope"}}},
		{"a 10 kB value is cut to 64 bytes and says how long it was",
			[]step{{0, "acme", long, 1}},
			[]warned{{merchant: "acme", scenario: long[:64], bytes: 10 * 1024}}},
		{"a value is cut where a character starts",
			[]step{{0, "acme", accents, 1}},
			[]warned{{merchant: "acme", scenario: accents[:63], bytes: 10001}}},
		{"a value of 64 bytes is whole",
			[]step{{0, "acme", long[:64], 1}},
			[]warned{{merchant: "acme", scenario: long[:64]}}},
		{"the next warning after the minute counts those held back",
			[]step{{0, "acme", "nope", 1000}, {59 * time.Second, "acme", "nope", 1}, {time.Second, "acme", "typo", 1}},
			[]warned{{merchant: "acme", scenario: "nope"}, {merchant: "acme", scenario: "typo", suppressed: 1000}}},
		{"a merchant quiet for a minute is warned at once with nothing held back",
			[]step{{0, "acme", "nope", 1}, {time.Minute, "acme", "nope", 1}},
			[]warned{{merchant: "acme", scenario: "nope"}, {merchant: "acme", scenario: "nope"}}},
		{"a known scenario warns of nothing",
			[]step{{0, "acme", "complete_after_5s", 1000}},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sink logSink
			rt := &realTime{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
			e, b := newLoggedEngine(t, &sink, rt)
			n := 0
			for _, s := range tc.steps {
				rt.sleep(s.sleep)
				m := &paymock.Merchant{ID: s.merchant}
				for range s.creates {
					n++
					create(t, e, b, m, n, s.scenario)
				}
			}
			got := sink.warnings(t)
			if len(got) != len(tc.want) {
				t.Fatalf("%d WARN records, want %d: the first %v", len(got), len(tc.want), got[:min(len(got), 2)])
			}
			for i, w := range tc.want {
				checkWarned(t, got[i], w)
			}
		})
	}
}

// checkWarned fails the test unless rec is the warning w describes.
func checkWarned(t *testing.T, rec map[string]any, w warned) {
	t.Helper()
	if rec["msg"] != "metadata.scenario names no scenario; the payment waits for an outcome" {
		t.Errorf("message %q", rec["msg"])
	}
	if rec["merchant"] != w.merchant {
		t.Errorf("merchant %v, want %s", rec["merchant"], w.merchant)
	}
	s, _ := rec["scenario"].(string)
	if s != w.scenario || !utf8.ValidString(s) {
		t.Errorf("scenario %q (%d bytes), want %q (%d bytes)", s, len(s), w.scenario, len(w.scenario))
	}
	for key, want := range map[string]int{"scenario_truncated_from_bytes": w.bytes, "suppressed": w.suppressed} {
		got, present := rec[key]
		switch {
		case want == 0 && present:
			t.Errorf("%s = %v, want none", key, got)
		case want != 0 && got != float64(want):
			t.Errorf("%s = %v, want %d", key, got, want)
		}
	}
	if rec["payment"] == nil {
		t.Error("the warning names no payment")
	}
}

func TestWarnLimit_TracksABoundedNumberOfMerchantsAndCountsTheRest(t *testing.T) {
	// call is one warning asked for, after sleeping so long, and what
	// allow answers.
	type call struct {
		sleep                 time.Duration
		merchant              string
		ok                    bool
		suppressed, untracked int
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"past two merchants a third is held back until the first two can be forgotten", []call{
			{0, "a", true, 0, 0},
			{0, "b", true, 0, 0},
			{30 * time.Second, "c", false, 0, 0},
			{0, "a", false, 0, 0},
			{29 * time.Second, "d", false, 0, 0},
			// a's held-back one is forgotten with a, so counted untracked.
			{time.Second, "c", true, 0, 3},
			{0, "a", true, 0, 0},
			{0, "e", false, 0, 0},
			{time.Minute, "e", true, 0, 1},
		}},
		{"a tracked merchant keeps its own count whatever the others do", []call{
			{0, "a", true, 0, 0},
			{0, "a", false, 0, 0},
			{0, "b", true, 0, 0},
			{0, "c", false, 0, 0},
			{0, "a", false, 0, 0},
			{time.Minute, "a", true, 2, 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &realTime{now: t0}
			w := newWarnLimit(rt.Now, time.Minute, 2)
			for i, c := range tc.calls {
				rt.sleep(c.sleep)
				ok, suppressed, untracked := w.allow(c.merchant)
				if ok != c.ok || suppressed != c.suppressed || untracked != c.untracked {
					t.Errorf("call %d (%s): allow = %v, %d, %d; want %v, %d, %d",
						i+1, c.merchant, ok, suppressed, untracked, c.ok, c.suppressed, c.untracked)
				}
			}
		})
	}
}

func TestWarnLimit_ConcurrentWarningsLetOneThroughAndCountTheRest(t *testing.T) {
	rt := &realTime{now: t0}
	w := newWarnLimit(rt.Now, time.Minute, warnMerchants)
	var wg sync.WaitGroup
	var mu sync.Mutex
	let := 0
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if ok, _, _ := w.allow("acme"); ok {
					mu.Lock()
					let++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	rt.sleep(time.Minute)
	ok, suppressed, _ := w.allow("acme")
	if let != 1 || !ok || suppressed != 8*500-1 {
		t.Errorf("%d let through in the minute, then %v with %d held back; want 1, then true with %d", let, ok, suppressed, 8*500-1)
	}
}

// BenchmarkCreated_UnknownScenarioFromOneMerchant is what a create costs
// the engine when its metadata.scenario (1 kB) names nothing, logged as
// JSON: a merchant's flood of them. log-B/op is what reaches the log.
func BenchmarkCreated_UnknownScenarioFromOneMerchant(b *testing.B) {
	rt := &realTime{now: t0}
	var logged countingWriter
	e, _ := newLoggedEngine(b, &logged, rt)
	m := &paymock.Merchant{ID: "acme"}
	p := paymock.Payment{ID: "pay_1", MerchantID: m.ID, Status: paymock.StatusPending, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	tr := Trigger{MetadataScenario: strings.Repeat("x", 1024)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e.Created(ctx, m, p, tr)
	}
	b.ReportMetric(float64(logged.n)/float64(b.N), "log-B/op")
}

// countingWriter counts what is written to it and keeps none of it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
