package webhooks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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
