// Reading payments, and what every request meets: unknown routes and
// ids, malformed bodies, the health document and the contract check.

package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestRetrieve_UnknownIDIs404(t *testing.T) {
	env := newEnv(t)
	for _, id := range []string{"pay_doesnotexist", "nothing-like-an-id", "pay_%2F..%2Fx", "%E2%82%AC"} {
		st, body, _ := env.do("GET", "/api/v1/payments/"+id, keyA, nil)
		if st != http.StatusNotFound {
			t.Fatalf("%s: status %d %v", id, st, body)
		}
		if e := errorOf(t, body); e["type"] != "not_found_error" || e["param"] != "id" {
			t.Errorf("%s: %v", id, e)
		}
	}
	// The id in the message is the unescaped one.
	_, body, _ := env.do("GET", "/api/v1/payments/%E2%82%AC", keyA, nil)
	if msg := errorOf(t, body)["message"].(string); !strings.Contains(msg, "€") {
		t.Errorf("path parameter not unescaped: %q", msg)
	}
}

func TestRetrieve_ReturnsWhatCreateReturned(t *testing.T) {
	env := newEnv(t)
	_, created, _ := env.do("POST", "/api/v1/payments", keyA, withCard(validCreate()))
	st, got, _ := env.do("GET", "/api/v1/payments/"+created["id"].(string), keyA, nil)
	if st != http.StatusOK {
		t.Fatalf("status %d", st)
	}
	if fmt.Sprint(got) != fmt.Sprint(created) {
		t.Errorf("retrieve differs from create:\n%v\n%v", got, created)
	}
}

func TestList_Pagination(t *testing.T) {
	tests := []struct {
		stored                int
		query                 string
		wantItems             int
		wantPage, wantPerPage float64
		wantPages, wantTotal  float64
		wantFirstIndexNewest0 int // index (0 = newest) of the first item
	}{
		{0, "", 0, 1, 10, 0, 0, 0},
		{0, "?page=3", 0, 3, 10, 0, 0, 0},
		{20, "", 10, 1, 10, 2, 20, 0},
		{20, "?page=2", 10, 2, 10, 2, 20, 10},
		{20, "?page=3", 0, 3, 10, 2, 20, 0},
		{25, "?page=3", 5, 3, 10, 3, 25, 20},
		{25, "?per_page=1", 1, 1, 1, 25, 25, 0},
		{25, "?per_page=1&page=25", 1, 25, 1, 25, 25, 24},
		{25, "?per_page=1&page=26", 0, 26, 1, 25, 25, 0},
		{25, "?per_page=100", 25, 1, 100, 1, 25, 0},
		{250, "?per_page=100&page=3", 50, 3, 100, 3, 250, 200},
		{250, "?per_page=100&page=2147483647", 0, 2147483647, 100, 3, 250, 0},
		{7, "?page=1&per_page=7", 7, 1, 7, 1, 7, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d stored %s", tc.stored, tc.query), func(t *testing.T) {
			env := newEnv(t)
			ids := seed(t, env, keyA, tc.stored) // oldest first
			st, body, _ := env.do("GET", "/api/v1/payments"+tc.query, keyA, nil)
			if st != http.StatusOK {
				t.Fatalf("status %d: %v", st, body)
			}
			items := body["items"].([]any)
			pg := body["pagination"].(map[string]any)
			if len(items) != tc.wantItems || pg["page"] != tc.wantPage || pg["per_page"] != tc.wantPerPage ||
				pg["total_pages"] != tc.wantPages || pg["total_items"] != tc.wantTotal {
				t.Fatalf("got %d items, pagination %v", len(items), pg)
			}
			for i, it := range items {
				want := ids[len(ids)-1-tc.wantFirstIndexNewest0-i]
				if id := it.(map[string]any)["id"]; id != want {
					t.Fatalf("item %d is %v, want %v (newest first)", i, id, want)
				}
			}
		})
	}
}

