// Standard Webhooks signing: the headers, the signature, secrets, and the
// checked form of an endpoint.

package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/paymock/paymock"
)

// secretPrefix starts every signing secret, as Standard Webhooks has it.
const secretPrefix = "whsec_"

// The headers of a Standard Webhooks delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// UserAgent is sent with every delivery attempt.
const UserAgent = "paymock-webhooks/1"

// secretKey decodes a "whsec_<base64>" secret into its HMAC key. Errors
// never repeat the secret.
func secretKey(secret string) ([]byte, error) { return paymock.WebhookSecretKey(secret) }

// signKey is Sign with the key already decoded.
func signKey(key []byte, msgID string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// signers signs with one key, reusing keyed MACs: keying HMAC-SHA256 (two
// digests and their pads) and the message's and signature's buffers were
// eleven of a send's allocations; a reused signer makes one, the header's
// string. Safe for concurrent use.
type signers struct {
	key  []byte
	pool sync.Pool // of *signer
}

// signer is a MAC keyed with its signers' key and the scratch space of
// one signature.
type signer struct {
	mac hash.Hash
	buf [128]byte // "id.timestamp.", then the sum and its header value
}

func newSigners(key []byte) *signers { return &signers{key: key} }

// sign is signKey(s.key, msgID, ts, body).
func (s *signers) sign(msgID string, ts int64, body []byte) string {
	sg, _ := s.pool.Get().(*signer)
	if sg == nil {
		sg = &signer{mac: hmac.New(sha256.New, s.key)}
	} else {
		sg.mac.Reset() // back to the keyed state
	}
	b := append(sg.buf[:0], msgID...)
	b = append(b, '.')
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, '.')
	sg.mac.Write(b)
	sg.mac.Write(body)
	sum := sg.mac.Sum(sg.buf[:0])
	out := append(sg.buf[len(sum):len(sum)], "v1,"...)
	out = out[:len(out)+base64.StdEncoding.EncodedLen(len(sum))]
	base64.StdEncoding.Encode(out[3:], sum)
	sig := string(out)
	s.pool.Put(sg)
	return sig
}

// Sign returns the webhook-signature header value for one delivery:
// "v1," + base64(HMAC-SHA256(key, msgID + "." + unix seconds + "." + body)),
// where key is the base64-decoded part of secret after "whsec_".
func Sign(secret string, msgID string, timestamp time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return signKey(key, msgID, timestamp.Unix(), body), nil
}

// GenerateSecret returns a new signing secret: "whsec_" + base64 of 24
// random bytes.
func GenerateSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// ValidateEndpoint checks what New checks of every default endpoint, and
// Publish of every merchant endpoint: an absolute http(s) URL with a host
// and a "whsec_" + standard base64 secret. Errors never repeat the secret.
func ValidateEndpoint(ep paymock.WebhookEndpoint) error {
	_, err := parseEndpoint(ep)
	return err
}

// endpoint is a checked WebhookEndpoint: its id, the URL to post to, the
// URL as shown (password redacted) and the decoded key.
type endpoint struct {
	id      string
	url     string
	display string
	key     []byte
	secret  string   // as configured, for an Outbox to keep
	signers *signers // of key, shared by the copies of a remembered endpoint
}

func parseEndpoint(ep paymock.WebhookEndpoint) (endpoint, error) {
	u, err := url.Parse(ep.URL)
	if err != nil {
		return endpoint{id: ep.ID, display: "(invalid URL)"}, errors.New("webhook url is not a URL")
	}
	display := u.Redacted()
	if u.Scheme != "http" && u.Scheme != "https" {
		return endpoint{id: ep.ID, display: display}, fmt.Errorf("webhook url %q: want an absolute http or https URL", display)
	}
	if u.Hostname() == "" {
		return endpoint{id: ep.ID, display: display}, fmt.Errorf("webhook url %q has no host", display)
	}
	key, err := secretKey(ep.Secret)
	if err != nil {
		return endpoint{id: ep.ID, display: display}, fmt.Errorf("webhook secret for %q: %w", display, err)
	}
	return endpoint{id: ep.ID, url: ep.URL, display: display, key: key, secret: ep.Secret, signers: newSigners(key)}, nil
}

// endpointCacheSize bounds the endpoints a Dispatcher keeps checked; past
// it the cache starts again, empty.
const endpointCacheSize = 4096

// endpointKey is what a checked endpoint depends on.
type endpointKey struct{ url, secret string }

// endpoint is parseEndpoint remembered: every publish and every send
// names its endpoint, and parsing the URL and decoding the secret each
// time was a dozen allocations on the way to the receiver. Only valid
// endpoints are kept; the key is shared, read-only.
func (d *Dispatcher) endpoint(ep paymock.WebhookEndpoint) (endpoint, error) {
	k := endpointKey{ep.URL, ep.Secret}
	d.parsedMu.Lock()
	e, ok := d.parsed[k]
	d.parsedMu.Unlock()
	if ok {
		e.id = ep.ID
		return e, nil
	}
	e, err := parseEndpoint(ep)
	if err != nil {
		return e, err
	}
	d.parsedMu.Lock()
	if len(d.parsed) >= endpointCacheSize {
		clear(d.parsed)
	}
	d.parsed[k] = e
	d.parsedMu.Unlock()
	return e, nil
}
