// Webhook deliveries of a running paymock verified the way a merchant's
// Node receiver verifies them: the Standard Webhooks reference library and
// svix, on the raw bytes, with the secret as paymock hands it out.

package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/webhooks"
)

// jsLibraries are the libraries the receiver verifies each delivery with,
// as it names them in its checks.
var jsLibraries = []string{"standardwebhooks", "svix"}

// jsTolerance is both libraries' default: a webhook-timestamp further
// than this from the receiver's clock is refused.
const jsTolerance = 5 * time.Minute

// jsReceiver is testdata/webhooks/receiver.mjs running beside the test.
type jsReceiver struct {
	url string
}

// jsDelivery is one delivery as the receiver got and checked it.
type jsDelivery struct {
	ReceivedAtMS     int64     `json:"received_at_ms"`
	ID               string    `json:"id"`
	Timestamp        string    `json:"timestamp"`
	Signature        string    `json:"signature"`
	Body             []byte    `json:"body"`
	ReencodedDiffers bool      `json:"reencoded_differs"`
	Checks           []jsCheck `json:"checks"`
	Answered         int       `json:"answered"`
}

// jsCheck is one library's verdict on a delivery with one secret.
type jsCheck struct {
	Library     string `json:"library"`
	Secret      int    `json:"secret"`
	OK          bool   `json:"ok"`
	ID          string `json:"id"`
	Type        string `json:"type"`
	Error       string `json:"error"`
	ReencodedOK *bool  `json:"reencoded_ok"`
}

var receiverListening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// startJSReceiver runs the Node receiver with the pinned libraries until
// the test ends.
func startJSReceiver(t *testing.T) *jsReceiver {
	t.Helper()
	needInterop(t)
	suite.npmOnce.Do(func() { suite.npmDir, suite.npmErr = installNPM() })
	if suite.npmErr != nil {
		t.Fatal(suite.npmErr)
	}
	p := startTool(t, "listening on", "node", filepath.Join("interop", "testdata", "webhooks", "receiver.mjs"), suite.npmDir)
	m := receiverListening.FindStringSubmatch(p.logs.String())
	if m == nil {
		t.Fatalf("the receiver did not say where it listens:\n%s", p.logs.String())
	}
	return &jsReceiver{url: m[1]}
}

// route makes the receiver verify name's deliveries with secrets and
// answer its first ones with answers; it returns the URL to post to.
func (r *jsReceiver) route(t *testing.T, name string, secrets []string, answers ...int) string {
	t.Helper()
	c := do(t, http.MethodPut, r.url+"/_routes/"+name, "", map[string]any{"secrets": secrets, "answers": answers})
	if c.status != http.StatusNoContent {
		t.Fatalf("receiver route %s: %d %s", name, c.status, c.body)
	}
	return r.url + "/hooks/" + name
}

