package webhooks

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
)

// BenchmarkDeliver publishes b.N events, each of its own payment, to a
// local receiver that answers 204, and waits until all are delivered:
// ns/op is the cost of one delivery end to end (sign, queue, POST over
// loopback, journal), so 1e9/ns_op is deliveries per second.
func BenchmarkDeliver(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	clock := newFakeClock()
	d := newDispatcher(b, clock, Config{})
	m := merchant("acme", paymock.WebhookEndpoint{URL: srv.URL, Secret: testSecret})
	evs := make([]paymock.Event, b.N)
	for i := range evs {
		evs[i] = event(b, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for _, ev := range evs {
		if err := d.Publish(ctx, m, ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Idle(ctx, "acme"); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkPublishToVerified measures one delivery's latency, from Publish
// to a receiver having verified it with the Standard Webhooks library, one
// event at a time; p50 and p99 are reported as metrics. With answering
// set, the publishing goroutine stays busy that long after Publish, as an
// API call writing its answer does: how soon an idle processor starts the
// sender then decides the figure.
func BenchmarkPublishToVerified(b *testing.B) {
	for _, answering := range []time.Duration{0, 100 * time.Microsecond} {
		b.Run("answering="+answering.String(), func(b *testing.B) {
			wh, err := standardwebhooks.NewWebhook(testSecret)
			if err != nil {
				b.Fatal(err)
			}
			verified := make(chan time.Time, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if err := wh.Verify(body, r.Header); err != nil {
					b.Errorf("delivery does not verify: %v", err)
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				verified <- time.Now()
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			d := newDispatcher(b, newFakeClock(), Config{})
			m := merchant("acme", paymock.WebhookEndpoint{URL: srv.URL, Secret: testSecret})
			ctx := context.Background()
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ev := event(b, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i))
				b.StartTimer()
				start := time.Now()
				if err := d.Publish(ctx, m, ev); err != nil {
					b.Fatal(err)
				}
				for time.Since(start) < answering {
				}
				lat = append(lat, (<-verified).Sub(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkSendPath is BenchmarkDeliver against a receiver that allocates
// nothing per request (it reads the request off the connection and
// answers fixed bytes), so that allocs/op and B/op are the dispatcher's
// own per delivery: Publish (the API call's share) and the send (claim,
// sign, post over a kept-alive connection, record).
func BenchmarkSendPath(b *testing.B) {
	addr, received := rawReceiver(b)
	d := newDispatcher(b, newFakeClock(), Config{})
	m := merchant("acme", paymock.WebhookEndpoint{URL: "http://" + addr, Secret: testSecret})
	evs := make([]paymock.Event, b.N)
	for i := range evs {
		evs[i] = event(b, "acme", fmt.Sprintf("evt_%d", i), fmt.Sprintf("pay_%d", i))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for _, ev := range evs {
		if err := d.Publish(ctx, m, ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Idle(ctx, "acme"); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if n := received(); n != b.N {
		b.Fatalf("receiver got %d requests, want %d", n, b.N)
	}
}

// rawReceiver listens on loopback and answers every HTTP/1.1 request with
// a 204, reading it into per-connection buffers: no allocation a request.
// It returns its address and a count of the requests it has read.
func rawReceiver(b *testing.B) (string, func() int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	counts := make(chan int, 64)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() {
				n := 0
				defer func() { counts <- n }()
				r := bufio.NewReaderSize(c, 16<<10)
				answer := []byte("HTTP/1.1 204 No Content\r\n\r\n")
				for {
					length := -1
					for {
						line, err := r.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 { // the blank line ending the head
							break
						}
						if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
							length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
						}
					}
					if length < 0 {
						return
					}
					if _, err := r.Discard(length); err != nil {
						return
					}
					n++
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() int {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
		total := 0
		for range conns {
			total += <-counts
		}
		return total
	}
}
