// The shop's tests: paymock runs in process (paymocktest), drives each
// outcome, and its webhooks are handed to the shop's own handler. Every
// request the shop sends is checked against the contract at cleanup.

package shop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/sandbox"

	shop "github.com/paymock/paymock/examples/merchant-go"
)

// newShop is a shop talking to s.
func newShop(t *testing.T, s *paymocktest.Server) *shop.Shop {
	t.Helper()
	sh, err := shop.New(shop.Config{PaymentsURL: s.URL, APIKey: s.APIKey, WebhookSecret: s.Webhooks().Secret()})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// checkout places an order of 10.50 EUR.
func checkout(t *testing.T, sh *shop.Shop, id string) shop.Order {
	t.Helper()
	o, err := sh.Checkout(t.Context(), shop.Order{ID: id, Amount: "10.50", Currency: "EUR", Email: "jane@example.com", Name: "Jane Doe"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != shop.AwaitingPayment || !strings.Contains(o.PaymentURL, o.PaymentID) {
		t.Fatalf("new order %+v", o)
	}
	return o
}

// deliverNext hands the next webhook paymock sent to the shop's handler,
// exactly as signed, and returns the handler's status.
func deliverNext(t *testing.T, s *paymocktest.Server, sh *shop.Shop) (paymocktest.Delivery, int) {
	t.Helper()
	d, err := s.Webhooks().Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(string(d.Body)))
	req.Header = d.Header.Clone()
	rec := httptest.NewRecorder()
	sh.Handler().ServeHTTP(rec, req)
	return d, rec.Code
}

func TestCheckout_EachOutcomeSettlesTheOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		outcome   func(ctx context.Context, s *paymocktest.Server, paymentID string) error
		wantType  string
		want      shop.Status
		wantMails int
	}{
		{"success", func(ctx context.Context, s *paymocktest.Server, id string) error {
			_, err := s.Complete(ctx, id)
			return err
		}, "payment.completed", shop.Paid, 1},
		{"failure", func(ctx context.Context, s *paymocktest.Server, id string) error {
			_, err := s.Fail(ctx, id)
			return err
		}, "payment.failed", shop.PaymentFailed, 0},
		{"expiry", func(ctx context.Context, s *paymocktest.Server, id string) error {
			// The shop asks for 30 minutes; the frozen clock gets there at once.
			return s.Advance(ctx, 30*time.Minute)
		}, "payment.expired", shop.Expired, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := paymocktest.New(t)
			sh := newShop(t, s)
			o := checkout(t, sh, "ord_1")
			if err := tc.outcome(t.Context(), s, o.PaymentID); err != nil {
				t.Fatal(err)
			}
			d, status := deliverNext(t, s, sh)
			if d.Type != tc.wantType || status != http.StatusNoContent {
				t.Fatalf("webhook %s answered %d", d.Type, status)
			}
			got, _ := sh.Order("ord_1")
			if got.Status != tc.want || got.Confirmations != tc.wantMails {
				t.Errorf("order %s with %d confirmations, want %s with %d", got.Status, got.Confirmations, tc.want, tc.wantMails)
			}
		})
	}
}

func TestCheckout_ExpiresOnlyWhenItsTimeComes(t *testing.T) {
	s := paymocktest.New(t)
	sh := newShop(t, s)
	o := checkout(t, sh, "ord_1")
	if err := s.Advance(t.Context(), 29*time.Minute); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if d, err := s.Webhooks().Next(short); err == nil {
		t.Fatalf("a webhook before the payment expired: %s", d.Type)
	}
	if err := s.Advance(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if d, _ := deliverNext(t, s, sh); d.Type != "payment.expired" {
		t.Errorf("got %s", d.Type)
	}
	if got, _ := sh.Order(o.ID); got.Status != shop.Expired {
		t.Errorf("order %s", got.Status)
	}
}

func TestWebhook_ADuplicateIsActedOnOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs before the payment completes; after, once the first
		// delivery was handled. Between them, a second delivery comes.
		before, after func(t *testing.T, s *paymocktest.Server, first paymocktest.Delivery)
	}{
		{"a redelivery", nil, func(t *testing.T, s *paymocktest.Server, first paymocktest.Delivery) {
			// As a service does after a lost 2xx, through the same typed
			// client that drives paymock in docker.
			c, err := sandbox.NewClient(sandbox.ClientConfig{URL: s.URL, APIKey: s.APIKey})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Redeliver(t.Context(), first.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"a duplicate fault", func(t *testing.T, s *paymocktest.Server, _ paymocktest.Delivery) {
			if err := s.Inject(t.Context(), paymocktest.Fault{Target: "webhooks", Duplicate: 2}); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := paymocktest.New(t)
			sh := newShop(t, s)
			o := checkout(t, sh, "ord_1")
			if tc.before != nil {
				tc.before(t, s, paymocktest.Delivery{})
			}
			if _, err := s.Complete(t.Context(), o.PaymentID); err != nil {
				t.Fatal(err)
			}
			first, status := deliverNext(t, s, sh)
			if status != http.StatusNoContent {
				t.Fatalf("first delivery: %d", status)
			}
			if tc.after != nil {
				tc.after(t, s, first)
			}
			again, status := deliverNext(t, s, sh)
			if again.ID != first.ID || status != http.StatusNoContent {
				t.Fatalf("second delivery %s answered %d, want %s answered 204", again.ID, status, first.ID)
			}
			if got, _ := sh.Order(o.ID); got.Status != shop.Paid || got.Confirmations != 1 || got.Webhooks != 2 {
				t.Errorf("order %s with %d confirmations and %d webhooks, want paid with exactly 1 of 2", got.Status, got.Confirmations, got.Webhooks)
			}
		})
	}
}

func TestWebhook_RefusesAForgedDelivery(t *testing.T) {
	s := paymocktest.New(t)
	sh := newShop(t, s)
	o := checkout(t, sh, "ord_1")
	if _, err := s.Complete(t.Context(), o.PaymentID); err != nil {
		t.Fatal(err)
	}
	d, err := s.Webhooks().Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(d.Body), "payment.completed", "payment.failed", 1)
	req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(forged))
	req.Header = d.Header.Clone()
	rec := httptest.NewRecorder()
	sh.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("a forged body answered %d, want 400", rec.Code)
	}
	if got, _ := sh.Order(o.ID); got.Status != shop.AwaitingPayment {
		t.Errorf("a forged webhook moved the order to %s", got.Status)
	}
}

func TestOrders_OverHTTP(t *testing.T) {
	s := paymocktest.New(t)
	app := httptest.NewServer(newShop(t, s).Handler())
	t.Cleanup(app.Close)
	resp, err := http.Post(app.URL+"/orders", "application/json",
		strings.NewReader(`{"id":"ord_9","amount":"99.99","currency":"GBP","email":"sam@example.com","name":"Sam"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /orders: %d", resp.StatusCode)
	}
	resp, err = http.Get(app.URL + "/orders/ord_9")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /orders/ord_9: %d", resp.StatusCode)
	}
}
