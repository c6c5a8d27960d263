package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

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
