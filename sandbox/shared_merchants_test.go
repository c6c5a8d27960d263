// Run-time API keys, webhook endpoints and open-mode merchants shared by
// two replicas over one PostgreSQL database, over real HTTP: what one
// replica makes or revokes counts on the other at once.

package sandbox

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/pgtest"
)

// sharedReplicas builds n sandboxes on one new database, each with its own
// store and server, as n replicas behind a load balancer; each is checked
// against the contract like newEnv's. It returns them and the database's
// URL.
func sharedReplicas(t *testing.T, n int, merchants ...paymock.Merchant) ([]*testEnv, string) {
	t.Helper()
	dbURL := pgtest.URL(t)
	return replicaEnvsOn(t, dbURL, n, withMerchants(merchants...)), dbURL
}

// items is the "items" of a list answer.
func items(t *testing.T, body map[string]any) []any {
	t.Helper()
	list, ok := body["items"].([]any)
	if !ok {
		t.Fatalf("no items in %v", body)
	}
	return list
}

func TestSharedKeys_CreatedOnOneReplicaWorksOnAnotherAndRevokedIsRefusedOnEvery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		merchants []paymock.Merchant
		key       string // the key that creates the new one
	}{
		{"open mode", nil, "sk_test_open_merchant"},
		{"configured merchant", []paymock.Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme_cfg"}}}, "sk_test_acme_cfg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			envs, _ := sharedReplicas(t, 2, tc.merchants...)
			a, b := envs[0], envs[1]
			st, k, _ := a.do("POST", "/_sandbox/api-keys", tc.key, nil)
			if st != http.StatusCreated {
				t.Fatalf("create on A: %d %v", st, k)
			}
			key, id := k["key"].(string), k["id"].(string)
			if st, body, _ := b.do("GET", "/api/v1/payments", key, nil); st != http.StatusOK {
				t.Errorf("the new key on B: %d %v", st, body)
			}
			_, onA, _ := a.do("GET", "/_sandbox/api-keys", key, nil)
			_, onB, _ := b.do("GET", "/_sandbox/api-keys", key, nil)
			listA, listB := items(t, onA), items(t, onB)
			if len(listA) != 2 || len(listB) != 2 || listA[1].(map[string]any)["id"] != id ||
				listB[1].(map[string]any)["id"] != id || listA[0].(map[string]any)["id"] != listB[0].(map[string]any)["id"] {
				t.Errorf("keys listed on A %v and on B %v; want the same two", listA, listB)
			}

			if st, body, _ := b.do("DELETE", "/_sandbox/api-keys/"+id, tc.key, nil); st != http.StatusNoContent {
				t.Fatalf("revoke on B: %d %v", st, body)
			}
			// A serves from its copy until it hears of the revocation (a
			// notification, docs/postgres.md): once it has, the key is refused.
			heard(t, a)
			st, body, _ := a.do("GET", "/api/v1/payments", key, nil)
			if st != http.StatusUnauthorized || errorOf(t, body)["code"] != "api_key_invalid" {
				t.Errorf("the key revoked on B, on A once heard: %d %v; want 401 api_key_invalid", st, body)
			}
			for i, env := range envs {
				if _, body, _ := env.do("GET", "/_sandbox/api-keys", tc.key, nil); len(items(t, body)) != 1 {
					t.Errorf("replica %d lists %v after the revoke; want the first key only", i, items(t, body))
				}
			}
		})
	}
}

// dashboardSession is a browser signed in to one replica's dashboard.
type dashboardSession struct {
	t      *testing.T
	base   string
	client *http.Client
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (d *dashboardSession) get(path string) string {
	d.t.Helper()
	resp, err := d.client.Get(d.base + path)
	if err != nil {
		d.t.Fatal(err)
	}
	body := readAll(d.t, resp)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	return body
}

// post sends a form of the page at from, with that page's CSRF token, and
// returns the page it leads to.
func (d *dashboardSession) post(from, path string, form url.Values) string {
	d.t.Helper()
	m := csrfRE.FindStringSubmatch(d.get(from))
	if m == nil {
		d.t.Fatalf("no csrf token on %s", from)
	}
	form.Set("csrf", m[1])
	resp, err := d.client.PostForm(d.base+path, form)
	if err != nil {
		d.t.Fatal(err)
	}
	body := readAll(d.t, resp)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("POST %s: %d\n%s", path, resp.StatusCode, body)
	}
	return body
}

