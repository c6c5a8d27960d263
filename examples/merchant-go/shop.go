// Package shop is a tiny merchant service, the kind that talks to the
// payments service: it takes an order, creates a payment for it over plain
// net/http, and marks the order paid when the signed payment.completed
// webhook arrives. Its tests run it against paymock in process, through
// paymocktest.
package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Config is what a Shop needs of the payments service.
type Config struct {
	// PaymentsURL is the base URL of the payments service (paymock in
	// tests and in docker), without /api/v1.
	PaymentsURL string
	// APIKey is the shop's secret key, sent as a bearer token.
	APIKey string
	// WebhookSecret is the whsec_ secret webhooks are signed with.
	WebhookSecret string
	// PublicURL is where customers come back to; "" means
	// https://shop.example.com.
	PublicURL string
	// HTTPClient calls the payments service; nil means a 10s timeout.
	HTTPClient *http.Client
}

// ConfigFromEnv reads the shop's settings from the environment, as the
// shop command and docker-compose.yml have them: PAYMENTS_URL,
// PAYMENTS_API_KEY and WEBHOOK_SECRET.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		PaymentsURL:   getenv("PAYMENTS_URL"),
		APIKey:        getenv("PAYMENTS_API_KEY"),
		WebhookSecret: getenv("WEBHOOK_SECRET"),
	}
}

// Status is where an order stands.
type Status string

// The statuses of an order.
const (
	AwaitingPayment Status = "awaiting_payment"
	Paid            Status = "paid"
	PaymentFailed   Status = "payment_failed"
	Expired         Status = "expired"
)

// Order is one order of the shop.
type Order struct {
	ID         string `json:"id"`
	Amount     string `json:"amount"` // decimal, e.g. "10.50"
	Currency   string `json:"currency"`
	Email      string `json:"email"`
	Name       string `json:"name"`
	Status     Status `json:"status"`
	PaymentID  string `json:"payment_id"`
	PaymentURL string `json:"payment_url"` // where to send the customer
	// Confirmations counts the confirmation emails sent: exactly one per
	// paid order, however often the webhook comes.
	Confirmations int `json:"confirmations"`
	// Webhooks counts the verified deliveries received for the order's
	// payment, duplicates included: how often the service sent them.
	Webhooks int `json:"webhooks"`
}

// Shop takes orders and follows their payments.
type Shop struct {
	cfg    Config
	client *http.Client
	verify *standardwebhooks.Webhook

	mu        sync.Mutex
	orders    map[string]*Order
	byPayment map[string]string // payment id -> order id
	handled   map[string]bool   // webhook-ids already acted on
}

// New returns a shop with no orders.
func New(cfg Config) (*Shop, error) {
	wh, err := standardwebhooks.NewWebhook(cfg.WebhookSecret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "https://shop.example.com"
	}
	cfg.PaymentsURL = strings.TrimRight(cfg.PaymentsURL, "/")
	return &Shop{cfg: cfg, client: client, verify: wh,
		orders: map[string]*Order{}, byPayment: map[string]string{}, handled: map[string]bool{}}, nil
}

var amountPattern = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,2})?$`)

// Checkout creates the payment of a new order and returns the order, with
// the page to send the customer to.
func (s *Shop) Checkout(ctx context.Context, o Order) (Order, error) {
	if o.ID == "" || !amountPattern.MatchString(o.Amount) {
		return Order{}, fmt.Errorf("order %q: want an id and an amount like 10.50", o.ID)
	}
	body, err := json.Marshal(map[string]any{
		"amount":      json.Number(o.Amount),
		"currency":    o.Currency,
		"customer":    map[string]string{"email": o.Email, "name": o.Name},
		"description": "Order " + o.ID,
		"expires_in":  1800,
		"metadata":    map[string]string{"order_id": o.ID},
		"success_url": s.cfg.PublicURL + "/orders/" + o.ID + "/thanks",
		"cancel_url":  s.cfg.PublicURL + "/orders/" + o.ID,
		"mcc":         5732,
	})
	if err != nil {
		return Order{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.PaymentsURL+"/api/v1/payments", bytes.NewReader(body))
	if err != nil {
		return Order{}, err
	}
	req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return Order{}, fmt.Errorf("create payment: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Order{}, fmt.Errorf("create payment: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return Order{}, fmt.Errorf("create payment: %d %s", resp.StatusCode, answer)
	}
	var p struct {
		ID         string `json:"id"`
		NextAction *struct {
			URL string `json:"url"`
		} `json:"next_action"`
	}
	if err := json.Unmarshal(answer, &p); err != nil || p.ID == "" || p.NextAction == nil {
		return Order{}, fmt.Errorf("create payment: unexpected answer %s", answer)
	}
	o.Status, o.PaymentID, o.PaymentURL, o.Confirmations = AwaitingPayment, p.ID, p.NextAction.URL, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[o.ID] = &o
	s.byPayment[p.ID] = o.ID
	return o, nil
}

// Order returns an order by id.
func (s *Shop) Order(id string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return Order{}, false
	}
	return *o, true
}

// errUnknownPayment is a webhook for a payment the shop did not make.
var errUnknownPayment = errors.New("no order has this payment")

// HandleWebhook handles POST /webhooks: it verifies the signature, acts
// on each event once (a redelivery has the same webhook-id) and answers
// 2xx so the payments service stops retrying.
func (s *Shop) HandleWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	if err := s.verify.Verify(body, r.Header); err != nil {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	switch err := s.apply(r.Header.Get("webhook-id"), ev.Type, ev.Data.ID); {
	case errors.Is(err, errUnknownPayment):
		// Not ours (another environment's, say): retrying cannot help.
		w.WriteHeader(http.StatusNoContent)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// apply moves the order of a payment by one event, once per webhook-id.
func (s *Shop) apply(webhookID, eventType, paymentID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[s.byPayment[paymentID]]
	if !ok {
		return errUnknownPayment
	}
	o.Webhooks++
	if s.handled[webhookID] {
		return nil
	}
	if o.Status != AwaitingPayment {
		s.handled[webhookID] = true
		return nil // an order settles once
	}
	switch eventType {
	case "payment.completed":
		o.Status = Paid
		o.Confirmations++ // the confirmation email
	case "payment.failed":
		o.Status = PaymentFailed
	case "payment.expired":
		o.Status = Expired
	default:
		return fmt.Errorf("unknown event type %q", eventType)
	}
	s.handled[webhookID] = true
	return nil
}

// Handler serves the shop: POST /orders (an order as JSON; answers the
// order with its payment_url), GET /orders/{id} and POST /webhooks.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		var o Order
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&o); err != nil {
			http.Error(w, "want an order as JSON", http.StatusBadRequest)
			return
		}
		o, err := s.Checkout(r.Context(), o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		writeJSON(w, http.StatusCreated, o)
	})
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		o, ok := s.Order(r.PathValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, http.StatusOK, o)
	})
	mux.HandleFunc("POST /webhooks", s.HandleWebhook)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
