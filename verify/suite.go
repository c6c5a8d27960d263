// The suite: a fixed, safe list of calls made the same way to the
// deployment and to paymock, and what each side answered.

package verify

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paymock/paymock"
)

// The checks of the suite, in the order they run.
const (
	checkList         = "list"
	checkCreate       = "create.checkout"
	checkCreateAcct   = "create.account"
	checkCreateCard   = "create.card"
	checkCreateExpiry = "create.expiring"
	checkRetrieve     = "retrieve"
	checkPerPage1     = "list.per_page_1"
	checkPerPage100   = "list.per_page_100"
	checkPastEnd      = "list.past_end"
	checkUnknownID    = "unknown_id"
	checkMissingField = "missing_field"
	checkBoth         = "mcc_and_account"
	checkPerPage101   = "per_page_101"
	checkPageTwice    = "page_twice"
	checkBadKey       = "bad_key"
	checkNoKey        = "no_key"
	checkTooLarge     = "body_too_large"
)

// noKey, as the key of a call, sends no Authorization header: no key
// holds a space.
const noKey = " "

// bodyLimit is paymock's default limit of a request body (--body-limit);
// the body_too_large check sends one byte more.
const bodyLimit = 1 << 20

// refusedKey is the key of the bad_key check: a well-formed bearer token
// (RFC 6750) that no deployment issued, so the check compares how a
// deployment refuses a key it does not know, as its points say. A
// malformed one would compare another refusal (paymock's
// api_key_malformed). A paymock in open mode takes it, as it takes every
// well-formed token: verify a paymock with configured keys.
const refusedKey = "sk_paymock_verify_unknown_0000000000"

// unknownID is the id of the unknown_id check.
const unknownID = "pay_PaymockVerifyUnknown000000000"

// testCard is the card of --card: a test number that asks for 3DS.
const testCard = "4000000000003220"

// maxAnswer bounds what is read of one answer.
const maxAnswer = 8 << 20

// Exchange is one call of the suite and the answer it got.
type Exchange struct {
	Check  string `json:"check"`
	Method string `json:"method"`
	Path   string `json:"path"`
	// Status is the answer's status, 0 when none came.
	Status int `json:"status,omitempty"`
	// Error says why no usable answer came.
	Error string `json:"error,omitempty"`

	// problem says the answer stopped the run (a refused key, a page
	// that is not JSON): it is checked against the contract, but it is
	// no answer of the service to compare with paymock's.
	problem bool
	req     *http.Request
	reqBody []byte
	header  http.Header
	body    []byte
}

// seenPayment is a payment object in an answer.
type seenPayment struct {
	fields  map[string]json.RawMessage
	created bool // in a create's answer
	card    bool // created with a card
}

func (p seenPayment) str(name string) string {
	var s string
	_ = json.Unmarshal(p.fields[name], &s)
	return s
}

func (p seenPayment) id() string { return p.str("id") }

// linkPresence says whether the answer carried payment_link, as the
// payment_link points compare it.
func (p seenPayment) linkPresence() string {
	if _, ok := p.fields["payment_link"]; ok {
		return "present"
	}
	return "absent"
}

// customerID is the id of the payment's customer, "" when it has none.
func (p seenPayment) customerID() string {
	var c struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(p.fields["customer"], &c)
	return c.ID
}

func (p seenPayment) nextURL() string {
	var na struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(p.fields["next_action"], &na)
	return na.URL
}

// observations are what one side answered the suite.
type observations struct {
	exchanges  map[string]*Exchange
	order      []string
	payments   []seenPayment
	webhooks   []delivery
	expiringID string // the payment made to expire during the run
	created    []string
}

func newObservations() *observations {
	return &observations{exchanges: map[string]*Exchange{}}
}

// side is one end the suite talks to: the deployment or paymock.
type side struct {
	base    string // without trailing slash
	key     string
	account string // for create.account and mcc_and_account
	client  *http.Client
	timeout time.Duration
	host    string // for messages
	runID   string
	obs     *observations
}

