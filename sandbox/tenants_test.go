// A shared sandbox one tenant cannot read: what the public pages show of
// an open-mode merchant, and what the endpoint list shows of the
// operator's secret.

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/dashboard"
	"github.com/paymock/paymock/merchants"
)

// digestWindows are every 8-character window of the hex SHA-256 of key:
// any 32 bits of the digest a page could carry.
func digestWindows(key string) []string {
	h := sha256.Sum256([]byte(key))
	x := hex.EncodeToString(h[:])
	var out []string
	for i := 0; i+8 <= len(x); i++ {
		out = append(out, x[i:i+8])
	}
	return out
}

func TestPublicPages_ShowNothingDerivedFromTheKey(t *testing.T) {
	const weakKey = "password1" // one a dictionary finds from any part of its digest
	env := newEnv(t)
	checkout, _, _ := env.openPage(weakKey, nil)
	threeDS, _, _ := env.openPage(weakKey, func(b map[string]any) { withCard(b) })
	pages := map[string]string{
		"checkout": env.pageURLOf(weakKey, checkout),
		"3ds":      env.pageURLOf(weakKey, threeDS),
	}
	for name, u := range pages {
		r := env.page(u)
		if r.status != http.StatusOK {
			t.Fatalf("%s page: %d", name, r.status)
		}
		if !strings.Contains(r.body, merchants.OpenMerchantName) {
			t.Errorf("%s page does not name the merchant %q:\n%s", name, merchants.OpenMerchantName, r.body)
		}
		var headers strings.Builder
		for k, vs := range r.header {
			headers.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
		}
		whole := strings.ToLower(r.body + "\n" + headers.String())
		for _, w := range digestWindows(weakKey) {
			if strings.Contains(whole, w) {
				t.Fatalf("%s page carries %q of the key's SHA-256 (%s)", name, w, merchantIDOf(weakKey))
			}
		}
		if strings.Contains(whole, weakKey) {
			t.Errorf("%s page carries the key itself", name)
		}
	}
}

// dashClient is a browser of the dashboard over plain HTTP: a cookie jar,
// no redirects followed, and the CSRF token of the last page read.
type dashClient struct {
	t    testing.TB
	env  *testEnv
	http *http.Client
	csrf string
}