// seed creates n payments one clock second apart and returns their ids,
// oldest first.
func seed(t *testing.T, env *testEnv, key string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		st, p, _ := env.do("POST", "/api/v1/payments", key, validCreate())
		if st != http.StatusCreated {
			t.Fatalf("seed: %d %v", st, p)
		}
		ids[i] = p["id"].(string)
		if _, err := env.clocks.Advance(t.Context(), merchantID(t, key), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func TestList_RejectsOutOfRangeValues(t *testing.T) {
	env := newEnv(t)
	for _, q := range []string{"page=0", "page=-1", "page=abc", "page=1.5", "page=", "per_page=0", "per_page=101",
		"per_page=x", "per_page=-3", "page=2147483648", "page=99999999999999999999"} {
		t.Run(q, func(t *testing.T) {
			st, body, _ := env.do("GET", "/api/v1/payments?"+q, keyA, nil)
			if st != http.StatusBadRequest {
				t.Fatalf("status %d: %v", st, body)
			}
			e := errorOf(t, body)
			param := strings.SplitN(q, "=", 2)[0]
			if e["param"] != param {
				t.Errorf("param %v, want %s (%v)", e["param"], param, e)
			}
		})
	}
}

func TestRequests_RejectMalformedBodies(t *testing.T) {
	env := newEnv(t, withBodyLimit(4096))
	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantCode    string
	}{
		{"not JSON", "application/json", `{"amount": 1,`, 400, "invalid_json"},
		{"empty body", "application/json", ``, 400, "body_missing"},
		{"JSON array", "application/json", `[1,2]`, 400, "parameter_invalid"},
		{"JSON null", "application/json", `null`, 400, "parameter_invalid"},
		{"form body", "application/x-www-form-urlencoded", `amount=1`, 415, "unsupported_media_type"},
		{"no content type", "", `{}`, 415, "unsupported_media_type"},
		{"too large", "application/json", `{"description":"` + strings.Repeat("x", 5000) + `"}`, 413, "body_too_large"},
		{"charset is fine", "application/json; charset=utf-8", `{}`, 400, "parameter_missing"},
		{"other JSON types are not", "application/merge-patch+json", `{}`, 415, "unsupported_media_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", env.URL+"/api/v1/payments", strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+keyA)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			st, body, _ := env.send(req)
			if st != tc.wantStatus {
				t.Fatalf("status %d, want %d: %v", st, tc.wantStatus, body)
			}
			if e := errorOf(t, body); e["code"] != tc.wantCode || e["type"] != "invalid_request_error" {
				t.Errorf("error %v, want code %s", e, tc.wantCode)
			}
		})
	}
}

func TestRoutes_UnknownPathAndMethod(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		method, path string
		want         int
		wantType     string
	}{
		{"GET", "/api/v1/nope", 404, "not_found_error"},
		{"GET", "/api/v2/payments", 404, "not_found_error"},
		{"GET", "/nope", 404, "not_found_error"},
		{"DELETE", "/api/v1/payments", 405, "invalid_request_error"},
		{"PUT", "/api/v1/payments/pay_x", 405, "invalid_request_error"},
		{"POST", "/healthz", 405, "invalid_request_error"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			st, body, _ := env.do(tc.method, tc.path, keyA, nil)
			if st != tc.want || errorOf(t, body)["type"] != tc.wantType {
				t.Errorf("status %d body %v", st, body)
			}
		})
	}
}

