// A payment as the json document of its row.

package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// record is the stored form of a payment, apart from the id and merchant,
// which are the row's key. It is not the wire form: that drops what the
// lifecycle needs (Declines3DS) and rounds times to seconds.
type record struct {
	Amount      int64            `json:"amount"`
	Currency    paymock.Currency `json:"currency"`
	Status      paymock.Status   `json:"status"`
	Customer    paymock.Customer `json:"customer"`
	Description string           `json:"description,omitempty"`
	// Metadata is the merchant's JSON as a string: encoding it as a nested
	// value would escape "&" and "<" and change its bytes.
	Metadata      string                 `json:"metadata,omitempty"`
	SuccessURL    string                 `json:"success_url,omitempty"`
	CancelURL     string                 `json:"cancel_url,omitempty"`
	CheckoutURL   string                 `json:"checkout_url,omitempty"`
	PaymentMethod *paymock.PaymentMethod `json:"payment_method,omitempty"`
	CreatedAt     time.Time              `json:"created_at"`
	UpdatedAt     time.Time              `json:"updated_at"`
	ExpiresAt     time.Time              `json:"expires_at"`
	CompletedAt   *time.Time             `json:"completed_at,omitempty"`
	Declines3DS   bool                   `json:"declines_3ds,omitempty"`
}

// encode returns p's document.
func encode(p paymock.Payment) (string, error) {
	r := record{
		Amount:        int64(p.Amount),
		Currency:      p.Currency,
		Status:        p.Status,
		Customer:      p.Customer,
		Description:   p.Description,
		Metadata:      string(p.Metadata),
		SuccessURL:    p.SuccessURL,
		CancelURL:     p.CancelURL,
		CheckoutURL:   p.CheckoutURL,
		PaymentMethod: p.PaymentMethod,
		CreatedAt:     p.CreatedAt,
		UpdatedAt:     p.UpdatedAt,
		ExpiresAt:     p.ExpiresAt,
		Declines3DS:   p.Declines3DS,
	}
	if !p.CompletedAt.IsZero() {
		r.CompletedAt = &p.CompletedAt
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encoding payment %s: %w", p.ID, err)
	}
	return string(b), nil
}

// decode returns the payment of a row.
func decode(merchantID, id string, doc []byte) (paymock.Payment, error) {
	var r record
	if err := json.Unmarshal(doc, &r); err != nil {
		return paymock.Payment{}, fmt.Errorf("decoding payment %s: %w", id, err)
	}
	p := paymock.Payment{
		ID:            id,
		MerchantID:    merchantID,
		Amount:        paymock.Amount(r.Amount),
		Currency:      r.Currency,
		Status:        r.Status,
		Customer:      r.Customer,
		Description:   r.Description,
		SuccessURL:    r.SuccessURL,
		CancelURL:     r.CancelURL,
		CheckoutURL:   r.CheckoutURL,
		PaymentMethod: r.PaymentMethod,
		CreatedAt:     r.CreatedAt,
		UpdatedAt:     r.UpdatedAt,
		ExpiresAt:     r.ExpiresAt,
		Declines3DS:   r.Declines3DS,
	}
	if r.Metadata != "" {
		p.Metadata = json.RawMessage(r.Metadata)
	}
	if r.CompletedAt != nil {
		p.CompletedAt = *r.CompletedAt
	}
	return p, nil
}

// maxDecoded bounds the payments decodedPayments holds; when full it is
// emptied, and fills again with the payments read most.
const maxDecoded = 4096

// decodedPayments remembers the payments last decoded, by id, with the
// document they came from: a payment read again unchanged (a list of the
// newest, a retrieve after a create) is not decoded again. The document
// decides the payment whole, so what is held is never stale: a changed
// payment has another document and is decoded afresh. Each caller gets a
// copy of its own.
type decodedPayments struct {
	mu sync.Mutex
	m  map[string]decodedPayment
}

type decodedPayment struct {
	merchantID, doc string
	p               paymock.Payment
}

// decode is decode(merchantID, id, doc), remembered.
func (d *decodedPayments) decode(merchantID, id string, doc []byte) (paymock.Payment, error) {
	d.mu.Lock()
	e, ok := d.m[id]
	d.mu.Unlock()
	if ok && e.merchantID == merchantID && e.doc == string(doc) {
		return clonePayment(e.p), nil
	}
	p, err := decode(merchantID, id, doc)
	if err != nil {
		return p, err
	}
	d.mu.Lock()
	if d.m == nil || len(d.m) >= maxDecoded {
		d.m = make(map[string]decodedPayment, min(maxDecoded, 256))
	}
	d.m[id] = decodedPayment{merchantID: merchantID, doc: string(doc), p: p}
	d.mu.Unlock()
	return clonePayment(p), nil
}

// clonePayment is p sharing nothing with it.
func clonePayment(p paymock.Payment) paymock.Payment {
	if p.Metadata != nil {
		p.Metadata = bytes.Clone(p.Metadata)
	}
	if p.PaymentMethod != nil {
		pm := *p.PaymentMethod
		if pm.BillingDetails != nil {
			bd := *pm.BillingDetails
			if bd.Address != nil {
				a := *bd.Address
				bd.Address = &a
			}
			pm.BillingDetails = &bd
		}
		p.PaymentMethod = &pm
	}
	return p
}
