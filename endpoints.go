// Webhook endpoints: what a valid one is, how its secret is made, and where
// one came from. The registry that adds, lists and disables them is
// package merchants.

package paymock

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// WebhookEndpoint is a URL that receives a merchant's events, signed with
// Secret (a "whsec_" key).
type WebhookEndpoint struct {
	// ID is the endpoint's "we_..." handle, set by the registry (package
	// merchants); empty in a config file.
	ID     string `yaml:"-"`
	URL    string `yaml:"url"`
	Secret string `yaml:"secret"`
}

// WebhookSecretPrefix starts every signing secret, as Standard Webhooks
// has it; standard base64 of the key follows.
const WebhookSecretPrefix = "whsec_"

// maxSecretBytes is Standard Webhooks' upper bound on a key; its lower
// bound (24) is only a recommendation, and secrets people already use in
// their configs are shorter, so any non-empty key is accepted.
const maxSecretBytes = 64

// maxURLLen keeps an endpoint URL to what fits in a log line and a page.
const maxURLLen = 2048

// Validate returns every problem with e, with params relative to the
// endpoint ("url", "secret"): an absolute http or https URL with a host and
// no user name or password, and a secret of "whsec_" followed by standard
// base64 of 1 to 64 bytes. An empty secret is a violation: callers that
// generate one (AddEndpoint, --webhook-url without --webhook-secret) do so
// before validating. Messages never repeat the secret or a password.
func (e WebhookEndpoint) Validate() []Violation {
	var vs []Violation
	if v, bad := checkEndpointURL(e.URL); bad {
		vs = append(vs, v)
	}
	if v, bad := checkWebhookSecret(e.Secret); bad {
		vs = append(vs, v)
	}
	return vs
}

func checkEndpointURL(s string) (Violation, bool) {
	bad := func(code, format string, a ...any) (Violation, bool) {
		return Violation{Param: "url", Code: code, Message: fmt.Sprintf(format, a...)}, true
	}
	if s == "" {
		return bad("parameter_missing", "url is required")
	}
	if len(s) > maxURLLen {
		return bad("parameter_invalid", "url is longer than %d characters", maxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("parameter_invalid", "url %q is not a URL", shorten(s))
	}
	if u.User != nil {
		return bad("parameter_invalid", "url must not contain a user name or password: it is shown on pages and in logs")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("parameter_invalid", "url %q is not an absolute http:// or https:// URL", shorten(s))
	}
	if u.Hostname() == "" {
		return bad("parameter_invalid", "url %q has no host", shorten(s))
	}
	return Violation{}, false
}

func checkWebhookSecret(s string) (Violation, bool) {
	bad := func(code, msg string) (Violation, bool) {
		return Violation{Param: "secret", Code: code, Message: msg}, true
	}
	if s == "" {
		return bad("parameter_missing", "secret is required (whsec_ followed by base64)")
	}
	key, err := WebhookSecretKey(s)
	if err != nil {
		return bad("parameter_invalid", err.Error())
	}
	if len(key) > maxSecretBytes {
		return bad("parameter_invalid", fmt.Sprintf("the secret is %d bytes after base64 decoding; Standard Webhooks allows at most %d", len(key), maxSecretBytes))
	}
	return Violation{}, false
}

// WebhookSecretKey decodes a "whsec_" secret into its HMAC key: padded
// standard base64 of at least one byte, with no line break. Go's decoder
// skips line breaks anywhere; the JavaScript libraries merchants verify
// with (standardwebhooks, svix) throw on one inside the text or on a CRLF
// ending, and drop a lone trailing character. So a secret pasted with line
// breaks (a YAML block, a CRLF file) would sign here while the merchant's
// receiver, given the same text, could not be constructed: only the
// canonical text is accepted. Every reader of a secret (the config, the
// flags, the dispatcher) decodes it here. Errors never repeat it.
func WebhookSecretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return nil, errors.New("the secret must start with whsec_")
	}
	if strings.ContainsAny(rest, "\r\n") {
		return nil, errors.New("the part of the secret after whsec_ has a line break, which the Standard Webhooks libraries refuse")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, errors.New("the part of the secret after whsec_ must be non-empty standard base64")
	}
	return key, nil
}

// shorten cuts a value quoted back in a message, so a huge input does not
// make a huge message or log line.
func shorten(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut-- // do not split a UTF-8 sequence
	}
	return s[:cut] + "…"
}

// String shows the URL and hides the secret.
func (e WebhookEndpoint) String() string {
	return fmt.Sprintf("{%s %s}", e.ID, redactURL(e.URL))
}

// GoString is String, so %#v hides the secret too.
func (e WebhookEndpoint) GoString() string { return e.String() }

// LogValue keeps the secret out of JSON logs, which do not use String.
func (e WebhookEndpoint) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", e.ID), slog.String("url", redactURL(e.URL)))
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	return shorten(u.Redacted())
}

// NewWebhookSecret returns a new signing secret: "whsec_" and the standard
// base64 of 24 bytes from crypto/rand, Standard Webhooks' recommended size.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// EndpointSource says where an endpoint came from, and so whether it can be
// changed at run time.
type EndpointSource string

// The sources of an endpoint.
const (
	// EndpointFromConfig is one of the merchant's webhooks in the config
	// file: read-only.
	EndpointFromConfig EndpointSource = "config"
	// EndpointDefault is a --webhook-url endpoint, used by every merchant
	// without configured webhooks: read-only.
	EndpointDefault EndpointSource = "default"
	// EndpointAdded is one added at run time (merchants.Registry.AddEndpoint).
	EndpointAdded EndpointSource = "added"
)

// MaxAddedEndpoints is how many endpoints one merchant may add.
const MaxAddedEndpoints = 20

// Endpoint is one webhook endpoint as a merchant sees it.
type Endpoint struct {
	// ID is the endpoint's "we_..." handle. A default endpoint has the
	// same id for every merchant that gets it.
	ID  string
	URL string
	// Secret is the "whsec_" signing secret; pages reveal it on request.
	Secret string
	Source EndpointSource
	// Disabled endpoints receive nothing until enabled again.
	Disabled bool
	// Created is when it was added, or the start for read-only ones.
	Created time.Time
}

// ReadOnly reports whether the endpoint comes from the configuration and
// cannot be disabled or deleted at run time.
func (e Endpoint) ReadOnly() bool { return e.Source != EndpointAdded }

// String shows the endpoint without its secret.
func (e Endpoint) String() string {
	state := "enabled"
	if e.Disabled {
		state = "disabled"
	}
	return fmt.Sprintf("{%s %s %s %s}", e.ID, redactURL(e.URL), e.Source, state)
}

// GoString is String, so %#v hides the secret too.
func (e Endpoint) GoString() string { return e.String() }

// LogValue keeps the secret out of JSON logs.
func (e Endpoint) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", e.ID), slog.String("url", redactURL(e.URL)),
		slog.String("source", string(e.Source)), slog.Bool("disabled", e.Disabled))
}
