// Client: a typed client of the control API (sandbox/openapi.yaml) for
// tests and tools that drive a running paymock, in process or in docker.

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/mockserver"
)

// ClientConfig is what a Client is built from.
type ClientConfig struct {
	// URL is the base URL of the paymock server, e.g.
	// http://localhost:8080; a trailing slash is ignored.
	URL string
	// APIKey is the merchant's key: every call acts on that merchant.
	APIKey string
	// HTTPClient sends the calls; nil means a client with a one-minute
	// timeout (an advance waits for every delivery it causes).
	HTTPClient *http.Client
	// Answers, when set, checks every answer before it is decoded, as a
	// strict client would (*contract.Documents does): an answer outside
	// the contract is an error rather than a half-decoded value.
	Answers AnswerChecker
}

// AnswerChecker checks an answer against the contract the way a strict
// client would. reqBody is what was sent (nil for no body).
type AnswerChecker interface {
	CheckAnswer(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error
}

// Client calls the control API of one paymock server as one merchant. It
// is safe for concurrent use.
type Client struct {
	base    string // scheme://host[/prefix], no trailing slash
	key     string
	http    *http.Client
	answers AnswerChecker
}

// NewClient returns a client of the server at cfg.URL.
func NewClient(cfg ClientConfig) (*Client, error) {
	base := strings.TrimRight(cfg.URL, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("sandbox client: the URL must be an absolute http(s) URL such as http://localhost:8080, got %q", cfg.URL)
	}
	if cfg.APIKey == "" {
		return nil, errors.New("sandbox client: an API key is required: every control call acts on the key's merchant")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	return &Client{base: base, key: cfg.APIKey, http: hc, answers: cfg.Answers}, nil
}

// APIError is an error answer of the server: its HTTP status and the
// fields of the error object, every violation included.
type APIError struct {
	Status     int
	Type       paymock.ErrorType
	Code       string
	Message    string
	Param      string
	Violations []paymock.Violation
}

func (e *APIError) Error() string {
	msg := e.Message
	if len(e.Violations) > 1 {
		msgs := make([]string, len(e.Violations))
		for i, v := range e.Violations {
			msgs[i] = v.Message
		}
		msg = strings.Join(msgs, "; ")
	}
	return fmt.Sprintf("paymock answered %d %s: %s", e.Status, e.Code, msg)
}

// Unwrap gives the domain error, so paymock.AsError reads an answer the
// way it reads an error of the server's own.
func (e *APIError) Unwrap() error {
	return &paymock.Error{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param, Violations: e.Violations}
}

// Complete moves a pending payment to completed (payment.completed is sent).
func (c *Client) Complete(ctx context.Context, id string) (paymock.Payment, error) {
	return c.transition(ctx, id, "complete")
}

// Fail moves a pending payment to failed (payment.failed is sent).
func (c *Client) Fail(ctx context.Context, id string) (paymock.Payment, error) {
	return c.transition(ctx, id, "fail")
}

// Expire moves a pending payment to expired (payment.expired is sent).
func (c *Client) Expire(ctx context.Context, id string) (paymock.Payment, error) {
	return c.transition(ctx, id, "expire")
}

func (c *Client) transition(ctx context.Context, id, action string) (paymock.Payment, error) {
	seg, err := pathID("payment", id)
	if err != nil {
		return paymock.Payment{}, err
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/_sandbox/payments/"+seg+"/"+action, nil, nil, &raw); err != nil {
		return paymock.Payment{}, err
	}
	return DecodePayment(raw)
}

// Clock is a merchant's clock as the control API shows it.
type Clock struct {
	Now time.Time
	// Mode is lifecycle.ClockReal or lifecycle.ClockFrozen.
	Mode string
	// Fired is, after an advance, how many scheduled things fired on the way.
	Fired int
}

type clockJSON struct {
	Now   string `json:"now"`
	Mode  string `json:"mode"`
	Fired int    `json:"fired"`
}

func (j clockJSON) clock() (Clock, error) {
	now, err := parseTime("now", j.Now)
	return Clock{Now: now, Mode: j.Mode, Fired: j.Fired}, err
}

// Clock is the merchant's clock.
func (c *Client) Clock(ctx context.Context) (Clock, error) {
	var j clockJSON
	if err := c.do(ctx, http.MethodGet, "/_sandbox/clock", nil, nil, &j); err != nil {
		return Clock{}, err
	}
	return j.clock()
}

// Advance moves the merchant's clock forward by d and returns the new
// time. Everything that fell due on the way (expiries, scenario steps,
// webhook retries) has fired when it returns. The API counts whole
// seconds, so d must be a whole number of seconds.
func (c *Client) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	cl, err := c.AdvanceClock(ctx, d)
	return cl.Now, err
}

// AdvanceClock is Advance, also telling how many scheduled things fired.
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) (Clock, error) {
	if d < 0 {
		return Clock{}, fmt.Errorf("advance by %v: a clock only moves forward", d)
	}
	if d%time.Second != 0 {
		return Clock{}, fmt.Errorf("advance by %v: the clock moves in whole seconds; round it, e.g. to %v", d, d.Round(time.Second))
	}
	var j clockJSON
	body := map[string]int64{"seconds": int64(d / time.Second)}
	if err := c.do(ctx, http.MethodPost, "/_sandbox/clock/advance", nil, body, &j); err != nil {
		return Clock{}, err
	}
	return j.clock()
}

