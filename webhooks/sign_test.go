package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
)

func TestSignMatchesIndependentlyComputedVector(t *testing.T) {
	// The secret of the Standard Webhooks reference tests.
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		msgID  = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		body   = `{"test": 2432232314}`
	)
	ts := time.Unix(1614265330, 0)

	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "." + body))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))

	got, err := Sign(secret, msgID, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
	// The published vector of the scheme, for this secret, id, time and body.
	const vector = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	if got != vector {
		t.Errorf("Sign = %q, want the Standard Webhooks test vector %q", got, vector)
	}

	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	refSig, err := ref.Sign(msgID, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got != refSig {
		t.Errorf("Sign = %q, reference library signs %q", got, refSig)
	}
}

func TestSignVerifiesWithReferenceLibraryAndNotWithAnotherSecret(t *testing.T) {
	other, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","type":"payment.completed"}`)
	now := time.Now()
	sig, err := Sign(testSecret, "evt_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)

	for _, tc := range []struct {
		name    string
		secret  string
		wantErr bool
	}{
		{"signing secret verifies", testSecret, false},
		{"another secret does not", other, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wh, err := standardwebhooks.NewWebhook(tc.secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(body, h); (err != nil) != tc.wantErr {
				t.Errorf("Verify = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestSignRejectsMalformedSecrets(t *testing.T) {
	for _, tc := range []struct{ name, secret string }{
		{"no prefix", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"prefix only", "whsec_"},
		{"not base64", "whsec_k3y!"},
		// Go's decoder skips these; the JavaScript libraries throw on them
		// (interop's TestWebhooksJS_SecretsTheLibrariesRefuseAreRefusedAtStart).
		{"line break", "whsec_MfKQ9r8GKYqrTwjU\nPD8ILPZIo2LaLaSw"},
		{"trailing CRLF", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\r\n"},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Sign(tc.secret, "evt_1", time.Now(), []byte("{}")); err == nil {
				t.Errorf("Sign accepted secret %q", tc.secret)
			}
		})
	}
}

func TestGenerateSecretIsUsableAndFresh(t *testing.T) {
	a, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("two generated secrets are equal")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 24 {
		t.Errorf("GenerateSecret = %q: want whsec_ and base64 of 24 bytes", a)
	}
	if _, err := Sign(a, "evt_1", time.Now(), []byte("{}")); err != nil {
		t.Errorf("a generated secret does not sign: %v", err)
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	good := paymock.WebhookEndpoint{URL: "https://hooks.example/in", Secret: testSecret}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error
	}{
		{"relative url", Config{DefaultEndpoints: []paymock.WebhookEndpoint{{URL: "/hooks", Secret: testSecret}}}, "absolute"},
		{"ftp url", Config{DefaultEndpoints: []paymock.WebhookEndpoint{{URL: "ftp://h.example/x", Secret: testSecret}}}, "absolute"},
		{"url without host", Config{DefaultEndpoints: []paymock.WebhookEndpoint{{URL: "http:///x", Secret: testSecret}}}, "no host"},
		{"secret without prefix", Config{DefaultEndpoints: []paymock.WebhookEndpoint{{URL: good.URL, Secret: "abc"}}}, "whsec_"},
		{"secret not base64", Config{DefaultEndpoints: []paymock.WebhookEndpoint{good, {URL: good.URL, Secret: "whsec_k3y!"}}}, "endpoint 2"},
		{"zero retry delay", Config{Retry: []time.Duration{time.Second, 0}}, "retry delay 2"},
		{"negative timeout", Config{Timeout: -time.Second}, "Timeout"},
		{"negative senders", Config{Senders: -1}, "Senders"},
		{"negative merchant senders", Config{MerchantSenders: -1}, "MerchantSenders"},
		{"no outbox", Config{Outbox: nil}, "Outbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "no outbox" {
				tc.cfg.Outbox = memory.NewOutbox(memory.NewPayments())
			}
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error about %q", err, tc.want)
			}
			for _, ep := range tc.cfg.DefaultEndpoints {
				if strings.Contains(err.Error(), strings.TrimPrefix(ep.Secret, "whsec_")) && ep.Secret != "" {
					t.Errorf("error %q repeats the secret", err)
				}
			}
		})
	}
	if _, err := New(Config{Outbox: memory.NewOutbox(memory.NewPayments()), DefaultEndpoints: []paymock.WebhookEndpoint{good}}); err != nil {
		t.Errorf("New with a valid endpoint: %v", err)
	}
}

func TestEndpoint_RemembersOnlyValidEndpointsEachWithItsOwnID(t *testing.T) {
	d := newDispatcher(t, newFakeClock(), Config{})
	for _, tc := range []struct {
		name    string
		ep      paymock.WebhookEndpoint
		wantErr string
	}{
		{"first id", paymock.WebhookEndpoint{ID: "we_1", URL: "https://a.example/hooks", Secret: testSecret}, ""},
		{"same URL and secret, another id", paymock.WebhookEndpoint{ID: "we_2", URL: "https://a.example/hooks", Secret: testSecret}, ""},
		{"bad secret", paymock.WebhookEndpoint{ID: "we_3", URL: "https://a.example/hooks", Secret: "nope"}, "must start with whsec_"},
		{"bad secret again", paymock.WebhookEndpoint{ID: "we_3", URL: "https://a.example/hooks", Secret: "nope"}, "must start with whsec_"},
		{"no scheme", paymock.WebhookEndpoint{ID: "we_4", URL: "a.example/hooks", Secret: testSecret}, "absolute http or https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := d.endpoint(tc.ep)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := parseEndpoint(tc.ep)
			if e.id != tc.ep.ID || e.url != want.url || e.display != want.display || string(e.key) != string(want.key) {
				t.Fatalf("endpoint = %+v, want %+v", e, want)
			}
		})
	}
	if len(d.parsed) != 1 {
		t.Fatalf("%d endpoints remembered, want the one valid URL and secret", len(d.parsed))
	}
}

func TestEndpoint_RemembersABoundedNumber(t *testing.T) {
	d := newDispatcher(t, newFakeClock(), Config{})
	for i := range endpointCacheSize + 10 {
		if _, err := d.endpoint(paymock.WebhookEndpoint{URL: "https://a.example/" + strconv.Itoa(i), Secret: testSecret}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(d.parsed); n > endpointCacheSize || n == 0 {
		t.Fatalf("%d endpoints remembered, want between 1 and %d", n, endpointCacheSize)
	}
}

// TestSigners_SignAsSignDoesEveryTime checks that a reused keyed MAC signs
// each message as a fresh one would: a Reset missing between two uses, or
// a scratch buffer shared wrongly, would change the second signature.
func TestSigners_SignAsSignDoesEveryTime(t *testing.T) {
	other, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	long := "evt_" + strings.Repeat("x", 200) // past the scratch buffer
	for _, secret := range []string{testSecret, other} {
		key, err := secretKey(secret)
		if err != nil {
			t.Fatal(err)
		}
		s := newSigners(key)
		for _, tc := range []struct {
			name string
			id   string
			ts   int64
			body string
		}{
			{"first use", "evt_1", 1614265330, `{"test": 2432232314}`},
			{"reused, another body", "evt_2", 1614265331, `{"id":"evt_2","type":"payment.completed"}`},
			{"reused, empty body", "evt_3", 0, ``},
			{"an id longer than the scratch space", long, 1614265332, `{}`},
			{"after the long id", "evt_4", 1614265333, `{"a":1}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want, err := Sign(secret, tc.id, time.Unix(tc.ts, 0), []byte(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				if got := s.sign(tc.id, tc.ts, []byte(tc.body)); got != want {
					t.Errorf("sign = %q, Sign = %q", got, want)
				}
			})
		}
	}
}

// TestSigners_ConcurrentSignsAgree signs from several goroutines at once
// (one endpoint's senders share its signers): each signature must be the
// one Sign gives for its own message.
func TestSigners_ConcurrentSignsAgree(t *testing.T) {
	key, err := secretKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	s := newSigners(key)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := "evt_" + strconv.Itoa(g) + "_" + strconv.Itoa(i)
				body := []byte(`{"n":` + strconv.Itoa(i) + `}`)
				want, _ := Sign(testSecret, id, time.Unix(int64(i), 0), body)
				if got := s.sign(id, int64(i), body); got != want {
					t.Errorf("%s: sign = %q, Sign = %q", id, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
