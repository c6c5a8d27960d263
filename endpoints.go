// Webhook endpoints: the configured ones, the server-wide defaults and
// those a merchant adds at run time, and which of them receive events now.

package paymock

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// WebhookEndpoint is a URL that receives a merchant's events, signed with
// Secret (a "whsec_" key).
type WebhookEndpoint struct {
	// ID is the endpoint's "we_..." handle, set by Merchants (Deliverable,
	// the configured merchants); empty in a config file.
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
	rest, ok := strings.CutPrefix(s, WebhookSecretPrefix)
	if !ok {
		return bad("parameter_invalid", "the secret must start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return bad("parameter_invalid", "the part of the secret after whsec_ must be non-empty standard base64")
	}
	if len(key) > maxSecretBytes {
		return bad("parameter_invalid", fmt.Sprintf("the secret is %d bytes after base64 decoding; Standard Webhooks allows at most %d", len(key), maxSecretBytes))
	}
	return Violation{}, false
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
	// EndpointAdded is one added with AddEndpoint.
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

// endpointRecord is one endpoint as held; disabled is guarded by
// Merchants.mu.
type endpointRecord struct {
	id       string
	url      string
	secret   string
	source   EndpointSource
	created  time.Time
	disabled bool
}

func (r *endpointRecord) endpoint() Endpoint {
	return Endpoint{ID: r.id, URL: r.url, Secret: r.secret, Source: r.source, Disabled: r.disabled, Created: r.created}
}

// AddEndpoint adds an endpoint for a merchant, with a secret generated
// from crypto/rand, and returns it (secret included). A bad URL is an
// *Error whose violation has param "url"; so is a merchant already at
// MaxAddedEndpoints (code endpoint_limit). An unknown merchant wraps
// ErrNotFound. Added endpoints receive the merchant's events alongside
// the configured or default ones.
func (ms *Merchants) AddEndpoint(merchantID, rawURL string) (Endpoint, error) {
	if v, bad := checkEndpointURL(rawURL); bad {
		return Endpoint{}, Invalid(v)
	}
	secret, err := NewWebhookSecret()
	if err != nil {
		return Endpoint{}, err
	}
	if ms.store != nil {
		return ms.addEndpointShared(merchantID, rawURL, secret)
	}
	now := ms.now()

	ms.mu.Lock()
	defer ms.mu.Unlock()
	e, err := ms.entryLocked(merchantID)
	if err != nil {
		return Endpoint{}, err
	}
	ext := e.extras()
	added := 0
	for _, r := range ext.endpoints {
		if r.source == EndpointAdded {
			added++
		}
	}
	if added >= MaxAddedEndpoints {
		return Endpoint{}, endpointLimit()
	}
	r := &endpointRecord{id: ms.ids.New(endpointIDPrefix), url: rawURL, secret: secret, source: EndpointAdded, created: now}
	ext.endpoints = append(ext.endpoints, r)
	return r.endpoint(), nil
}

// endpointLimit is the refusal of an endpoint past MaxAddedEndpoints.
func endpointLimit() *Error {
	return Invalid(Violation{Param: "url", Code: "endpoint_limit",
		Message: fmt.Sprintf("a merchant can add at most %d webhook endpoints; delete one first", MaxAddedEndpoints)})
}

// Endpoints lists a merchant's endpoints: configured ones, then the
// defaults when it has no configured ones, then added ones oldest first.
// An unknown merchant has none. Only a shared store that cannot be read
// makes an error (wrapping ErrUnavailable).
func (ms *Merchants) Endpoints(merchantID string) ([]Endpoint, error) {
	if ms.store != nil {
		return ms.endpointsShared(merchantID)
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	e, ok := ms.byID[merchantID]
	if !ok {
		return nil, nil
	}
	var out []Endpoint
	ms.eachEndpointLocked(e, func(r *endpointRecord) { out = append(out, r.endpoint()) })
	return out, nil
}

// Endpoint returns one of a merchant's endpoints; another merchant's, or
// an unknown id, wraps ErrNotFound.
func (ms *Merchants) Endpoint(merchantID, endpointID string) (Endpoint, error) {
	if ms.store != nil {
		return ms.endpointShared(merchantID, endpointID)
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	r, err := ms.endpointLocked(merchantID, endpointID)
	if err != nil {
		return Endpoint{}, err
	}
	return r.endpoint(), nil
}

// DisableEndpoint stops deliveries to an added endpoint until it is
// enabled again; deliveries already queued are the dispatcher's. A
// read-only endpoint is an *Error (code endpoint_read_only).
func (ms *Merchants) DisableEndpoint(merchantID, endpointID string) (Endpoint, error) {
	return ms.setDisabled(merchantID, endpointID, true)
}

// EnableEndpoint undoes DisableEndpoint.
func (ms *Merchants) EnableEndpoint(merchantID, endpointID string) (Endpoint, error) {
	return ms.setDisabled(merchantID, endpointID, false)
}

func (ms *Merchants) setDisabled(merchantID, endpointID string, disabled bool) (Endpoint, error) {
	if ms.store != nil {
		return ms.setDisabledShared(merchantID, endpointID, disabled)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.endpointLocked(merchantID, endpointID)
	if err != nil {
		return Endpoint{}, err
	}
	if r.source != EndpointAdded {
		verb := "disabled"
		if !disabled {
			verb = "enabled"
		}
		return Endpoint{}, readOnly(r, verb)
	}
	r.disabled = disabled
	return r.endpoint(), nil
}

// DeleteEndpoint removes an added endpoint. A read-only endpoint is an
// *Error (code endpoint_read_only); an unknown id wraps ErrNotFound.
func (ms *Merchants) DeleteEndpoint(merchantID, endpointID string) error {
	if ms.store != nil {
		return ms.deleteEndpointShared(merchantID, endpointID)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.endpointLocked(merchantID, endpointID)
	if err != nil {
		return err
	}
	if r.source != EndpointAdded {
		return readOnly(r, "deleted")
	}
	e := ms.byID[merchantID]
	for i, x := range e.ext.endpoints {
		if x == r {
			e.ext.endpoints = append(e.ext.endpoints[:i:i], e.ext.endpoints[i+1:]...)
			break
		}
	}
	return nil
}

func readOnly(r *endpointRecord, verb string) *Error {
	where := "the config file"
	if r.source == EndpointDefault {
		where = "--webhook-url"
	}
	return &Error{Type: InvalidRequest, Code: "endpoint_read_only", Param: "id",
		Message: fmt.Sprintf("webhook endpoint %s comes from %s and cannot be %s here; change the configuration and restart instead", r.id, where, verb)}
}

// Deliverable returns the endpoints a merchant's events go to now: the
// enabled ones of Endpoints, each with its ID, in that order. An unknown
// merchant has none. On a shared store the added ones are read from it at
// each call (see deliverableShared for when it cannot be read).
func (ms *Merchants) Deliverable(merchantID string) []WebhookEndpoint {
	if ms.store != nil {
		return ms.deliverableShared(merchantID)
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	e, ok := ms.byID[merchantID]
	if !ok {
		return nil
	}
	var out []WebhookEndpoint
	ms.eachEndpointLocked(e, func(r *endpointRecord) {
		if !r.disabled {
			out = append(out, WebhookEndpoint{ID: r.id, URL: r.url, Secret: r.secret})
		}
	})
	return out
}

// eachEndpointLocked calls f for e's endpoints in listing order.
func (ms *Merchants) eachEndpointLocked(e *merchantEntry, f func(*endpointRecord)) {
	var own []*endpointRecord
	if e.ext != nil {
		own = e.ext.endpoints
	}
	for _, r := range own {
		if r.source == EndpointFromConfig {
			f(r)
		}
	}
	if len(e.Webhooks) == 0 {
		for _, r := range ms.defaults {
			f(r)
		}
	}
	for _, r := range own {
		if r.source == EndpointAdded {
			f(r)
		}
	}
}

// endpointLocked finds one of a merchant's endpoints by id.
func (ms *Merchants) endpointLocked(merchantID, endpointID string) (*endpointRecord, error) {
	e, err := ms.entryLocked(merchantID)
	if err != nil {
		return nil, err
	}
	var found *endpointRecord
	ms.eachEndpointLocked(e, func(r *endpointRecord) {
		if r.id == endpointID {
			found = r
		}
	})
	if found == nil {
		return nil, fmt.Errorf("no such webhook endpoint: %w", ErrNotFound)
	}
	return found, nil
}