// signIn signs in to env's dashboard with key.
func signIn(t *testing.T, env *testEnv, key string) *dashboardSession {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &dashboardSession{t: t, base: env.URL, client: &http.Client{Jar: jar}}
	page := d.post("/dashboard/sign-in", "/dashboard/sign-in", url.Values{"api_key": {key}})
	if !strings.Contains(page, "Sign out") && !strings.Contains(page, "sign-out") {
		t.Fatalf("not signed in:\n%s", page)
	}
	return d
}

func TestSharedEndpoints_AddedDisabledAndDeletedOnOneReplicaCountOnEvery(t *testing.T) {
	envs, _ := sharedReplicas(t, 2)
	a, b := envs[0], envs[1]
	rcv := newRawReceiver(t)
	st, ep, _ := a.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": rcv.srv.URL + "/hooks"})
	if st != http.StatusCreated {
		t.Fatalf("add on A: %d %v", st, ep)
	}
	id, secret := ep["id"].(string), ep["secret"].(string)
	_, listed, _ := b.do("GET", "/_sandbox/webhook-endpoints", keyA, nil)
	if l := items(t, listed); len(l) != 1 || l[0].(map[string]any)["id"] != id || l[0].(map[string]any)["secret"] != secret {
		t.Fatalf("B lists %v; want A's endpoint with its secret", l)
	}

	// An event fired on B goes to the endpoint added on A, signed with its
	// secret.
	pay := b.create(keyA, nil)
	b.do("POST", "/_sandbox/payments/"+pay+"/complete", keyA, nil)
	if err := verify(t, secret, rcv.next(t)); err != nil {
		t.Errorf("the delivery fired on B does not verify with the secret A made: %v", err)
	}

	// Disabled in A's dashboard: B's next event does not go there.
	dashA := signIn(t, a, keyA)
	dashA.post("/dashboard/webhooks/"+id, "/dashboard/webhooks/"+id+"/disable", url.Values{})
	pay = b.create(keyA, nil)
	b.do("POST", "/_sandbox/payments/"+pay+"/complete", keyA, nil)
	rcv.none(t)
	if _, listed, _ := b.do("GET", "/_sandbox/webhook-endpoints", keyA, nil); items(t, listed)[0].(map[string]any)["disabled"] != true {
		t.Errorf("B lists the endpoint A disabled as %v", items(t, listed)[0])
	}

	// Its secret is revealed in B's dashboard, which never saw it made;
	// enabled there, it receives A's next event.
	dashB := signIn(t, b, keyA)
	// html/template writes a "+" of the base64 as "&#43;".
	if page := dashB.post("/dashboard/webhooks/"+id, "/dashboard/webhooks/"+id+"/reveal", url.Values{}); !strings.Contains(html.UnescapeString(page), secret) {
		t.Errorf("B's dashboard did not reveal the secret:\n%s", page)
	}
	dashB.post("/dashboard/webhooks/"+id, "/dashboard/webhooks/"+id+"/enable", url.Values{})
	pay = a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+pay+"/fail", keyA, nil)
	if err := verify(t, secret, rcv.next(t)); err != nil {
		t.Errorf("after enabling on B: %v", err)
	}

	// Deleted on B: A's next event goes nowhere.
	if st, body, _ := b.do("DELETE", "/_sandbox/webhook-endpoints/"+id, keyA, nil); st != http.StatusNoContent {
		t.Fatalf("delete on B: %d %v", st, body)
	}
	pay = a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+pay+"/complete", keyA, nil)
	rcv.none(t)
	if _, listed, _ := a.do("GET", "/_sandbox/webhook-endpoints", keyA, nil); len(items(t, listed)) != 0 {
		t.Errorf("A lists %v after B deleted it", items(t, listed))
	}
}

