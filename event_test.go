// Tests of the events' bodies.

package paymock

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestNewEvent_WritesWhatEncodingJSONWrites compares each event body with
// encoding/json's of the same fields, for plain and escaped ids and types
// and payments whose wire form is written by hand or by encoding/json.
func TestNewEvent_WritesWhatEncodingJSONWrites(t *testing.T) {
	card := &PaymentMethod{Type: "card", Card: CardSummary{Brand: "visa", Last4: "4242", ExpiryMonth: 12, ExpiryYear: 2030}}
	at := time.Date(2026, 11, 24, 4, 0, 30, 500, time.UTC)
	for _, tc := range []struct {
		name   string
		id     string
		typ    EventType
		at     time.Time
		change func(*Payment)
	}{
		{"plain", "evt_eX4wfP3t53uWYeLytOXuTdQK", EventCompleted, at, func(*Payment) {}},
		{"payment written by encoding/json", "evt_1", EventFailed, at, func(p *Payment) { p.PaymentMethod = card }},
		{"metadata with spaces", "evt_1", EventExpired, at, func(p *Payment) { p.Metadata = json.RawMessage(`{"k": "a b"}`) }},
		{"escaped name", "evt_1", EventCompleted, at, func(p *Payment) { p.Customer.Name = "A \"B\" <c> & \\ \u2028" }},
		{"id to escape", "evt_\"<&>\u2028", EventCompleted, at, func(*Payment) {}},
		{"type to escape", "evt_1", EventType("x\\y\x01"), at, func(*Payment) {}},
		{"year past 9999", "evt_1", EventCompleted, time.Date(12026, 1, 1, 0, 0, 0, 0, time.UTC), func(*Payment) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPayment()
			tc.change(&p)
			for _, enc := range []Encoding{{}, {AmountAsString: true}, {StatusSucceeded: true}} {
				ev, err := NewEvent(tc.id, tc.typ, p, tc.at, enc)
				if err != nil {
					t.Fatal(err)
				}
				data, err := p.Encode(enc)
				if err != nil {
					t.Fatal(err)
				}
				want, err := EncodeJSON(struct {
					ID        string          `json:"id"`
					Type      EventType       `json:"type"`
					CreatedAt string          `json:"created_at"`
					Data      json.RawMessage `json:"data"`
				}{tc.id, tc.typ, FormatTime(tc.at), data})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ev.Body, want) {
					t.Errorf("%+v:\n got %s\nwant %s", enc, ev.Body, want)
				}
			}
		})
	}
}

// BenchmarkNewEvent prices a completed payment's event, made inside the
// store's update of the payment.
func BenchmarkNewEvent(b *testing.B) {
	p := testPayment()
	p.Status, p.CompletedAt = StatusCompleted, p.CreatedAt.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewEvent("evt_eX4wfP3t53uWYeLytOXuTdQK", EventCompleted, p, p.CompletedAt, Encoding{}); err != nil {
			b.Fatal(err)
		}
	}
}
