// The payment resource and its JSON form, as the service API and the
// webhooks send it.

package paymock

import (
	"bytes"
	"encoding/json"
	"time"
)

// Status is the state of a payment.
type Status string

// The statuses of a payment. Pending is the only one that can change;
// StatusSucceeded is only ever a spelling of StatusCompleted on the wire.
const (
	StatusPending   Status = "pending"
	StatusCompleted Status = "completed"
	StatusSucceeded Status = "succeeded"
	StatusExpired   Status = "expired"
	StatusFailed    Status = "failed"
)

// Final reports whether no transition can leave s.
func (s Status) Final() bool { return s != StatusPending }

// TimeLayout is the wire form of every timestamp: UTC, whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// Customer is the payer, identified per merchant by email.
type Customer struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Address is a billing address as the merchant sent it.
type Address struct {
	Line1      string `json:"line1,omitempty"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city,omitempty"`
	State      string `json:"state,omitempty"`
	PostalCode string `json:"postal_code,omitempty"`
	Country    string `json:"country,omitempty"`
}

// BillingDetails is the billing name and address of a card.
type BillingDetails struct {
	Name    string   `json:"name,omitempty"`
	Address *Address `json:"address,omitempty"`
}

// CardSummary is what is kept of a card: never its number or cvc.
type CardSummary struct {
	Brand       string `json:"brand"`
	Last4       string `json:"last4"`
	ExpiryMonth int    `json:"expiry_month"`
	ExpiryYear  int    `json:"expiry_year"`
}

// PaymentMethod is the masked payment method of a payment.
type PaymentMethod struct {
	Type           string          `json:"type"`
	Card           CardSummary     `json:"card"`
	BillingDetails *BillingDetails `json:"billing_details,omitempty"`
}

// NextAction tells the merchant where to send the customer.
type NextAction struct {
	URL string `json:"url"`
}

// Payment is one payment of one merchant. Its fields are plain values so a
// copy is a snapshot: the store hands out copies, never shared pointers to
// anything it mutates.
type Payment struct {
	ID          string
	MerchantID  string
	Amount      Amount
	Currency    Currency
	Status      Status
	Customer    Customer
	Description string
	// Metadata is the JSON object exactly as the merchant sent it (compacted).
	Metadata      json.RawMessage
	SuccessURL    string
	CancelURL     string
	CheckoutURL   string // the hosted checkout page, or the 3DS page for cards
	PaymentMethod *PaymentMethod
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ExpiresAt     time.Time
	CompletedAt   time.Time // zero until completed
	// Declines3DS marks a payment made with the 3DS-declined test card: its
	// 3DS page fails it whatever the customer chooses. Never sent.
	Declines3DS bool
}

// Encoding selects among the wire forms the spec allows, so that clients can
// be tested against each of them. The zero value is the default form.
type Encoding struct {
	AmountAsString  bool // "10.50" instead of 10.50
	StatusSucceeded bool // "succeeded" instead of "completed"
	OmitPaymentLink bool // no payment_link on checkout payments
}

// WirePayment is a payment's wire form field by field, as the service
// API and the webhooks send it (see Payment.Encode and EncodePlain).
type WirePayment struct {
	ID            string          `json:"id"`
	Amount        json.RawMessage `json:"amount"`
	Currency      Currency        `json:"currency"`
	Status        Status          `json:"status"`
	Customer      Customer        `json:"customer"`
	Description   string          `json:"description"`
	Metadata      json.RawMessage `json:"metadata"`
	SuccessURL    string          `json:"success_url"`
	CancelURL     string          `json:"cancel_url"`
	NextAction    *NextAction     `json:"next_action"`
	PaymentLink   string          `json:"payment_link,omitempty"`
	PaymentMethod *PaymentMethod  `json:"payment_method"`
	CompletedAt   *string         `json:"completed_at"`
	CreatedAt     string          `json:"created_at"`
	UpdatedAt     string          `json:"updated_at"`
	ExpiresAt     string          `json:"expires_at"`
}

// MarshalJSON encodes p in the default wire form.
func (p Payment) MarshalJSON() ([]byte, error) { return p.Encode(Encoding{}) }

// Encode writes p's wire form under enc.
func (p Payment) Encode(enc Encoding) ([]byte, error) {
	b, _, _, err := p.EncodePlain(enc)
	return b, err
}

// EncodeJSON is json.Marshal without HTML escaping, so that metadata and
// URLs come back byte for byte as the merchant sent them ("&" stays "&").
// Every JSON answer and webhook body is written with it.
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// wireParts is what a payment's wire form points to besides its strings,
// in one allocation rather than one each: every answer writes an amount,
// most a next action, and final ones a completed_at.
type wireParts struct {
	next      NextAction
	completed string
	amount    [18]byte
}

func (p Payment) wire(enc Encoding) WirePayment {
	parts := new(wireParts)
	amount := parts.amount[:0]
	if enc.AmountAsString {
		amount = append(amount, '"')
	}
	amount = p.Amount.AppendDecimal(amount)
	if enc.AmountAsString {
		amount = append(amount, '"')
	}
	w := WirePayment{
		ID:            p.ID,
		Amount:        amount,
		Currency:      p.Currency,
		Status:        p.Status,
		Customer:      p.Customer,
		Description:   p.Description,
		Metadata:      p.Metadata,
		SuccessURL:    p.SuccessURL,
		CancelURL:     p.CancelURL,
		PaymentMethod: p.PaymentMethod,
	}
	w.CreatedAt, w.UpdatedAt, w.ExpiresAt = formatTimes(p.CreatedAt, p.UpdatedAt, p.ExpiresAt)
	if enc.StatusSucceeded && p.Status == StatusCompleted {
		w.Status = StatusSucceeded
	}
	if p.Status == StatusPending {
		parts.next.URL = p.CheckoutURL
		w.NextAction = &parts.next
	}
	// The checkout page keeps answering after the payment ends (it shows the
	// outcome), so the link stays on the resource.
	if p.PaymentMethod == nil && !enc.OmitPaymentLink {
		w.PaymentLink = p.CheckoutURL
	}
	if !p.CompletedAt.IsZero() {
		parts.completed = FormatTime(p.CompletedAt)
		w.CompletedAt = &parts.completed
	}
	if len(w.Metadata) == 0 {
		w.Metadata = json.RawMessage("{}")
	}
	return w
}

// formatTimes is FormatTime of each of a payment's three times, written
// into one string that the three share: one allocation rather than three
// on every answer (FuzzFormatTimes_AreFormatTimeOfEach).
func formatTimes(a, b, c time.Time) (string, string, string) {
	const n = len(TimeLayout)
	buf := make([]byte, 0, 3*n)
	buf, okA := appendPlainTime(buf, a)
	buf, okB := appendPlainTime(buf, b)
	buf, okC := appendPlainTime(buf, c)
	if !okA || !okB || !okC {
		return FormatTime(a), FormatTime(b), FormatTime(c)
	}
	s := string(buf)
	return s[:n], s[n : 2*n], s[2*n:]
}

// FormatTime writes t in the wire layout, in UTC and whole seconds.
func FormatTime(t time.Time) string {
	if b, ok := appendPlainTime(make([]byte, 0, len(TimeLayout)), t); ok {
		return string(b)
	}
	return t.UTC().Truncate(time.Second).Format(TimeLayout)
}
