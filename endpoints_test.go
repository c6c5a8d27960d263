// Tests of webhook endpoints: validation, the read-only configured and
// default ones, and those added, disabled and deleted at run time.

package paymock

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// testWebhookSecret is "whsec_" and the base64 of 24 bytes.
const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestWebhookEndpoint_Validate(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, tc := range []struct {
		name       string
		ep         WebhookEndpoint
		wantParams []string // of every violation; none means valid
		wantInMsg  string   // in the first message
	}{
		{"http", WebhookEndpoint{URL: "http://localhost:9000/hooks", Secret: testWebhookSecret}, nil, ""},
		{"https with port and query", WebhookEndpoint{URL: "https://h.example:8443/in?x=1", Secret: testWebhookSecret}, nil, ""},
		{"ip host", WebhookEndpoint{URL: "http://127.0.0.1/h", Secret: testWebhookSecret}, nil, ""},
		{"short secret", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(1)}, nil, ""},
		{"64-byte secret", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(64)}, nil, ""},
		{"missing url", WebhookEndpoint{Secret: testWebhookSecret}, []string{"url"}, "url is required"},
		{"relative url", WebhookEndpoint{URL: "/hooks", Secret: testWebhookSecret}, []string{"url"}, `url "/hooks" is not an absolute http:// or https:// URL`},
		{"no scheme", WebhookEndpoint{URL: "h.example/hooks", Secret: testWebhookSecret}, []string{"url"}, "absolute"},
		{"ftp", WebhookEndpoint{URL: "ftp://h.example/x", Secret: testWebhookSecret}, []string{"url"}, "absolute"},
		{"mailto", WebhookEndpoint{URL: "mailto:x@y", Secret: testWebhookSecret}, []string{"url"}, "mailto"},
		{"no host", WebhookEndpoint{URL: "http:///x", Secret: testWebhookSecret}, []string{"url"}, "no host"},
		{"port only", WebhookEndpoint{URL: "http://:80/x", Secret: testWebhookSecret}, []string{"url"}, "no host"},
		{"not a URL", WebhookEndpoint{URL: "http://h.example/%zz", Secret: testWebhookSecret}, []string{"url"}, "not a URL"},
		{"user info", WebhookEndpoint{URL: "https://user:pa55word@h.example/x", Secret: testWebhookSecret}, []string{"url"}, "user name or password"},
		{"too long", WebhookEndpoint{URL: "http://h.example/" + strings.Repeat("x", 2048), Secret: testWebhookSecret}, []string{"url"}, "longer than 2048"},
		{"missing secret", WebhookEndpoint{URL: "http://h.example"}, []string{"secret"}, "secret is required"},
		{"secret without prefix", WebhookEndpoint{URL: "http://h.example", Secret: "c2VjcmV0"}, []string{"secret"}, "whsec_"},
		{"secret not base64", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_k3y!"}, []string{"secret"}, "base64"},
		{"secret empty after prefix", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_"}, []string{"secret"}, "non-empty"},
		// Go's decoder skips line breaks; the JavaScript libraries throw on
		// most of them, so paymock takes only the canonical text.
		{"secret with a line break", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_MfKQ9r8GKYqrTwjU\nPD8ILPZIo2LaLaSw"}, []string{"secret"}, "line break"},
		{"secret ending in a carriage return", WebhookEndpoint{URL: "http://h.example", Secret: testWebhookSecret + "\r"}, []string{"secret"}, "line break"},
		{"secret too long", WebhookEndpoint{URL: "http://h.example", Secret: "whsec_" + b64(65)}, []string{"secret"}, "at most 64"},
		{"both wrong", WebhookEndpoint{URL: "hooks", Secret: "abc"}, []string{"url", "secret"}, `"hooks"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := tc.ep.Validate()
			var params []string
			for _, v := range vs {
				params = append(params, v.Param)
				if strings.Contains(v.Message, "k3y") || strings.Contains(v.Message, "pa55word") || strings.Contains(v.Message, "MfKQ9") {
					t.Errorf("message %q repeats a secret", v.Message)
				}
			}
			if !slices.Equal(params, tc.wantParams) {
				t.Fatalf("Validate() = %+v, want violations of %v", vs, tc.wantParams)
			}
			if len(vs) > 0 && !strings.Contains(vs[0].Message, tc.wantInMsg) {
				t.Errorf("message %q does not mention %q", vs[0].Message, tc.wantInMsg)
			}
		})
	}
}

func TestWebhookEndpoint_ValidateCutsALongURLInItsMessage(t *testing.T) {
	vs := WebhookEndpoint{URL: "ftp://h.example/" + strings.Repeat("é", 900), Secret: testWebhookSecret}.Validate()
	if len(vs) != 1 || len(vs[0].Message) > 300 || !strings.Contains(vs[0].Message, "…") {
		t.Errorf("Validate() = %+v, want one short message", vs)
	}
}

func TestNewWebhookSecret(t *testing.T) {
	a, err := NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewWebhookSecret()
	if a == b {
		t.Error("two secrets are the same")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 24 {
		t.Errorf("secret %q: want whsec_ and base64 of 24 bytes", a)
	}
	if vs := (WebhookEndpoint{URL: "http://h.example", Secret: a}).Validate(); len(vs) != 0 {
		t.Errorf("a generated secret does not validate: %+v", vs)
	}
}
