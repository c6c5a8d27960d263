// The webhook outbox's journal stays bounded per merchant.

package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/webhooks"
)

func outboxEvent(merchantID string, i int) webhooks.Outgoing {
	id := fmt.Sprintf("evt_%s_%03d", merchantID, i)
	return webhooks.Outgoing{Event: paymock.Event{ID: id, Type: paymock.EventCompleted, MerchantID: merchantID,
		CreatedAt: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC), Body: []byte(`{"id":"` + id + `"}`),
		Payment: paymock.Payment{ID: fmt.Sprintf("pay_%03d", i)}}}
}

func TestTrimEvents_KeepsTheNewestAndThoseStillPending(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, Config{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 6 {
		o := outboxEvent("acme", i)
		if i == 1 { // an old event with a delivery still to send
			o.Deliveries = []webhooks.Delivery{{URL: "http://127.0.0.1:1/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
				State: webhooks.StatePending, NextAt: time.Now().Add(time.Hour)}}
		}
		if _, err := st.AddEvent(ctx, o); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddEvent(ctx, outboxEvent("globex", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.TrimEvents(ctx, "acme", 2); err != nil {
		t.Fatal(err)
	}
	recs, total, err := st.Events(ctx, "acme", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if want := []string{"evt_acme_005", "evt_acme_004", "evt_acme_001"}; total != 3 || fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("after a trim to 2: %d events %v, want %v", total, ids, want)
	}
	if _, total, _ := st.Events(ctx, "globex", 0, 0); total != 6 {
		t.Errorf("another merchant's journal holds %d events after acme's trim, want 6", total)
	}
	if err := st.TrimEvents(ctx, "acme", 0); err == nil {
		t.Error("a trim keeping nothing was taken")
	}
}

func TestDispatcher_KeepsAnOutboxJournalNearMaxEvents(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, Config{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := webhooks.New(webhooks.Config{Outbox: st, MaxEvents: 10})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	defer d.Close(ctx)
	m := &paymock.Merchant{ID: "acme"}
	for i := range 250 {
		if err := d.Publish(ctx, m, outboxEvent("acme", i).Event); err != nil {
			t.Fatal(err)
		}
	}
	_, total, err := d.EventsContext(ctx, "acme", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if total > 10+100 || total < 10 {
		t.Errorf("250 events published with MaxEvents 10 left %d; want between 10 and 110 (a trim every 100 publishes)", total)
	}
}
