// Eviction at the cap through a whole sandbox over loopback, on memory and PostgreSQL.

package merchants_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/contracttest"
	"github.com/paymock/paymock/internal/pgbackendtest"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/sandbox"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backends are what each test runs on: eviction asks the store, so both
// stores' answers count.
var backends = []struct {
	name string
	make func(t *testing.T) paymock.Backend
}{
	{"memory", func(*testing.T) paymock.Backend { return memory.New() }},
	{"postgres", func(t *testing.T) paymock.Backend { return pgbackendtest.Backend(t) }},
}

// capped is an open-mode sandbox holding at most max merchants, served
// over loopback to a client that checks every answer against the contract
// and fails the test on any 5xx.
type capped struct {
	t      *testing.T
	url    string
	client *http.Client
	sb     *sandbox.Sandbox
}

func newCapped(t *testing.T, b paymock.Backend, max int) *capped {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	sb, err := sandbox.New(sandbox.Config{Backend: b, MaxMerchants: max, PublicURL: "http://" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	sb.Start()
	t.Cleanup(func() { _ = sb.Close(context.Background()) })
	srv.Config.Handler = sb.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return &capped{t: t, url: srv.URL, sb: sb, client: &http.Client{Transport: &contracttest.Transport{T: t, Answers: docs}}}
}

// do sends a request with key and an optional JSON body, and returns the
// status and the decoded JSON answer (nil for none).
func (c *capped) do(method, path, key string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if b, _ := io.ReadAll(resp.Body); len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			c.t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out
}

// must sends a request that must be answered want, and returns the answer.
func (c *capped) must(want int, method, path, key string, body any) map[string]any {
	c.t.Helper()
	st, out := c.do(method, path, key, body)
	if st != want {
		c.t.Fatalf("%s %s: %d %v, want %d", method, path, st, out, want)
	}
	return out
}

// items is the length of a list answer.
func (c *capped) items(path, key string) int {
	c.t.Helper()
	l, _ := c.must(http.StatusOK, "GET", path, key, nil)["items"].([]any)
	return len(l)
}

// refusedAtTheCap checks that a new token is refused with 429 merchant_limit.
func (c *capped) refusedAtTheCap(key string) {
	c.t.Helper()
	st, out := c.do("GET", "/api/v1/payments", key, nil)
	e, _ := out["error"].(map[string]any)
	if st != http.StatusTooManyRequests || e["code"] != "merchant_limit" {
		c.t.Fatalf("a new token at a cap of merchants holding something: %d %v, want 429 merchant_limit", st, out)
	}
}

// holding is one thing a merchant can hold, and how to add it and take
// it away again.
type holding struct {
	name   string
	add    func(c *capped, key string) (id string)
	remove func(c *capped, key, id string)
	list   string // the list the thing is counted in
	listed int    // what the list counts while the thing is held
}

var holdings = []holding{
	{name: "a fault rule", list: "/_sandbox/faults", listed: 1,
		add: func(c *capped, key string) string {
			return c.must(http.StatusCreated, "POST", "/_sandbox/faults", key, map[string]any{"operation": "createPayment", "status": 503})["id"].(string)
		},
		remove: func(c *capped, key, id string) {
			c.must(http.StatusNoContent, "DELETE", "/_sandbox/faults/"+id, key, nil)
		}},
	{name: "an added endpoint", list: "/_sandbox/webhook-endpoints", listed: 1,
		add: func(c *capped, key string) string {
			return c.must(http.StatusCreated, "POST", "/_sandbox/webhook-endpoints", key, map[string]any{"url": "https://hooks.example/in"})["id"].(string)
		},
		remove: func(c *capped, key, id string) {
			c.must(http.StatusNoContent, "DELETE", "/_sandbox/webhook-endpoints/"+id, key, nil)
		}},
	{name: "a payment", list: "/api/v1/payments", listed: 1,
		add: func(c *capped, key string) string {
			return c.must(http.StatusCreated, "POST", "/api/v1/payments", key, map[string]any{
				"amount": 10.5, "currency": "USD", "description": "Order 1234", "expires_in": 3600, "mcc": 5732,
				"metadata":    map[string]any{"order_id": "ord_1234"},
				"customer":    map[string]any{"email": "jane@example.com", "name": "Jane Doe"},
				"success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel",
			})["id"].(string)
		},
		remove: func(c *capped, key, _ string) { c.must(http.StatusNoContent, "POST", "/_sandbox/reset", key, nil) }},
	// The open token and the created one.
	{name: "a created key", list: "/_sandbox/api-keys", listed: 2,
		add: func(c *capped, key string) string {
			return c.must(http.StatusCreated, "POST", "/_sandbox/api-keys", key, nil)["id"].(string)
		},
		remove: func(c *capped, key, id string) {
			c.must(http.StatusNoContent, "DELETE", "/_sandbox/api-keys/"+id, key, nil)
		}},
}

func TestEvict_MerchantsThatHeldSomethingAndNoLongerDoMakeRoom(t *testing.T) {
	const max = 3
	for _, b := range backends {
		for _, h := range holdings {
			t.Run(b.name+"/"+h.name, func(t *testing.T) {
				c := newCapped(t, b.make(t), max)
				keys := []string{"sk_test_tenant_0", "sk_test_tenant_1", "sk_test_tenant_2"}
				ids := make([]string, len(keys))
				for i, k := range keys {
					ids[i] = h.add(c, k)
				}
				// Each is examined and found holding something.
				c.refusedAtTheCap("sk_test_newcomer_0")
				for i, k := range keys {
					h.remove(c, k, ids[i])
				}
				c.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_1", nil)
				if n := c.sb.Merchants().OpenCount(); n != max {
					t.Errorf("%d merchants held, want the cap of %d", n, max)
				}
			})
		}
	}
}

func TestEvict_AMerchantStillHoldingSomethingIsNeverEvicted(t *testing.T) {
	for _, b := range backends {
		for _, h := range holdings {
			t.Run(b.name+"/"+h.name, func(t *testing.T) {
				c := newCapped(t, b.make(t), 2)
				const holder, other = "sk_test_holder", "sk_test_other"
				h.add(c, holder)
				c.must(http.StatusOK, "GET", "/api/v1/payments", other, nil)
				// The empty merchant makes room; the holder is examined and kept.
				c.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_0", nil)
				c.must(http.StatusCreated, "POST", "/_sandbox/faults", "sk_test_newcomer_0", map[string]any{"operation": "createPayment", "status": 503})
				for round := 1; round <= 3; round++ {
					// Used again, the holder is examined again, and kept again.
					if got := c.items(h.list, holder); got != h.listed {
						t.Fatalf("round %d: the holder lists %d in %s, want %d", round, got, h.list, h.listed)
					}
					c.refusedAtTheCap(fmt.Sprint("sk_test_newcomer_", round))
				}
				if got := c.items(h.list, holder); got != h.listed {
					t.Errorf("the holder lists %d in %s at the end, want %d: it was evicted", got, h.list, h.listed)
				}
			})
		}
	}
}