func TestServer_ServesHealthDocumentAndPages(t *testing.T) {
	env := newEnv(t)
	if st, body, _ := env.do("GET", "/healthz", "", nil); st != 200 || body["status"] != "ok" {
		t.Errorf("healthz %d %v", st, body)
	}
	resp, err := env.client.Get(env.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || got != string(paymock.OpenAPI) {
		t.Errorf("openapi.yaml: %d, %d bytes", resp.StatusCode, len(got))
	}
	_, p, _ := env.do("POST", "/api/v1/payments", keyA, validCreate())
	_, card, _ := env.do("POST", "/api/v1/payments", keyA, withCard(validCreate()))
	for _, u := range []string{p["next_action"].(map[string]any)["url"].(string), card["next_action"].(map[string]any)["url"].(string)} {
		resp, err := env.client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		if page := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(page, "<html") {
			t.Errorf("%s: %d %q", u, resp.StatusCode, page)
		}
	}
}

func TestContract_ServerRefusesToSendAViolatingResponse(t *testing.T) {
	env := newEnv(t, expectingViolations())
	// A payment the API could never have made: the response check must
	// stop it and answer 500 instead.
	bad := paymock.Payment{ID: "pay_" + strings.Repeat("x", 24), MerchantID: merchantID(t, keyA), Currency: "XXX", Amount: 100,
		Status: paymock.StatusPending, Customer: paymock.Customer{ID: "cus_" + strings.Repeat("y", 24), Email: "a@b.co", Name: "A"},
		Description: "d", SuccessURL: "https://a.example", CancelURL: "https://a.example", CheckoutURL: "https://a.example/c"}
	if err := env.store.Insert(t.Context(), bad, -1); err != nil {
		t.Fatal(err)
	}
	st, body, _ := env.do("GET", "/api/v1/payments/"+bad.ID, keyA, nil)
	if st != http.StatusInternalServerError {
		t.Fatalf("status %d: %v", st, body)
	}
	if e := errorOf(t, body); e["type"] != "api_error" || e["code"] != "response_contract_violation" {
		t.Errorf("error %v", e)
	}
	if !strings.Contains(env.logs.String(), "response violates the contract") || !strings.Contains(env.logs.String(), "currency") {
		t.Errorf("violation not logged: %s", env.logs.String())
	}
}

func TestMessages_NameBoundsAsPeopleWriteThem(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		path string
		body any
		want string
	}{
		{"/api/v1/payments?page=2147483648", nil, "page must be at most 2147483647"},
		{"/api/v1/payments", map[string]any{"amount": 0}, "amount must be at least 0.01"},
		{"/api/v1/payments", map[string]any{"amount": 1e9}, "amount must be at most 999999999.99"},
		{"/api/v1/payments", map[string]any{"expires_in": 9999999}, "expires_in must be at most 2592000"},
		{"/api/v1/payments", map[string]any{"customer": nil}, "customer must not be null: it must be an object"},
	}
	for _, tc := range tests {
		method := "GET"
		if tc.body != nil {
			method = "POST"
		}
		_, body, _ := env.do(method, tc.path, keyA, tc.body)
		found := false
		for _, v := range errorOf(t, body)["errors"].([]any) {
			if v.(map[string]any)["message"] == tc.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %v: no message %q in %v", tc.path, tc.body, tc.want, body)
		}
	}
}

func TestPathIDs_AnyIDThatIsNotAPaymentIs404(t *testing.T) {
	env := newEnv(t)
	long := strings.Repeat("x", 3000)
	for _, id := range []string{long, "pay_" + long, "%00", "%ff%fe", "a%2Fb", "..", "💳", " "} {
		for _, p := range []string{"/api/v1/payments/", "/_sandbox/payments/"} {
			method, path := "GET", p+id
			if p == "/_sandbox/payments/" {
				method, path = "POST", p+id+"/complete"
			}
			st, body, _ := env.do(method, path, keyA, nil)
			if st != http.StatusNotFound {
				t.Errorf("%s %.60s: %d %v", method, path, st, body)
			}
		}
		if st, _, _ := env.do("POST", "/_sandbox/events/"+id+"/redeliver", keyA, nil); st != http.StatusNotFound {
			t.Errorf("redeliver %.40s: %d", id, st)
		}
		if st, _, _ := env.do("DELETE", "/_sandbox/faults/"+id, keyA, nil); st != http.StatusNotFound {
			t.Errorf("delete fault %.40s: %d", id, st)
		}
	}
	if strings.Contains(env.logs.String(), long) {
		t.Error("a 3,000-byte path was logged whole")
	}
}

func TestHTTP_405NamesTheAllowedMethods(t *testing.T) {
	env := newEnv(t)
	tests := map[string]string{
		"/api/v1/payments":        "GET, HEAD, POST",
		"/api/v1/payments/pay_x":  "GET, HEAD",
		"/_sandbox/clock/advance": "POST",
		"/_sandbox/faults":        "GET, HEAD, POST, DELETE",
	}
	for path, want := range tests {
		st, _, h := env.do("PUT", path, keyA, nil)
		if st != http.StatusMethodNotAllowed || h.Get("Allow") != want {
			t.Errorf("PUT %s: %d Allow %q, want %q", path, st, h.Get("Allow"), want)
		}
	}
}