// await returns the first n deliveries name received, waiting up to 15 s
// for them; more than n fails the test.
func (r *jsReceiver) await(t *testing.T, name string, n int) []jsDelivery {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := decode[[]jsDelivery](t, do(t, http.MethodGet, r.url+"/_received/"+name, "", nil))
		switch {
		case len(got) > n:
			t.Fatalf("route %s received %d deliveries, want %d: %+v", name, len(got), n, got)
		case len(got) == n:
			return got
		case time.Now().After(deadline):
			t.Fatalf("route %s received %d deliveries within 15 s, want %d", name, len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustVerify fails the test unless both libraries verified d with each of
// secrets secrets, agreed on its id and type (wantType), and d's timestamp
// was within their tolerance of the receiver's clock.
func mustVerify(t *testing.T, d jsDelivery, secrets int, wantType string) {
	t.Helper()
	if len(d.Checks) != secrets*len(jsLibraries) {
		t.Fatalf("delivery %s: %d checks, want %d: %+v", d.ID, len(d.Checks), secrets*len(jsLibraries), d.Checks)
	}
	for _, c := range d.Checks {
		if !c.OK {
			t.Errorf("delivery %s (%s): %s with secret %d refuses it: %s\nwebhook-timestamp %s, webhook-signature %s\nbody %s",
				d.ID, wantType, c.Library, c.Secret, c.Error, d.Timestamp, d.Signature, d.Body)
			continue
		}
		if c.ID != d.ID || c.Type != wantType {
			t.Errorf("delivery %s: %s parsed id %q type %q, want the webhook-id and %q", d.ID, c.Library, c.ID, c.Type, wantType)
		}
	}
	ts := unixSeconds(t, d.Timestamp)
	if off := time.Duration(d.ReceivedAtMS-ts*1000) * time.Millisecond; off.Abs() > jsTolerance {
		t.Errorf("delivery %s: webhook-timestamp %s is %s off the receiver's clock", d.ID, d.Timestamp, off)
	}
}

// mustRefuse fails the test unless every check of d failed.
func mustRefuse(t *testing.T, d jsDelivery, why string) {
	t.Helper()
	if len(d.Checks) == 0 {
		t.Fatalf("delivery %s was not checked", d.ID)
	}
	for _, c := range d.Checks {
		if c.OK {
			t.Errorf("delivery %s (%s): %s with secret %d accepts it", d.ID, why, c.Library, c.Secret)
		}
	}
	if d.Answered != http.StatusBadRequest {
		t.Errorf("delivery %s (%s): the receiver answered %d, want 400", d.ID, why, d.Answered)
	}
}

// hookMerchant calls a running paymock as one merchant and checks every
// answer as a strict client does (contract.Documents.CheckAnswer), against
// the checkout's documents.
type hookMerchant struct {
	t    *testing.T
	url  string
	tok  string
	docs *contract.Documents
}

// newHookMerchant is the merchant of tok on srv.
func newHookMerchant(t *testing.T, srv *server, tok string) *hookMerchant {
	docs := &contract.Documents{Service: paymockDoc(t, "openapi.yaml"), Sandbox: paymockDoc(t, "sandbox/openapi.yaml")}
	return &hookMerchant{t: t, url: srv.URL, tok: tok, docs: docs}
}

// call sends one request, fails the test on another status than want, and
// checks the answer against the contract.
func (m *hookMerchant) call(method, path string, body any, want int) call {
	m.t.Helper()
	c := do(m.t, method, m.url+path, m.tok, body)
	if c.status != want {
		m.t.Fatalf("%s %s: status %d, want %d: %s", method, path, c.status, want, c.body)
	}
	req, err := http.NewRequestWithContext(m.t.Context(), method, m.url+path, nil)
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.docs.CheckAnswer(req, nil, c.status, c.header, c.body); err != nil {
		m.t.Errorf("%s %s: the answer breaks the contract: %v\n%s", method, path, err, c.body)
	}
	return c
}

// pay creates a payment from a body (raw JSON when []byte) and returns its
// id.
func (m *hookMerchant) pay(body any) string {
	m.t.Helper()
	p := decode[struct{ ID string }](m.t, m.call(http.MethodPost, "/api/v1/payments", body, http.StatusCreated))
	return p.ID
}

// hookJournalEvent is an event of GET /_sandbox/events.
type hookJournalEvent struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Deliveries []struct {
		Round      int               `json:"round"`
		EndpointID string            `json:"endpoint_id"`
		State      string            `json:"state"`
		Attempts   []json.RawMessage `json:"attempts"`
	} `json:"deliveries"`
}

// newestEvent is the merchant's newest event in the journal.
func (m *hookMerchant) newestEvent() hookJournalEvent {
	m.t.Helper()
	page := decode[struct{ Items []hookJournalEvent }](m.t, m.call(http.MethodGet, "/_sandbox/events?per_page=1", nil, http.StatusOK))
	if len(page.Items) == 0 {
		m.t.Fatal("the event journal is empty")
	}
	return page.Items[0]
}

// hookEndpoint is an entry of GET /_sandbox/webhook-endpoints.
type hookEndpoint struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Secret string `json:"secret"`
	Source string `json:"source"`
}

// endpointAt is the merchant's endpoint posting to url.
func (m *hookMerchant) endpointAt(url string) hookEndpoint {
	m.t.Helper()
	list := decode[struct{ Items []hookEndpoint }](m.t, m.call(http.MethodGet, "/_sandbox/webhook-endpoints", nil, http.StatusOK))
	for _, e := range list.Items {
		if e.URL == url {
			return e
		}
	}
	m.t.Fatalf("no endpoint posts to %s: %+v", url, list.Items)
	return hookEndpoint{}
}

// addEndpoint adds an endpoint posting to url and returns it as the
// control API answers it.
func (m *hookMerchant) addEndpoint(url string) hookEndpoint {
	m.t.Helper()
	return decode[hookEndpoint](m.t, m.call(http.MethodPost, "/_sandbox/webhook-endpoints", map[string]any{"url": url}, http.StatusCreated))
}

// hookSource is one place a signing secret comes from: it starts paymock
// posting to url and returns the merchant, the endpoint's id and the
// secret in the textual form the hookMerchant is given.
type hookSource struct {
	name  string
	start func(t *testing.T, url string) (m *hookMerchant, endpointID, secret string)
}

// operatorSecret is a --webhook-secret an operator chose, as the README's.
const operatorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var hookSources = []hookSource{
	{"an endpoint added through the control API", func(t *testing.T, url string) (*hookMerchant, string, string) {
		m := newHookMerchant(t, startServer(t), token(t))
		added := m.addEndpoint(url)
		if listed := m.endpointAt(url); listed.Secret != added.Secret {
			t.Errorf("the list shows the added endpoint's secret as %q, the add answered %q", listed.Secret, added.Secret)
		}
		return m, added.ID, added.Secret
	}},
	{"--webhook-url with the operator's --webhook-secret", func(t *testing.T, url string) (*hookMerchant, string, string) {
		m := newHookMerchant(t, startServer(t, "--webhook-url", url, "--webhook-secret", operatorSecret), token(t))
		ep := m.endpointAt(url)
		// Shown masked: the operator hands the secret out, not the API.
		if ep.Source != "default" || ep.Secret != "whsec_…"+operatorSecret[len(operatorSecret)-4:] {
			t.Errorf("the --webhook-url endpoint is listed as source %q secret %q", ep.Source, ep.Secret)
		}
		return m, ep.ID, operatorSecret
	}},
	{"--webhook-url with the secret paymock generated and logged", func(t *testing.T, url string) (*hookMerchant, string, string) {
		srv := startServer(t, "--webhook-url", url)
		var secret string
		for _, line := range strings.Split(srv.logs.String(), "\n") {
			var rec struct {
				Secret string `json:"webhook_secret"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Secret != "" {
				secret = rec.Secret
			}
		}
		if secret == "" {
			t.Fatalf("paymock logged no generated webhook_secret:\n%s", srv.logs.String())
		}
		m := newHookMerchant(t, srv, token(t))
		return m, m.endpointAt(url).ID, secret
	}},
	{"a config file's endpoint", func(t *testing.T, url string) (*hookMerchant, string, string) {
		const key, secret = "sk_test_interop_hooks_config", "whsec_c2VjcmV0IG9mIHRoZSBjb25maWcgZmlsZSdzIGVuZHBvaW50"
		file := filepath.Join(t.TempDir(), "paymock.yaml")
		conf := fmt.Sprintf("merchants:\n  - name: hooks\n    api_keys: [%s]\n    webhooks:\n      - {url: %q, secret: %q}\n", key, url, secret)
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		m := newHookMerchant(t, startServer(t, "--config", file), key)
		ep := m.endpointAt(url)
		if ep.Secret != secret {
			t.Errorf("the config file's endpoint is listed with secret %q, want it whole", ep.Secret)
		}
		return m, ep.ID, secret
	}},
}

// hookEvent makes one event of a type on a merchant's endpoint.
type hookEvent struct {
	typ  string
	make func(m *hookMerchant, endpointID string)
}

var hookEvents = []hookEvent{
	{"payment.completed", func(m *hookMerchant, _ string) {
		m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/complete", nil, http.StatusOK)
	}},
	{"payment.failed", func(m *hookMerchant, _ string) {
		m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/fail", nil, http.StatusOK)
	}},
	{"payment.expired", func(m *hookMerchant, _ string) {
		m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/expire", nil, http.StatusOK)
	}},
	{"webhook.test", func(m *hookMerchant, endpointID string) {
		m.call(http.MethodPost, "/_sandbox/webhook-endpoints/"+endpointID+"/test", nil, http.StatusAccepted)
	}},
}

func TestWebhooksJS_EveryEventTypeVerifiesWithEverySecretSource(t *testing.T) {
	rcv := startJSReceiver(t)
	for i, src := range hookSources {
		t.Run(src.name, func(t *testing.T) {
			name := fmt.Sprintf("source%d", i)
			url := rcv.url + "/hooks/" + name
			m, endpointID, secret := src.start(t, url)
			rcv.route(t, name, []string{secret})
			for n, ev := range hookEvents {
				ev.make(m, endpointID)
				d := rcv.await(t, name, n+1)[n]
				mustVerify(t, d, 1, ev.typ)
				if got := m.newestEvent(); got.ID != d.ID || got.Type != ev.typ {
					t.Errorf("%s: the journal's newest event is %s %s, the delivery's webhook-id %s", ev.typ, got.ID, got.Type, d.ID)
				}
			}
		})
	}
}

func TestWebhooksJS_RawBytesVerifyWhereReencodingChangesThem(t *testing.T) {
	rcv := startJSReceiver(t)
	m := newHookMerchant(t, startServer(t), token(t))
	secret := m.addEndpoint(rcv.url + "/hooks/raw").Secret
	rcv.route(t, "raw", []string{secret})
	tests := []struct {
		name string
		// fields are the create's fields after amount, currency and
		// description, as raw JSON; keep is text the body must carry as
		// sent, which a re-encoding would change.
		amount, description, metadata string
		keep                          []string
	}{
		{"non-ASCII text", `10.00`, `"Café Zoë – 李 🎉"`,
			`{"note": "é 🎉 👩‍👩‍👧 e` + "\u0301" + ` ‮rtl‬ ` + "\u2028\u2029\u200b\ufeff" + ` end"}`,
			[]string{"Café Zoë – 李 🎉", "e\u0301 \u202ertl\u202c \u2028\u2029\u200b\ufeff end"}},
		{"numbers a parser rounds or reformats", `10.50`, `"Order 1"`,
			`{"big": 12345678901234567890, "ratio": 1.10, "exp": 1e2, "neg": -0.0}`,
			[]string{`"amount":10.50`, `12345678901234567890`, `1.10`, `1e2`, `-0.0`}},
		// Only metadata is kept as sent: paymock writes the description
		// in its own form, as any field of the payment.
		{"escapes a serializer writes otherwise", `7.00`, `"Order 3"`,
			`{"esc": "\u00e9\u263a \/ <b>&amp;</b> \" \\ \t"}`,
			[]string{`\u00e9\u263a \/ <b>&amp;</b> \" \\ \t`}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"amount": %s, "currency": "EUR", "description": %s, "metadata": %s, "expires_in": 3600, "mcc": 5732,
				"customer": {"email": "jane@example.com", "name": "Zoë"},
				"success_url": "https://shop.example.com/ok", "cancel_url": "https://shop.example.com/no"}`,
				tc.amount, tc.description, tc.metadata)
			m.call(http.MethodPost, "/_sandbox/payments/"+m.pay([]byte(body))+"/complete", nil, http.StatusOK)
			d := rcv.await(t, "raw", i+1)[i]
			mustVerify(t, d, 1, "payment.completed")
			for _, s := range tc.keep {
				if !bytes.Contains(d.Body, []byte(s)) {
					t.Errorf("the body does not carry %q as sent, so this case no longer tests what it says:\n%s", s, d.Body)
				}
			}
			if !d.ReencodedDiffers {
				t.Errorf("JSON.stringify(JSON.parse(body)) is the body itself, so this case no longer tests raw bytes:\n%s", d.Body)
			}
			for _, c := range d.Checks {
				if c.ReencodedOK == nil || *c.ReencodedOK {
					t.Errorf("%s verified the re-encoded body (%v): the libraries are not checking the bytes", c.Library, c.ReencodedOK)
				}
			}
		})
	}
}

// unixSeconds is a webhook-timestamp's unix seconds.
func unixSeconds(t *testing.T, ts string) int64 {
	t.Helper()
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q is not unix seconds", ts)
	}
	return sec
}

// nextSecond waits until the unix second after ts, so that a send made
// then has a timestamp, and a signature, of its own.
func nextSecond(t *testing.T, ts string) {
	t.Helper()
	time.Sleep(time.Until(time.Unix(unixSeconds(t, ts)+1, 0)))
}

func TestWebhooksJS_RetriesAndRedeliveriesKeepTheIDWithAFreshSignature(t *testing.T) {
	rcv := startJSReceiver(t)
	srv := startServer(t)
	tests := []struct {
		name  string
		first int // the receiver's answer to the first send
		again func(m *hookMerchant, ev hookJournalEvent)
	}{
		{"a retry after a 503", http.StatusServiceUnavailable, func(m *hookMerchant, ev hookJournalEvent) {
			if ev.Deliveries[0].State != "pending" {
				t.Errorf("after a 503 the delivery is %s, want pending", ev.Deliveries[0].State)
			}
			// The first retry is due 5 s on, on the merchant's frozen clock.
			m.call(http.MethodPost, "/_sandbox/clock/advance", map[string]any{"seconds": 5}, http.StatusOK)
		}},
		{"a redelivery of a delivery failed by a 410", http.StatusGone, func(m *hookMerchant, ev hookJournalEvent) {
			if ev.Deliveries[0].State != "failed" {
				t.Errorf("after a 410 the delivery is %s, want failed", ev.Deliveries[0].State)
			}
			m.call(http.MethodPost, "/_sandbox/events/"+ev.ID+"/redeliver", nil, http.StatusAccepted)
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newHookMerchant(t, srv, token(t))
			name := fmt.Sprintf("again%d", i)
			secret := m.addEndpoint(rcv.url + "/hooks/" + name).Secret
			rcv.route(t, name, []string{secret}, tc.first)
			m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/complete", nil, http.StatusOK)
			first := rcv.await(t, name, 1)[0]
			mustVerify(t, first, 1, "payment.completed")
			nextSecond(t, first.Timestamp)
			tc.again(m, waitForAttempt(t, m, first.ID))
			second := rcv.await(t, name, 2)[1]
			mustVerify(t, second, 1, "payment.completed")
			if second.ID != first.ID {
				t.Errorf("webhook-id %s on the second send, %s on the first", second.ID, first.ID)
			}
			if unixSeconds(t, second.Timestamp) <= unixSeconds(t, first.Timestamp) || second.Signature == first.Signature {
				t.Errorf("the second send has timestamp %s signature %s, the first %s %s: want fresh ones",
					second.Timestamp, second.Signature, first.Timestamp, first.Signature)
			}
			if !bytes.Equal(second.Body, first.Body) {
				t.Errorf("the second send's body differs:\n%s\n%s", first.Body, second.Body)
			}
		})
	}
}

// waitForAttempt is event id once its first delivery's first answer is
// recorded: the receiver has its copy a moment before paymock has the
// answer.
func waitForAttempt(t *testing.T, m *hookMerchant, id string) hookJournalEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ev := m.newestEvent()
		if ev.ID != id || len(ev.Deliveries) == 0 {
			t.Fatalf("the newest event is %+v, want %s with a delivery", ev, id)
		}
		if len(ev.Deliveries[0].Attempts) > 0 {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s: no attempt recorded within 15 s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWebhooksJS_TimestampsAreRealTimeWhenTheMerchantsClockIsAhead(t *testing.T) {
	rcv := startJSReceiver(t)
	srv := startServer(t)
	tests := []struct {
		name    string
		advance int // seconds, within the one-year cap of one advance
	}{
		{"three days", 3 * 24 * 3600},
		{"three hundred days", 300 * 24 * 3600},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newHookMerchant(t, srv, token(t))
			name := fmt.Sprintf("ahead%d", i)
			secret := m.addEndpoint(rcv.url + "/hooks/" + name).Secret
			rcv.route(t, name, []string{secret})
			// Expires an hour on: the advance expires it on the way.
			m.pay(createBody(nil))
			m.call(http.MethodPost, "/_sandbox/clock/advance", map[string]any{"seconds": tc.advance}, http.StatusOK)
			m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/complete", nil, http.StatusOK)
			got := rcv.await(t, name, 2)
			mustVerify(t, got[0], 1, "payment.expired")
			mustVerify(t, got[1], 1, "payment.completed")
			// The body keeps the merchant's time: only the header is real.
			var body struct {
				CreatedAt time.Time `json:"created_at"`
			}
			if err := json.Unmarshal(got[1].Body, &body); err != nil {
				t.Fatal(err)
			}
			if ahead := body.CreatedAt.Sub(time.UnixMilli(got[1].ReceivedAtMS)); ahead < time.Duration(tc.advance)*time.Second-jsTolerance {
				t.Errorf("created_at %s is only %s ahead of real time: the case no longer runs on a clock ahead", body.CreatedAt, ahead)
			}
		})
	}
}

func TestWebhooksJS_LibrariesRefuseWhatIsNotPaymocksSignature(t *testing.T) {
	rcv := startJSReceiver(t)
	srv := startServer(t)
	tests := []struct {
		name  string
		fault map[string]any // a webhook fault rule for the one send, or nil
		wrong bool           // verify with another endpoint's secret
	}{
		{"a bad_signature fault", map[string]any{"bad_signature": true}, false},
		{"a timestamp 10 minutes old", map[string]any{"timestamp_skew_s": -600}, false},
		{"a timestamp 10 minutes ahead", map[string]any{"timestamp_skew_s": 600}, false},
		{"another endpoint's secret", nil, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newHookMerchant(t, srv, token(t))
			name := fmt.Sprintf("refuse%d", i)
			secret := m.addEndpoint(rcv.url + "/hooks/" + name).Secret
			if tc.wrong {
				secret = m.addEndpoint(rcv.url + "/hooks/unused").Secret
			}
			rcv.route(t, name, []string{secret})
			if tc.fault != nil {
				rule := map[string]any{"target": "webhooks", "times": 1}
				for k, v := range tc.fault {
					rule[k] = v
				}
				m.call(http.MethodPost, "/_sandbox/faults", rule, http.StatusCreated)
			}
			m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/complete", nil, http.StatusOK)
			mustRefuse(t, rcv.await(t, name, 1)[0], tc.name)
		})
	}
}

// Go's base64 decoder skips line breaks, so paymock once accepted a
// secret pasted with them (a CRLF line ending, a YAML block) and signed
// with it, while the merchant's Node receiver, given the same text, could
// not even be constructed. paymock now refuses such a secret at start.
func TestWebhooksJS_SecretsTheLibrariesRefuseAreRefusedAtStart(t *testing.T) {
	rcv := startJSReceiver(t)
	tests := []struct {
		name   string
		secret string
	}{
		{"a CRLF line ending", operatorSecret + "\r\n"},
		{"a line break inside", operatorSecret[:20] + "\n" + operatorSecret[20:]},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The merchant's side: both constructors throw on the text.
			name := fmt.Sprintf("linebreak%d", i)
			url := rcv.route(t, name, []string{tc.secret})
			body := []byte(`{"id":"evt_1","type":"webhook.test"}`)
			now := time.Now()
			sig, err := webhooks.Sign(operatorSecret, "evt_1", now, body)
			if err != nil {
				t.Fatal(err)
			}
			c := doWith(t, http.MethodPost, url, "", body, func(h http.Header) {
				h.Set(webhooks.HeaderID, "evt_1")
				h.Set(webhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
				h.Set(webhooks.HeaderSignature, sig)
			})
			if c.status != http.StatusBadRequest {
				t.Fatalf("the receiver answered %d", c.status)
			}
			mustRefuse(t, rcv.await(t, name, 1)[0], tc.name)
			// paymock's side: the flag is refused before anything is signed.
			needInterop(t)
			out, err := runToolErr(t, 30*time.Second, suite.root, nil, suite.bin,
				"--addr", "127.0.0.1:0", "--webhook-url", url, "--webhook-secret", tc.secret)
			if err == nil || !strings.Contains(out, "line break") {
				t.Errorf("paymock started with the secret, or refused it for another reason (%v):\n%s", err, out)
			}
		})
	}
}

// The messages a webhook fault adds or changes are still paymock's, so a
// hookMerchant rehearsing with them must be able to verify every one.
func TestWebhooksJS_FaultShapedMessagesStillVerify(t *testing.T) {
	rcv := startJSReceiver(t)
	srv := startServer(t)
	tests := []struct {
		name  string
		fault map[string]any
		// advance is how far to move the merchant's clock before the
		// messages are due (a delay runs on it).
		advance int
		types   []string // of the messages, in the order they arrive
		inBody  string   // in the last message's body
	}{
		{"duplicate", map[string]any{"duplicate": 3}, 0, []string{"payment.completed", "payment.completed", "payment.completed"}, ""},
		{"unknown_type", map[string]any{"unknown_type": true}, 0, []string{"payment.paymock_unknown", "payment.completed"}, ""},
		{"extra_fields", map[string]any{"extra_fields": true}, 0, []string{"payment.completed"}, `"paymock_extra"`},
		{"delay_ms", map[string]any{"delay_ms": 30000}, 30, []string{"payment.completed"}, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newHookMerchant(t, srv, token(t))
			name := fmt.Sprintf("fault%d", i)
			secret := m.addEndpoint(rcv.url + "/hooks/" + name).Secret
			rcv.route(t, name, []string{secret})
			rule := map[string]any{"target": "webhooks", "times": 1}
			for k, v := range tc.fault {
				rule[k] = v
			}
			m.call(http.MethodPost, "/_sandbox/faults", rule, http.StatusCreated)
			m.call(http.MethodPost, "/_sandbox/payments/"+m.pay(createBody(nil))+"/complete", nil, http.StatusOK)
			if tc.advance > 0 {
				m.call(http.MethodPost, "/_sandbox/clock/advance", map[string]any{"seconds": tc.advance}, http.StatusOK)
			}
			got := rcv.await(t, name, len(tc.types))
			for j, typ := range tc.types {
				mustVerify(t, got[j], 1, typ)
			}
			if last := got[len(got)-1]; !bytes.Contains(last.Body, []byte(tc.inBody)) {
				t.Errorf("the body lacks %s: %s", tc.inBody, last.Body)
			}
		})
	}
}
