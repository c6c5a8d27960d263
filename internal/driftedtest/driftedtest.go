// Package driftedtest is a deployment of the payments service that chose
// otherwise than paymock wherever it could, and breaks the contract in
// ways verify and the proxy must name: the "different upstream" of their
// tests, written once for both.
package driftedtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Key is the one API key the deployment accepts.
const Key = "sk_other_good"

// upstream is a deployment that chose otherwise than paymock on
// purpose: 422 instead of 400, another error shape, amounts as strings,
// "succeeded", no WWW-Authenticate, UUIDs for ids, a customer with a
// phone, a field the contract does not declare and a required field left
// out. It knows one key, Key.
type upstream struct {
	mu       sync.Mutex
	payments []map[string]any
}

// New serves a fresh drifted deployment on loopback until the test ends.
func New(t testing.TB) *httptest.Server {
	u := &upstream{}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return srv
}

func (u *upstream) payment(id string, status string, in map[string]any) map[string]any {
	return map[string]any{
		"id": id, "amount": fmt.Sprintf("%.2f", in["amount"]), "currency": in["currency"], "status": status,
		"customer": map[string]any{"id": "c0ffee00-0000-4000-8000-000000000001", "email": "verify@example.com", "name": "Paymock Verify",
			"phone": "+1 555 0100"}, // a field the spec leaves open
		"description": in["description"], "metadata": in["metadata"], "success_url": in["success_url"],
		"cancel_url": in["cancel_url"], "next_action": map[string]any{"url": "https://pay.example/c/" + id},
		"payment_link": "https://pay.example/c/" + id, "payment_method": nil, "completed_at": nil,
		"created_at": "2026-11-24T00:00:00Z", "updated_at": "2026-11-24T00:00:00Z", "expires_at": "2026-11-24T01:00:00Z",
		"livemode": false, // not in the contract
	}
}

// uuid is the n-th payment's id: a UUID (version 4 in form), which the
// spec allows as well as paymock's pay_ ids.
func uuid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func (u *upstream) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"message": msg, "status": status})
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+Key {
		u.fail(w, http.StatusUnauthorized, "bad key") // and no WWW-Authenticate
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	w.Header().Set("X-Request-Id", "req_1")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/payments":
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			u.fail(w, http.StatusUnprocessableEntity, "bad json")
			return
		}
		cust, _ := in["customer"].(map[string]any)
		_, mcc := in["mcc"]
		_, acct := in["account_id"]
		if cust["email"] == nil || in["amount"] == nil || (mcc && acct) {
			u.fail(w, http.StatusUnprocessableEntity, "invalid")
			return
		}
		p := u.payment(uuid(len(u.payments)+1), "pending", in)
		u.payments = append(u.payments, p)
		created := map[string]any{}
		for k, v := range p {
			created[k] = v
		}
		delete(created, "cancel_url") // "returned in create responses": a required field left out
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(created)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/payments":
		if r.URL.Query().Get("per_page") == "101" {
			u.fail(w, http.StatusUnprocessableEntity, "per_page too big")
			return
		}
		items := []map[string]any{}
		for _, p := range u.payments {
			items = append(items, p)
		}
		// A paid one, named "succeeded", from an earlier day.
		paid := u.payment(uuid(99), "succeeded", map[string]any{"amount": 5.0, "currency": "USD",
			"description": "old", "metadata": map[string]any{}, "success_url": "https://shop.example/s", "cancel_url": "https://shop.example/c"})
		paid["completed_at"], paid["next_action"] = "2026-11-23T00:00:00Z", nil
		items = append(items, paid)
		if r.URL.Query().Get("page") != "" && r.URL.Query().Get("page") != "1" {
			items = []map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"items": items,
			"pagination": map[string]any{"page": 1, "per_page": 10, "total_pages": 1, "total_items": len(u.payments) + 1}})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/payments/"):
		id := strings.TrimPrefix(r.URL.Path, "/api/v1/payments/")
		for _, p := range u.payments {
			if p["id"] == id {
				cp := map[string]any{}
				for k, v := range p {
					cp[k] = v
				}
				delete(cp, "cancel_url") // which a retrieve may leave out
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(cp)
				return
			}
		}
		u.fail(w, http.StatusNotFound, "no such payment")
	default:
		u.fail(w, http.StatusNotFound, "no route")
	}
}