// Events is every event of the merchant, newest first, each with the
// body it was sent with and its delivery attempts.
func (c *Client) Events(ctx context.Context) ([]paymock.EventRecord, error) {
	return listAll[paymock.EventRecord](ctx, c, "/_sandbox/events", nil)
}

// Redeliver sends an event again to every endpoint, with the same
// webhook-id and body, and returns the event with the new round queued.
func (c *Client) Redeliver(ctx context.Context, eventID string) (paymock.EventRecord, error) {
	var rec paymock.EventRecord
	seg, err := pathID("event", eventID)
	if err != nil {
		return rec, err
	}
	err = c.do(ctx, http.MethodPost, "/_sandbox/events/"+seg+"/redeliver", nil, nil, &rec)
	return rec, err
}

// Reset forgets the merchant's payments, events, schedule, clock and
// journal; other merchants are untouched.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/_sandbox/reset", nil, nil, nil)
}

// JournalEntry is one request of the merchant's journal.
type JournalEntry struct {
	ID          string              `json:"id"`
	At          string              `json:"at"`
	Method      string              `json:"method"`
	Path        string              `json:"path"`
	Query       string              `json:"query"`
	OperationID string              `json:"operation_id,omitempty"`
	Status      int                 `json:"status"`
	DurationMS  float64             `json:"duration_ms"`
	Variant     string              `json:"variant,omitempty"`
	Violations  []paymock.Violation `json:"violations,omitempty"`
	// InjectedFault is the id of the fault rule that shaped the answer
	// ("header" for the Paymock-Fault header); InjectedBy says how it was
	// asked for and what it does.
	InjectedFault string `json:"injected_fault,omitempty"`
	InjectedBy    string `json:"injected_by,omitempty"`
}

// RequestFilter selects journal entries; the zero value selects all.
type RequestFilter struct {
	// Status keeps only requests answered with this status; 0 keeps all.
	Status int
	// Violations keeps only requests the contract refused.
	Violations bool
}

// Requests is the merchant's request journal, newest first: every call,
// the control API's included, with the violations of those the contract
// refused.
func (c *Client) Requests(ctx context.Context, f RequestFilter) ([]JournalEntry, error) {
	q := url.Values{}
	if f.Status != 0 {
		q.Set("status", strconv.Itoa(f.Status))
	}
	if f.Violations {
		q.Set("violations", "true")
	}
	return listAll[JournalEntry](ctx, c, "/_sandbox/requests", q)
}

// Report is the conformance report of the merchant's client.
func (c *Client) Report(ctx context.Context) (mockserver.Report, error) {
	var r mockserver.Report
	err := c.do(ctx, http.MethodGet, "/_sandbox/report", nil, nil, &r)
	return r, err
}

// faultInput is the body of POST /_sandbox/faults: a rule without the
// fields the server fills (id, source, remaining, hits).
type faultInput struct {
	Target         faults.Target `json:"target,omitempty"`
	Operation      string        `json:"operation,omitempty"`
	Status         int           `json:"status,omitempty"`
	RetryAfter     int           `json:"retry_after,omitempty"`
	DelayMS        int           `json:"delay_ms,omitempty"`
	Reset          bool          `json:"reset,omitempty"`
	When           faults.When   `json:"when,omitempty"`
	EventType      string        `json:"event_type,omitempty"`
	Duplicate      int           `json:"duplicate,omitempty"`
	BadSignature   bool          `json:"bad_signature,omitempty"`
	TimestampSkewS int           `json:"timestamp_skew_s,omitempty"`
	Reorder        bool          `json:"reorder,omitempty"`
	WindowMS       int           `json:"window_ms,omitempty"`
	UnknownType    bool          `json:"unknown_type,omitempty"`
	ExtraFields    bool          `json:"extra_fields,omitempty"`
	Times          *int          `json:"times,omitempty"`
	Probability    *float64      `json:"probability,omitempty"`
}