func TestSharedMerchants_CheckoutPageOfAnOpenModePaymentOnAReplicaThatNeverSawTheToken(t *testing.T) {
	envs, _ := sharedReplicas(t, 2)
	a, b := envs[0], envs[1]
	id, u, _ := a.openPage(keyA, nil)
	onB := strings.Replace(u, a.URL, b.URL, 1)
	if b.sb.Merchants().OpenCount() != 0 {
		t.Fatal("B holds a merchant before any request")
	}
	r := b.page(onB)
	wantHTMLPage(t, r, http.StatusOK)
	if !strings.Contains(r.body, `data-action="pay"`) {
		t.Fatalf("B's checkout page has no pay button:\n%s", r.body)
	}
	// Paid on B's page: A sees it completed.
	r = b.postPage(onB, act(tokenOf(t, r.body), "pay"), nil)
	if r.status >= 400 {
		t.Fatalf("paying on B's page: %d\n%s", r.status, r.body)
	}
	if p := a.get(keyA, id); p["status"] != "completed" {
		t.Errorf("after paying on B the payment on A is %v", p["status"])
	}

	// B forgets the merchant as idle: A is untouched, and the token on B
	// is the same merchant again, with its payment.
	gone := b.sb.ForgetIdle(time.Now().Add(DefaultMerchantIdleTTL + time.Minute))
	if len(gone) != 1 {
		t.Fatalf("B forgot %v, want the one merchant it held", gone)
	}
	for i, env := range envs {
		if p := env.get(keyA, id); p["id"] != id {
			t.Errorf("replica %d after B forgot: %v", i, p)
		}
	}
}

func TestSharedKeys_DatabaseDownIs503ForKeysAndEndpointsTheStoreKeepsThenRecovers(t *testing.T) {
	const configured = "sk_test_acme_cfg"
	envs, dbURL := sharedReplicas(t, 1, paymock.Merchant{Name: "acme", APIKeys: []string{configured}})
	env := envs[0]
	_, k, _ := env.do("POST", "/_sandbox/api-keys", configured, nil)
	created := k["key"].(string)

	// A plain client: the validating one fails a test on any 5xx. The
	// server still checks its answers against the contract.
	call := func(method, path, key string, body any) (int, map[string]any) {
		resp, err := http.DefaultClient.Do(env.request(method, path, key, body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	restore := pgtest.CutOff(t, dbURL)
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
	}{
		{"a created key on the service API", "GET", "/api/v1/payments", created, nil},
		{"a created key on the control API", "GET", "/_sandbox/clock", created, nil},
		{"listing keys", "GET", "/_sandbox/api-keys", configured, nil},
		{"creating a key", "POST", "/_sandbox/api-keys", configured, nil},
		{"listing endpoints", "GET", "/_sandbox/webhook-endpoints", configured, nil},
		{"adding an endpoint", "POST", "/_sandbox/webhook-endpoints", configured, map[string]any{"url": "https://h.example/in"}},
	} {
		start := time.Now()
		st, body := call(tc.method, tc.path, tc.key, tc.body)
		if e, _ := body["error"].(map[string]any); st != http.StatusServiceUnavailable || e["code"] != "store_unavailable" {
			t.Errorf("%s with the database down: %d %v; want 503 store_unavailable", tc.name, st, body)
		}
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("%s took %s to fail", tc.name, took)
		}
	}

	restore()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, _ := call("GET", "/api/v1/payments", created, nil)
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d 15 s after the database came back", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heard returns once env's PostgreSQL store has heard of every change
// committed by any replica so far (postgres.Store.Sync).
func heard(t *testing.T, env *testEnv) {
	t.Helper()
	s, ok := env.store.(interface{ Sync(context.Context) error })
	if !ok {
		t.Fatalf("store %T cannot sync", env.store)
	}
	if err := s.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}