// call sends one request of the suite and records the answer. key ""
// sends the side's key.
func (s *side) call(ctx context.Context, check, method, path string, body any, key string) *Exchange {
	x := &Exchange{Check: check, Method: method, Path: path}
	s.obs.exchanges[check] = x
	s.obs.order = append(s.obs.order, check)
	if body != nil {
		x.reqBody, _ = json.Marshal(body)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(x.reqBody))
	if err != nil {
		x.Error = fmt.Sprintf("cannot build the request: %v", err)
		return x
	}
	switch key {
	case "":
		req.Header.Set("Authorization", "Bearer "+s.key)
	case noKey:
	default:
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	// The contract check reads the request without the key: a copy with
	// the path alone is enough.
	x.req, _ = http.NewRequest(method, path, nil)
	resp, err := s.client.Do(req)
	if err != nil {
		x.Error = s.transportMessage(method, path, err)
		return x
	}
	defer resp.Body.Close()
	x.body, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		x.Error = fmt.Sprintf("%s: reading the answer to %s %s: %v", s.host, method, path, unwrapURL(err))
		if errors.Is(err, context.DeadlineExceeded) {
			x.Error = fmt.Sprintf("%s did not finish its answer to %s %s within %s", s.host, method, path, s.timeout)
		}
		return x
	}
	x.Status, x.header = resp.StatusCode, resp.Header
	s.collectPayments(check, x)
	return x
}

// transportMessage words a failed call for a person: it names the host
// and never the key (no error of net/http carries a header).
func (s *side) transportMessage(method, path string, err error) string {
	var cert x509.UnknownAuthorityError
	var host x509.HostnameError
	var inv x509.CertificateInvalidError
	var rec tls.RecordHeaderError
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("%s did not answer %s %s within %s (--timeout)", s.host, method, path, s.timeout)
	case errors.As(err, &cert), errors.As(err, &host), errors.As(err, &inv):
		return fmt.Sprintf("TLS with %s failed: %v", s.host, unwrapURL(err))
	case errors.As(err, &rec), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf("TLS with %s failed: it does not speak TLS on that port (an http:// base URL?)", s.host)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Sprintf("%s closed the connection without answering %s %s", s.host, method, path)
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot reach %s: no such host", s.host)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Sprintf("cannot reach %s: %v", s.host, op.Err)
	}
	return fmt.Sprintf("cannot reach %s: %v", s.host, unwrapURL(err))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isJSON reports whether an answer says it is JSON.
func isJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// collectPayments keeps every payment object of a create, retrieve or
// list answer.
func (s *side) collectPayments(check string, x *Exchange) {
	if x.Status < 200 || x.Status > 299 || !isJSON(x.header) {
		return
	}
	add := func(raw json.RawMessage, created bool) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields["id"] == nil {
			return
		}
		p := seenPayment{fields: fields, created: created, card: check == checkCreateCard}
		s.obs.payments = append(s.obs.payments, p)
		if created {
			s.obs.created = append(s.obs.created, p.str("id"))
		}
	}
	switch {
	case strings.HasPrefix(check, "create."):
		add(x.body, true)
	case check == checkRetrieve:
		add(x.body, false)
	case strings.HasPrefix(check, "list"):
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(x.body, &l)
		for _, it := range l.Items {
			add(it, false)
		}
	}
}

// plan is what the suite does, the same on both sides.
type plan struct {
	maxCreates int
	account    bool // a create by account (--account-id)
	card       bool
	expiring   bool // a create that expires at once, for its webhook
}