// AddFault adds a fault rule for the merchant and returns it as stored,
// with its id and counts. The rule's id, source, remaining and hits are
// the server's to fill and are not sent.
func (c *Client) AddFault(ctx context.Context, r faults.Rule) (faults.Rule, error) {
	in := faultInput{
		Target: r.Target, Operation: r.Operation, Status: r.Status, RetryAfter: r.RetryAfter, DelayMS: r.DelayMS,
		Reset: r.Reset, When: r.When, EventType: r.EventType, Duplicate: r.Duplicate, BadSignature: r.BadSignature,
		TimestampSkewS: r.TimestampSkewS, Reorder: r.Reorder, WindowMS: r.WindowMS, UnknownType: r.UnknownType,
		ExtraFields: r.ExtraFields, Times: r.Times, Probability: r.Probability,
	}
	var out faults.Rule
	err := c.do(ctx, http.MethodPost, "/_sandbox/faults", nil, in, &out)
	return out, err
}

// Faults lists the merchant's fault rules with their counts.
func (c *Client) Faults(ctx context.Context) ([]faults.Rule, error) {
	var out struct {
		Items []faults.Rule `json:"items"`
	}
	err := c.do(ctx, http.MethodGet, "/_sandbox/faults", nil, nil, &out)
	return out.Items, err
}

// DeleteFault removes one fault rule.
func (c *Client) DeleteFault(ctx context.Context, id string) error {
	seg, err := pathID("fault rule", id)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/_sandbox/faults/"+seg, nil, nil, nil)
}

// ClearFaults removes every fault rule of the merchant.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/_sandbox/faults", nil, nil, nil)
}

// APIKey is one of the merchant's API keys. Key is only ever set in the
// answer of CreateAPIKey: the server does not show a key again.
type APIKey struct {
	ID        string `json:"id"`
	Key       string `json:"key,omitempty"`
	Masked    string `json:"masked"`
	Source    string `json:"source"`
	CreatedAt string `json:"created_at"`
}

// CreateAPIKey makes a new key for the merchant.
func (c *Client) CreateAPIKey(ctx context.Context) (APIKey, error) {
	var k APIKey
	err := c.do(ctx, http.MethodPost, "/_sandbox/api-keys", nil, nil, &k)
	return k, err
}

// APIKeys lists the merchant's keys, masked.
func (c *Client) APIKeys(ctx context.Context) ([]APIKey, error) {
	var out struct {
		Items []APIKey `json:"items"`
	}
	err := c.do(ctx, http.MethodGet, "/_sandbox/api-keys", nil, nil, &out)
	return out.Items, err
}

// RevokeAPIKey makes a key unusable at once.
func (c *Client) RevokeAPIKey(ctx context.Context, id string) error {
	seg, err := pathID("API key", id)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/_sandbox/api-keys/"+seg, nil, nil, nil)
}

// WebhookEndpoint is one of the merchant's webhook endpoints. Endpoints
// from the config file or flags are listed read-only.
type WebhookEndpoint struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Secret    string `json:"secret"`
	Source    string `json:"source"`
	Disabled  bool   `json:"disabled"`
	ReadOnly  bool   `json:"read_only"`
	CreatedAt string `json:"created_at"`
}

// AddWebhookEndpoint registers an endpoint for the merchant's events; the
// answer carries the whsec_ secret its deliveries are signed with.
func (c *Client) AddWebhookEndpoint(ctx context.Context, endpointURL string) (WebhookEndpoint, error) {
	var ep WebhookEndpoint
	err := c.do(ctx, http.MethodPost, "/_sandbox/webhook-endpoints", nil, map[string]string{"url": endpointURL}, &ep)
	return ep, err
}

// WebhookEndpoints lists the merchant's endpoints.
func (c *Client) WebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	var out struct {
		Items []WebhookEndpoint `json:"items"`
	}
	err := c.do(ctx, http.MethodGet, "/_sandbox/webhook-endpoints", nil, nil, &out)
	return out.Items, err
}

// DeleteWebhookEndpoint removes an endpoint made at run time.
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	seg, err := pathID("webhook endpoint", id)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/_sandbox/webhook-endpoints/"+seg, nil, nil, nil)
}

// pathID is id as a path segment. An empty id would name another route
// (or none), so it is refused before anything is sent.
func pathID(what, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("the %s id is empty: pass the id the API answered with", what)
	}
	return url.PathEscape(id), nil
}

// listPageSize is the largest page the control API serves.
const listPageSize = 100

// listAll reads every page of a list of the control API.
func listAll[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("per_page", strconv.Itoa(listPageSize))
	out := []T{}
	for page := 1; ; page++ {
		q.Set("page", strconv.Itoa(page))
		var resp struct {
			Items      []T `json:"items"`
			Pagination struct {
				TotalPages int `json:"total_pages"`
			} `json:"pagination"`
		}
		if err := c.do(ctx, http.MethodGet, path, q, nil, &resp); err != nil {
			return nil, err
		}
		out = append(out, resp.Items...)
		if page >= resp.Pagination.TotalPages || len(resp.Items) == 0 {
			return out, nil
		}
	}
}

