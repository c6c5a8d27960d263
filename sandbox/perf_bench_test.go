// Benchmarks of the figures issue 15 sets targets for: list at a thousand
// and a million stored, start, bytes per stored payment and per idle
// merchant.

package sandbox

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/paymock/paymock/lifecycle"
)

// benchSandbox is a frozen-clock sandbox with the binary's defaults
// (journal and metrics on) and its store.
func benchSandbox(b *testing.B) (*Sandbox, http.Handler) {
	b.Helper()
	// A cap past any run's creates (BenchmarkStoredPaymentBytes makes
	// 20,000 for one merchant); its check is still measured.
	sb, err := New(Config{Clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart},
		JournalSize: DefaultJournalSize, Metrics: true, MaxPayments: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	return sb, sb.Handler()
}

// fillStore stores n payments of the merchant of keyA, made by one real
// create and copied with fresh ids: a million creates through the chain
// would take minutes.
func fillStore(b *testing.B, sb *Sandbox, s http.Handler, n int) {
	b.Helper()
	body, _ := json.Marshal(validCreate())
	id := benchCreate(b, s, body)
	m, err := sb.Merchants().Authenticate(b.Context(), keyA)
	if err != nil {
		b.Fatal(err)
	}
	p, err := sb.Store().Get(context.Background(), m.ID, id)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n - 1 {
		p.ID = fmt.Sprintf("pay_%024d", i)
		p.CheckoutURL = "http://localhost:8080/checkout/" + p.ID
		if err := sb.Store().Insert(context.Background(), p, -1); err != nil {
			b.Fatal(err)
		}
	}
}

func benchListPage(b *testing.B, stored int) {
	sb, s := benchSandbox(b)
	fillStore(b, sb, s, stored)
	// The middle of the store: no page is cheaper for being near an end.
	path := fmt.Sprintf("/api/v1/payments?page=%d&per_page=10", stored/20)
	// The fill's garbage is collected before the clock starts: a million
	// inserts leave a collection running that would otherwise land on the
	// first pages timed, whatever a page costs. (Not debug.FreeOSMemory:
	// pages handed back to the system fault in again on every page timed,
	// which a long-running binary does not see.)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, benchRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("list: %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkListPage lists a page of 10 out of 1,000 stored.
func BenchmarkListPage(b *testing.B) { benchListPage(b, 1000) }

// BenchmarkListPage_Million lists a page of 10 out of 1,000,000 stored;
// it runs only when -bench names it (Million), never in a plain run: the
// store takes a while to fill and about a gigabyte.
func BenchmarkListPage_Million(b *testing.B) {
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), "Million") {
		b.Skip("run with -bench ListPage_Million")
	}
	benchListPage(b, 1_000_000)
}

// BenchmarkStart builds a sandbox, serves it on loopback and waits for its
// first healthy answer: the in-process part of starting the binary.
func BenchmarkStart(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sb, err := New(Config{JournalSize: DefaultJournalSize, Metrics: true})
		if err != nil {
			b.Fatal(err)
		}
		sb.Start()
		ts := httptest.NewServer(sb.Handler())
		resp, err := ts.Client().Get(ts.URL + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("healthz: %v %v", resp, err)
		}
		resp.Body.Close()
		ts.Close()
		if err := sb.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// heapProfile writes the live heap to $PAYMOCK_HEAPPROFILE/<benchmark>.heap
// when that is set: -memprofile is written after the benchmark has let go
// of its sandbox, so it cannot say where a measured byte is.
func heapProfile(b *testing.B) {
	dir := os.Getenv("PAYMOCK_HEAPPROFILE")
	if dir == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "_")+".heap"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStoredPaymentBytes creates payments through the whole chain
// (journal on) and reports the live heap each one adds: the payment, its
// index entries, its pending expiry timer and its journal entry share
// (the journal is bounded, so past its size it adds nothing).
func BenchmarkStoredPaymentBytes(b *testing.B) {
	const n = 20_000
	body, _ := json.Marshal(validCreate())
	for b.Loop() {
		b.StopTimer()
		_, s := benchSandbox(b)
		benchCreate(b, s, body) // the merchant and its book exist
		before := liveHeap()
		b.StartTimer()
		for range n {
			benchCreate(b, s, body)
		}
		b.StopTimer()
		b.ReportMetric(float64(liveHeap()-before)/n, "B/payment")
		heapProfile(b)
		runtime.KeepAlive(s)
		b.StartTimer()
	}
}

// BenchmarkIdleMerchantBytes reports the live heap an open-mode merchant
// keeps after one list call, once idle.
func BenchmarkIdleMerchantBytes(b *testing.B) {
	const n = 5_000
	for b.Loop() {
		b.StopTimer()
		_, s := benchSandbox(b)
		before := liveHeap()
		b.StartTimer()
		for i := range n {
			r := httptest.NewRequest("GET", "/api/v1/payments", nil)
			r.Header.Set("Authorization", fmt.Sprintf("Bearer sk_test_idle_%08d", i))
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("list: %d %s", w.Code, w.Body)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(liveHeap()-before)/n, "B/merchant")
		heapProfile(b)
		runtime.KeepAlive(s)
		b.StartTimer()
	}
}

// BenchmarkEvictedMerchantBytes reports the live heap an open-mode token
// leaves once it has created a payment, reset, and been evicted at the
// merchant cap: what one client churning new tokens can make the server
// keep. Everything of an evicted merchant goes, so it should be about 0.
func BenchmarkEvictedMerchantBytes(b *testing.B) {
	const limit, n = 100, 5_000
	body, _ := json.Marshal(validCreate())
	churn := func(b *testing.B, s http.Handler, from, to int) {
		for i := from; i < to; i++ {
			key := fmt.Sprintf("Bearer sk_test_churn_%08d", i)
			for _, r := range []*http.Request{
				httptest.NewRequest("POST", "/api/v1/payments", strings.NewReader(string(body))),
				httptest.NewRequest("POST", "/_sandbox/reset", nil),
			} {
				r.Header.Set("Authorization", key)
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				if w.Code >= 300 {
					b.Fatalf("%s %s: %d %s", r.Method, r.URL.Path, w.Code, w.Body)
				}
			}
		}
	}
	for b.Loop() {
		b.StopTimer()
		sb, err := New(Config{Clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart},
			JournalSize: DefaultJournalSize, Metrics: true, MaxMerchants: limit})
		if err != nil {
			b.Fatal(err)
		}
		s := sb.Handler()
		churn(b, s, 0, 2*limit) // the cap is full, and evicting
		before := liveHeap()
		b.StartTimer()
		churn(b, s, 2*limit, 2*limit+n)
		b.StopTimer()
		b.ReportMetric(float64(int64(liveHeap())-int64(before))/n, "B/evicted-merchant")
		heapProfile(b)
		runtime.KeepAlive(sb)
		b.StartTimer()
	}
}
