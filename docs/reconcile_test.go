//go:build unix

// The reconciliation example of docs/faults.md, run against a sandbox
// whose create is carried out but answered 503 (when=after).

package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/paymock/paymock/paymocktest"
)

// The region between the markers is copied into docs/faults.md.

// --- docs/faults.md: reconcile ---

// findPayment looks for the payment of an order among the newest ones,
// after a create whose answer was lost (a timeout, a reset, a 5xx): the
// payment may exist even though the client never saw it.
func findPayment(ctx context.Context, baseURL, apiKey, orderID string) (id string, found bool, err error) {
	q := url.Values{"per_page": {"100"}}
	req, err := http.NewRequestWithContext(ctx, "GET", baseURL+"/api/v1/payments?"+q.Encode(), nil)
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", false, fmt.Errorf("listing payments: %s", resp.Status)
	}
	var page struct {
		Items []struct {
			ID       string            `json:"id"`
			Metadata map[string]string `json:"metadata"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return "", false, err
	}
	for _, p := range page.Items {
		if p.Metadata["order_id"] == orderID {
			return p.ID, true, nil
		}
	}
	return "", false, nil
}

// --- end ---

func TestFindPayment_FindsACreateWhoseAnswerWasLost(t *testing.T) {
	s := paymocktest.New(t)
	ctx := t.Context()
	if err := s.Inject(ctx, paymocktest.Fault{Operation: "createPayment", Status: 503, When: "after", Times: 1}); err != nil {
		t.Fatal(err)
	}
	create := func(order string) int {
		body, _ := json.Marshal(map[string]any{
			"amount": 10.5, "currency": "EUR", "description": "Order " + order, "expires_in": 3600, "mcc": 5732,
			"customer": map[string]string{"email": "jane@example.com", "name": "Jane"}, "metadata": map[string]string{"order_id": order},
			"success_url": "https://shop.example/success", "cancel_url": "https://shop.example/cancel",
		})
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/payments", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := create("ord_41"); got != http.StatusServiceUnavailable {
		t.Fatalf("the create under the fault answered %d, want 503", got)
	}
	if got := create("ord_42"); got != http.StatusCreated {
		t.Fatalf("the create after the fault answered %d, want 201", got)
	}
	id, found, err := findPayment(ctx, s.URL, s.APIKey, "ord_41")
	if err != nil || !found {
		t.Fatalf("findPayment(ord_41) = %q, %v, %v: want the payment the 503 hid", id, found, err)
	}
	if _, err := s.Complete(ctx, id); err != nil {
		t.Fatalf("completing the reconciled payment: %v", err)
	}
	if _, found, err := findPayment(ctx, s.URL, s.APIKey, "ord_43"); err != nil || found {
		t.Errorf("findPayment(ord_43) = %v, %v: want not found, for an order never created", found, err)
	}
}