// Skip is a check the run left out, and why.
type Skip struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// run runs the suite on one side. It returns the problem that stopped
// it ("" when it ran to its end) and the checks it left out.
func (s *side) run(ctx context.Context, p plan, afterCreates func(context.Context) error) (problem string, skips []Skip) {
	x := s.call(ctx, checkList, http.MethodGet, "/api/v1/payments", nil, "")
	if msg := s.fatal(x); msg != "" {
		x.problem = true
		return msg, nil
	}
	budget := p.maxCreates
	create := func(check string, body map[string]any) *Exchange {
		if budget <= 0 {
			skips = append(skips, Skip{check, "it could create a payment past --max-creates"})
			return nil
		}
		budget--
		return s.call(ctx, check, http.MethodPost, "/api/v1/payments", body, "")
	}
	first := create(checkCreate, s.createBody(map[string]any{"mcc": 5999}))
	if first != nil && first.Error != "" {
		return first.Error, nil
	}
	if p.account {
		create(checkCreateAcct, s.createBody(map[string]any{"account_id": s.account}))
	} else {
		skips = append(skips, Skip{checkCreateAcct, "no --account-id"})
	}
	if p.card {
		create(checkCreateCard, s.createBody(map[string]any{"mcc": 5999, "payment_method": map[string]any{
			"type": "card",
			"card": map[string]any{"number": testCard, "expiry_month": 12, "expiry_year": time.Now().Year() + 3, "cvc": "123"},
			"billing_details": map[string]any{"name": "Paymock Verify", "address": map[string]any{
				"line1": "1 Test Street", "city": "Testville", "state": "TS", "postal_code": "12345", "country": "US"}},
		}}))
	} else {
		skips = append(skips, Skip{checkCreateCard, "no --card (cards are for PCI-approved merchants only)"})
	}
	if p.expiring {
		if x := create(checkCreateExpiry, s.createBody(map[string]any{"mcc": 5999, "expires_in": 1})); x != nil && x.Status/100 == 2 {
			var id struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(x.body, &id)
			s.obs.expiringID = id.ID
		}
	}
	if afterCreates != nil {
		if err := afterCreates(ctx); err != nil {
			return err.Error(), skips
		}
	}
	if id := s.firstCreated(); id != "" {
		s.call(ctx, checkRetrieve, http.MethodGet, "/api/v1/payments/"+url.PathEscape(id), nil, "")
	} else {
		skips = append(skips, Skip{checkRetrieve, "no payment was created"})
	}
	s.call(ctx, checkPerPage1, http.MethodGet, "/api/v1/payments?per_page=1", nil, "")
	full := s.call(ctx, checkPerPage100, http.MethodGet, "/api/v1/payments?per_page=100", nil, "")
	var pg struct {
		Pagination struct {
			TotalPages int `json:"total_pages"`
		} `json:"pagination"`
	}
	_ = json.Unmarshal(full.body, &pg)
	s.call(ctx, checkPastEnd, http.MethodGet, "/api/v1/payments?per_page=100&page="+strconv.Itoa(pg.Pagination.TotalPages+1), nil, "")
	s.call(ctx, checkUnknownID, http.MethodGet, "/api/v1/payments/"+unknownID, nil, "")
	missing := s.createBody(map[string]any{"mcc": 5999})
	missing["customer"] = map[string]any{"name": "Paymock Verify"}
	create(checkMissingField, missing)
	create(checkBoth, s.createBody(map[string]any{"mcc": 5999, "account_id": s.account}))
	s.call(ctx, checkPerPage101, http.MethodGet, "/api/v1/payments?per_page=101", nil, "")
	s.call(ctx, checkPageTwice, http.MethodGet, "/api/v1/payments?page=1&page=2", nil, "")
	s.call(ctx, checkBadKey, http.MethodGet, "/api/v1/payments", nil, refusedKey)
	s.call(ctx, checkNoKey, http.MethodGet, "/api/v1/payments", nil, noKey)
	// A body one byte over paymock's limit that no deployment could make
	// a payment of, whatever its own limit: it holds a description alone.
	s.call(ctx, checkTooLarge, http.MethodPost, "/api/v1/payments", tooLargeBody(), "")
	return "", skips
}

// fatal is why the first answer leaves nothing more worth asking: no
// answer, a refused key, or an answer that is not the API's.
func (s *side) fatal(x *Exchange) string {
	switch {
	case x.Error != "":
		return x.Error
	case x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden:
		return fmt.Sprintf("%s refused the API key (%d on %s %s): give --api-key a key of this deployment",
			s.host, x.Status, x.Method, x.Path)
	case !isJSON(x.header):
		ct := x.header.Get("Content-Type")
		if ct == "" {
			ct = "no Content-Type"
		}
		return fmt.Sprintf("%s answered %s %s with %d and %s, not JSON: is --base-url the address the /api/v1 paths start from?",
			s.host, x.Method, x.Path, x.Status, ct)
	}
	return ""
}

func (s *side) firstCreated() string {
	if len(s.obs.created) == 0 {
		return ""
	}
	return s.obs.created[0]
}

// createBody is a valid create body, tagged with the run, plus extra.
func (s *side) createBody(extra map[string]any) map[string]any {
	b := map[string]any{
		"amount": 10.50, "currency": "EUR", "description": "paymock verify " + s.runID, "expires_in": 3600,
		"customer":    map[string]any{"email": "verify@example.com", "name": "Paymock Verify"},
		"metadata":    map[string]any{"paymock_verify": s.runID},
		"success_url": "https://example.com/paymock-verify/success", "cancel_url": "https://example.com/paymock-verify/cancel",
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// tooLargeBody is a create body of bodyLimit+1 bytes of JSON with no
// field but description: refused by any deployment, for its size or
// for what it lacks, and never a payment.
func tooLargeBody() json.RawMessage {
	const frame = `{"description":""}`
	return json.RawMessage(frame[:len(frame)-2] + strings.Repeat("x", bodyLimit+1-len(frame)) + `"}`)
}

func itoa(n int) string { return strconv.Itoa(n) }

func eventTypes() []string {
	return []string{string(paymock.EventCompleted), string(paymock.EventExpired), string(paymock.EventFailed)}
}
