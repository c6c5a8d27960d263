// The PostgreSQL outbox passes the outbox and event store conformance
// suites, and a Dispatcher on it keeps each journal near MaxEvents and
// MaxDeliveries.

package postgres

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/outboxtest"
	"github.com/paymock/paymock/webhooks"
)

func TestOutbox_Conformance(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) paymock.Outbox {
		s, _ := openStore(t)
		return s
	})
}

func TestOutbox_EventStoreConformance(t *testing.T) {
	outboxtest.RunEventStore(t, func(t *testing.T) paymock.Backend {
		s, _ := openStore(t)
		return s.Backend()
	})
}

func TestDispatcher_KeepsAnOutboxJournalNearMaxEvents(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	d, err := webhooks.New(webhooks.Config{Outbox: st, MaxEvents: 10})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	defer d.Close(ctx)
	m := &paymock.Merchant{ID: "acme"}
	for i := range 250 {
		id := fmt.Sprintf("evt_acme_%03d", i)
		ev := paymock.Event{ID: id, Type: paymock.EventCompleted, MerchantID: "acme",
			CreatedAt: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC), Body: []byte(`{"id":"` + id + `"}`)}
		if err := d.Publish(ctx, m, ev); err != nil {
			t.Fatal(err)
		}
	}
	_, total, err := d.Events(ctx, "acme", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if total > 10+100 || total < 10 {
		t.Errorf("250 events published with MaxEvents 10 left %d; want between 10 and 110 (a trim every 100 publishes)", total)
	}
}

func TestDispatcher_KeepsAnOutboxJournalNearMaxDeliveries(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rcv.Close()
	d, err := webhooks.New(webhooks.Config{Outbox: st, MaxDeliveries: 100})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	defer d.Close(ctx)
	ep := paymock.WebhookEndpoint{URL: rcv.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	m := &paymock.Merchant{ID: "acme", Webhooks: []paymock.WebhookEndpoint{ep, ep}}
	// 20 events of 20 rounds to 2 endpoints (800 deliveries), then one
	// more event: its store is the merchant's fifth trim.
	for i := range 21 {
		id := fmt.Sprintf("evt_acme_%03d", i)
		ev := paymock.Event{ID: id, Type: paymock.EventCompleted, MerchantID: "acme",
			CreatedAt: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC), Body: []byte(`{"id":"` + id + `"}`)}
		if err := d.Publish(ctx, m, ev); err != nil {
			t.Fatal(err)
		}
		rounds := 20
		if i == 20 {
			rounds = 1
		}
		for range rounds - 1 {
			if _, err := d.Redeliver(ctx, "acme", id); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Idle(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
	}
	recs, total, err := d.Events(ctx, "acme", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, r := range recs {
		held += len(r.Deliveries)
	}
	if held > 100 || total >= 21 {
		t.Errorf("21 events of up to 20 rounds to 2 endpoints with MaxDeliveries 100 left %d events holding %d deliveries; want at most 100",
			total, held)
	}
}