func (e *testEnv) dashClient() *dashClient {
	e.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &dashClient{t: e.t, env: e, http: &http.Client{Transport: e.client.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get reads a dashboard page and keeps its CSRF token.
func (d *dashClient) get(path string) (int, string) {
	d.t.Helper()
	resp, err := d.http.Get(d.env.URL + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	if m := csrfRE.FindStringSubmatch(string(b)); m != nil {
		d.csrf = m[1]
	}
	return resp.StatusCode, string(b)
}

// post sends a form with the last CSRF token and returns the status and
// where it redirects to.
func (d *dashClient) post(path string, form url.Values) (int, string) {
	d.t.Helper()
	st, to, _ := d.postPage(path, form)
	return st, to
}

// postPage is post that returns the page answered too: a refusal's.
func (d *dashClient) postPage(path string, form url.Values) (status int, location, page string) {
	d.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", d.csrf)
	resp, err := d.http.PostForm(d.env.URL+path, form)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// signIn signs in with key and reports whether the dashboard took it.
func (d *dashClient) signIn(key string) bool {
	d.t.Helper()
	d.get("/dashboard/sign-in")
	st, _ := d.post("/dashboard/sign-in", url.Values{"api_key": {key}})
	return st == http.StatusSeeOther
}

// revealed reveals an endpoint's secret and returns the page showing it.
func (d *dashClient) revealed(endpointID string) string {
	d.t.Helper()
	if st, _ := d.get("/dashboard/webhooks"); st != http.StatusOK {
		d.t.Fatalf("GET /dashboard/webhooks: %d", st)
	}
	if st, _ := d.post("/dashboard/webhooks/"+endpointID+"/reveal", url.Values{"next": {"/dashboard/webhooks"}}); st != http.StatusSeeOther {
		d.t.Fatalf("reveal %s: %d", endpointID, st)
	}
	_, body := d.get("/dashboard/webhooks")
	return body
}

var secretFieldRE = regexp.MustCompile(`data-field="secret">([^<]*)<`)

func TestOperatorSecret_IsMaskedForEveryMerchant(t *testing.T) {
	rcv := newReceiver(t, nil)
	env := newEnv(t, withWebhooks(nil, webhookEndpoint(rcv)))
	masked := paymock.MaskKey(testSecret)
	if masked == testSecret || !strings.HasPrefix(masked, "whsec_…") {
		t.Fatalf("MaskKey(secret) = %q", masked)
	}
	for _, key := range []string{keyA, keyB} {
		st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", key, map[string]any{"url": "https://hooks.example/" + key})
		if st != http.StatusCreated {
			t.Fatalf("adding an endpoint: %d %v", st, body)
		}
		own, ownSecret := body["id"].(string), body["secret"].(string)
		if !strings.HasPrefix(ownSecret, "whsec_") || strings.Contains(ownSecret, "…") {
			t.Fatalf("the added endpoint's secret on creation: %q", ownSecret)
		}

		st, list, _ := env.do("GET", "/_sandbox/webhook-endpoints", key, nil)
		if st != http.StatusOK {
			t.Fatalf("list: %d %v", st, list)
		}
		var defaultID string
		for _, it := range list["items"].([]any) {
			ep := it.(map[string]any)
			switch ep["source"] {
			case "default":
				defaultID = ep["id"].(string)
				if ep["secret"] != masked {
					t.Errorf("%s: the --webhook-url endpoint's secret is %q, want %q", key, ep["secret"], masked)
				}
			case "added":
				if ep["secret"] != ownSecret {
					t.Errorf("%s: its own endpoint's secret is %q, want it whole", key, ep["secret"])
				}
			}
		}
		if defaultID == "" {
			t.Fatalf("%s: no default endpoint listed: %v", key, list)
		}
		if st, one, _ := env.do("GET", "/_sandbox/webhook-endpoints/"+defaultID, key, nil); st == http.StatusOK && one["secret"] != masked {
			t.Errorf("%s: GET the default endpoint shows secret %q", key, one["secret"])
		}

		d := env.dashClient()
		if !d.signIn(key) {
			t.Fatalf("%s: dashboard sign-in refused", key)
		}
		page := d.revealed(defaultID)
		if strings.Contains(page, testSecret) || strings.Contains(page, strings.TrimPrefix(testSecret, "whsec_")) {
			t.Errorf("%s: the dashboard reveals the operator's secret", key)
		}
		if got := secretFieldRE.FindStringSubmatch(page); got == nil || html.UnescapeString(got[1]) != masked || !strings.Contains(page, `data-field="secret-masked"`) {
			t.Errorf("%s: the dashboard shows the default endpoint's secret as %v, want %q marked as masked", key, got, masked)
		}
		page = d.revealed(own)
		if got := secretFieldRE.FindStringSubmatch(page); got == nil || html.UnescapeString(got[1]) != ownSecret || strings.Contains(page, `data-field="secret-masked"`) {
			t.Errorf("%s: the dashboard reveals its own endpoint's secret as %v, want it whole", key, got)
		}
	}

	// Deliveries, test events included, are still signed with the whole
	// secret: the receiver verifies them with it.
	_, list, _ := env.do("GET", "/_sandbox/webhook-endpoints", keyA, nil)
	defaultID := list["items"].([]any)[0].(map[string]any)["id"].(string)
	if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints/"+defaultID+"/test", keyA, nil); st != http.StatusAccepted {
		t.Fatalf("test event: %d %v", st, body)
	}
	if d := <-rcv.notify; d.Type != "webhook.test" {
		t.Errorf("the receiver got %q, want webhook.test", d.Type)
	}
}

func TestDashboardSessions_AFloodOfSignInsEndsOnlyTheFloodersOwn(t *testing.T) {
	env := newEnv(t)
	victim := env.dashClient()
	if !victim.signIn(keyB) {
		t.Fatal("sign-in with keyB refused")
	}
	const flood = dashboard.MaxSessionsPerMerchant + 10
	var flooders []*dashClient
	for range flood {
		d := env.dashClient()
		if !d.signIn(keyA) {
			t.Fatal("sign-in with keyA refused")
		}
		flooders = append(flooders, d)
	}
	if st, _ := victim.get("/dashboard/payments"); st != http.StatusOK {
		t.Errorf("another merchant's session after %d sign-ins with one key: %d, want 200", flood, st)
	}
	for i, d := range flooders {
		want := http.StatusOK
		if i < flood-dashboard.MaxSessionsPerMerchant {
			want = http.StatusSeeOther // to the sign-in form: ended
		}
		if st, _ := d.get("/dashboard/payments"); st != want {
			t.Errorf("keyA's sign-in %d of %d: %d, want %d", i+1, flood, st, want)
		}
	}
}

func TestOpenMode_EmptyMerchantsMakeRoomAtTheCap(t *testing.T) {
	env := newEnv(t, withMaxMerchants(4))
	withPayment := env.create("sk_test_paying", nil)
	st, ep, _ := env.do("POST", "/_sandbox/webhook-endpoints", "sk_test_hooked", map[string]any{"url": "https://hooks.example/in"})
	if st != http.StatusCreated {
		t.Fatalf("adding an endpoint: %d %v", st, ep)
	}
	// A tenant fills the rest of the cap with empty merchants.
	for _, k := range []string{"sk_test_empty1", "sk_test_empty2"} {
		if st, body, _ := env.do("GET", "/api/v1/payments", k, nil); st != http.StatusOK {
			t.Fatalf("%s: %d %v", k, st, body)
		}
	}
	// The next merchants get in, each evicting the oldest empty one.
	for _, k := range []string{"sk_test_next1", "sk_test_next2", "sk_test_next3"} {
		if st, body, _ := env.do("GET", "/api/v1/payments", k, nil); st != http.StatusOK {
			t.Fatalf("a new merchant at the cap of empty ones: %d %v", st, body)
		}
	}
	if n := env.sb.Merchants().OpenCount(); n != 4 {
		t.Errorf("%d merchants held, want the cap of 4", n)
	}
	if p := env.get("sk_test_paying", withPayment); p["id"] != withPayment {
		t.Errorf("the merchant with a payment lost it: %v", p)
	}
	if _, l, _ := env.do("GET", "/_sandbox/webhook-endpoints", "sk_test_hooked", nil); len(l["items"].([]any)) != 1 {
		t.Errorf("the merchant with an endpoint lost it: %v", l)
	}
	if !strings.Contains(env.logs.String(), "evicted an empty open-mode merchant") {
		t.Error("no log line for an evicted merchant")
	}

	// Once every merchant held holds something, the cap holds.
	for _, k := range []string{"sk_test_next2", "sk_test_next3"} {
		env.create(k, nil)
	}
	st, body, _ := env.do("GET", "/api/v1/payments", "sk_test_one_too_many", nil)
	if st != http.StatusTooManyRequests || errorOf(t, body)["code"] != "merchant_limit" {
		t.Errorf("a new merchant when none can be evicted: %d %v, want 429 merchant_limit", st, body)
	}
	if p := env.get("sk_test_next3", env.create("sk_test_next3", nil)); p["status"] != "pending" {
		t.Errorf("a held merchant stopped working at the cap: %v", p)
	}
}
