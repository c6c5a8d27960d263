// Payments read again unchanged are not decoded again, and each reader
// gets a copy of its own.

package postgres

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestDecodedPayments_ReadersShareNothingAndAChangedDocumentIsDecodedAfresh(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	p := paymock.Payment{ID: "pay_1", MerchantID: "acme", Amount: 1050, Currency: "EUR", Status: paymock.StatusPending,
		Metadata: json.RawMessage(`{"order":"1"}`), CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour),
		PaymentMethod: &paymock.PaymentMethod{Type: "card", Card: paymock.CardSummary{Brand: "visa", Last4: "4242"},
			BillingDetails: &paymock.BillingDetails{Name: "Jane", Address: &paymock.Address{Country: "NL"}}}}
	doc, err := encode(p)
	if err != nil {
		t.Fatal(err)
	}
	var d decodedPayments
	first, err := d.decode("acme", "pay_1", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := decode("acme", "pay_1", []byte(doc))
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("decoded %+v, want %+v", first, want)
	}
	// A reader changing its copy changes no other's.
	first.Metadata[2] = 'X'
	first.PaymentMethod.Card.Last4 = "0000"
	first.PaymentMethod.BillingDetails.Address.Country = "XX"
	second, _ := d.decode("acme", "pay_1", []byte(doc))
	if !reflect.DeepEqual(second, want) {
		t.Errorf("read again after a reader changed its copy: %+v, want %+v", second, want)
	}
	// Another document of the same id is the payment it says.
	p.Status = paymock.StatusCompleted
	changed, _ := encode(p)
	if got, _ := d.decode("acme", "pay_1", []byte(changed)); got.Status != paymock.StatusCompleted {
		t.Errorf("status %s after the document changed, want completed", got.Status)
	}
	// And another merchant's payment of the same id is its own.
	if got, _ := d.decode("other", "pay_1", []byte(doc)); got.MerchantID != "other" {
		t.Errorf("merchant %s, want other", got.MerchantID)
	}
}
