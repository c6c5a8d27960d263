// Events: what the merchant is told when a payment reaches an outcome.

package paymock

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// EventType names an outcome, as sent in the webhook's "type".
type EventType string

// The event types, one per final status.
const (
	EventCompleted EventType = "payment.completed"
	EventExpired   EventType = "payment.expired"
	EventFailed    EventType = "payment.failed"
)

// EventTypeFor is the event a transition into status s emits.
func EventTypeFor(s Status) (EventType, error) {
	switch s {
	case StatusCompleted:
		return EventCompleted, nil
	case StatusExpired:
		return EventExpired, nil
	case StatusFailed:
		return EventFailed, nil
	}
	return "", fmt.Errorf("no event for status %q", s)
}

// Event is one outcome of one payment. Its body is fixed when it is made,
// so every delivery attempt sends the same bytes.
type Event struct {
	ID         string
	Type       EventType
	MerchantID string
	CreatedAt  time.Time
	Payment    Payment // the payment as it was right after the transition
	Body       []byte  // the wire form, built once by NewEvent
}

// NewEvent builds an event and its body: {"id","type","created_at","data"},
// with the payment encoded under enc.
func NewEvent(id string, t EventType, p Payment, at time.Time, enc Encoding) (Event, error) {
	data, err := p.Encode(enc)
	if err != nil {
		return Event{}, fmt.Errorf("encode event payment: %w", err)
	}
	body, err := eventBody(id, t, FormatTime(at), data)
	if err != nil {
		return Event{}, fmt.Errorf("encode event: %w", err)
	}
	return Event{ID: id, Type: t, MerchantID: p.MerchantID, CreatedAt: at.UTC().Truncate(time.Second), Payment: p, Body: body}, nil
}

// eventBody writes an event's body as EncodeJSON writes it. Plain
// strings (ids, types and times are) are written by hand, in one
// allocation: data is Encode's, compact JSON that encoding/json would
// validate and copy unchanged, inside the store's update of the payment.
func eventBody(id string, t EventType, created string, data []byte) ([]byte, error) {
	if !plainString(id) || !plainString(string(t)) || !plainString(created) {
		return EncodeJSON(struct {
			ID        string          `json:"id"`
			Type      EventType       `json:"type"`
			CreatedAt string          `json:"created_at"`
			Data      json.RawMessage `json:"data"`
		}{id, t, created, data})
	}
	const keys = `{"id":"","type":"","created_at":"","data":}`
	b := make([]byte, 0, len(keys)+len(id)+len(t)+len(created)+len(data))
	b = append(b, `{"id":"`...)
	b = append(b, id...)
	b = append(b, `","type":"`...)
	b = append(b, t...)
	b = append(b, `","created_at":"`...)
	b = append(b, created...)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// Transition moves a pending payment to a final status at now. A payment
// already in a final status cannot move again: that is a conflict_error.
func (p *Payment) Transition(to Status, now time.Time) error {
	if p.Status.Final() {
		return &Error{Type: Conflict, Code: "payment_final",
			Message: fmt.Sprintf("payment %s is already %s; %s %s payment cannot change", p.ID, p.Status, article(string(p.Status)), p.Status), Param: "id"}
	}
	switch to {
	case StatusCompleted, StatusExpired, StatusFailed:
	default:
		return fmt.Errorf("transition to %q: not a final status", to)
	}
	now = now.UTC().Truncate(time.Second)
	p.Status = to
	p.UpdatedAt = now
	if to == StatusCompleted {
		p.CompletedAt = now
	}
	return nil
}

// article is "a" or "an" for a word, as it is spoken.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