// maxAnswer bounds what is read of one answer: the largest list page of
// the control API is far below it.
const maxAnswer = 32 << 20

// do sends one call and decodes a 2xx answer into out (nil: ignore it).
// Any other answer is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	// path is already escaped (ids go through url.PathEscape).
	target := c.base + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var reqBody []byte
	if in != nil {
		var err error
		if reqBody, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s %s: encode the request: %w", method, path, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(reqBody))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if c.answers != nil {
		if err := c.answers.CheckAnswer(req, reqBody, resp.StatusCode, resp.Header, body); err != nil {
			return fmt.Errorf("%s %s: the answer (%d) is outside the contract: %w", method, path, resp.StatusCode, err)
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answerError(resp.StatusCode, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// answerError reads an error answer. One that is not an error object (a
// proxy's HTML page, say) still becomes an APIError, with its first bytes
// as the message.
func answerError(status int, body []byte) *APIError {
	var e struct {
		Error *struct {
			Type    paymock.ErrorType   `json:"type"`
			Code    string              `json:"code"`
			Message string              `json:"message"`
			Param   string              `json:"param"`
			Errors  []paymock.Violation `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		snippet := strings.TrimSpace(string(body))
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		if snippet == "" {
			snippet = http.StatusText(status)
		}
		return &APIError{Status: status, Code: "unexpected_answer", Message: "the answer is not a paymock error: " + snippet}
	}
	return &APIError{Status: status, Type: e.Error.Type, Code: e.Error.Code, Message: e.Error.Message,
		Param: e.Error.Param, Violations: e.Error.Errors}
}

// DecodePayment reads a payment in any of the wire forms the server
// sends (amount as a number or a decimal string, "completed" or
// "succeeded", with or without payment_link), as answered by the API or
// carried in a webhook's "data". MerchantID is not on the wire and stays
// empty.
func DecodePayment(data []byte) (paymock.Payment, error) {
	var w struct {
		ID            string                 `json:"id"`
		Amount        json.RawMessage        `json:"amount"`
		Currency      paymock.Currency       `json:"currency"`
		Status        paymock.Status         `json:"status"`
		Customer      paymock.Customer       `json:"customer"`
		Description   string                 `json:"description"`
		Metadata      json.RawMessage        `json:"metadata"`
		SuccessURL    string                 `json:"success_url"`
		CancelURL     string                 `json:"cancel_url"`
		NextAction    *paymock.NextAction    `json:"next_action"`
		PaymentLink   string                 `json:"payment_link"`
		PaymentMethod *paymock.PaymentMethod `json:"payment_method"`
		CompletedAt   *string                `json:"completed_at"`
		CreatedAt     string                 `json:"created_at"`
		UpdatedAt     string                 `json:"updated_at"`
		ExpiresAt     string                 `json:"expires_at"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return paymock.Payment{}, fmt.Errorf("decode payment: %w", err)
	}
	amount, err := decodeAmount(w.Amount)
	if err != nil {
		return paymock.Payment{}, fmt.Errorf("decode payment %s: amount %s: %w", w.ID, w.Amount, err)
	}
	p := paymock.Payment{
		ID: w.ID, Amount: amount, Currency: w.Currency, Status: w.Status, Customer: w.Customer,
		Description: w.Description, Metadata: w.Metadata, SuccessURL: w.SuccessURL, CancelURL: w.CancelURL,
		CheckoutURL: w.PaymentLink, PaymentMethod: w.PaymentMethod,
	}
	if p.Status == paymock.StatusSucceeded {
		p.Status = paymock.StatusCompleted
	}
	if w.NextAction != nil {
		p.CheckoutURL = w.NextAction.URL
	}
	for _, f := range []struct {
		name string
		in   string
		out  *time.Time
	}{{"created_at", w.CreatedAt, &p.CreatedAt}, {"updated_at", w.UpdatedAt, &p.UpdatedAt}, {"expires_at", w.ExpiresAt, &p.ExpiresAt}} {
		if *f.out, err = parseTime(f.name, f.in); err != nil {
			return paymock.Payment{}, fmt.Errorf("decode payment %s: %w", w.ID, err)
		}
	}
	if w.CompletedAt != nil {
		if p.CompletedAt, err = parseTime("completed_at", *w.CompletedAt); err != nil {
			return paymock.Payment{}, fmt.Errorf("decode payment %s: %w", w.ID, err)
		}
	}
	return p, nil
}

// decodeAmount reads an amount sent as a JSON number or as a decimal
// string, exactly.
func decodeAmount(raw json.RawMessage) (paymock.Amount, error) {
	s := string(raw)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	}
	return paymock.ParseAmount(s)
}

func parseTime(name, s string) (time.Time, error) {
	t, err := time.Parse(paymock.TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a timestamp like 2026-01-02T15:04:05Z", name, s)
	}
	return t, nil
}
