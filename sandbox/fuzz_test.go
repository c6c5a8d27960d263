// Fuzz targets for what a client sends the whole sandbox: create bodies,
// list query strings and the ids of every {id} route of both documents.
// Whatever arrives, the answer is never a 5xx, always one the contract
// declares, and another merchant's data does not move.

package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/sandbox"
)

// The two open-mode merchants of every fuzz target: A receives the fuzzed
// requests, B only holds data that must not change.
const (
	fuzzKeyA = "sk_test_fuzz_merchant_a"
	fuzzKeyB = "sk_test_fuzz_merchant_b"
)

// fuzzResetEvery bounds A's payments: after this many creates A resets its
// sandbox, so a long fuzzing run holds no more than this.
const fuzzResetEvery = 200

// fuzzCreateBody is a valid create body; its card is a test card that
// goes to the 3DS page and stays pending.
const fuzzCreateBody = `{"amount":1234567.89,"currency":"EUR","customer":{"email":"jane@example.com","name":"Jane Doe"},` +
	`"description":"Order 1235","expires_in":900,"metadata":{"order_id":"ord_1235"},` +
	`"success_url":"https://shop.example.com/success?order=1235","cancel_url":"https://shop.example.com/cancel?order=1235",` +
	`"account_id":"acct_sandbox_active","payment_method":{"type":"card","card":{"number":"4242424242424242",` +
	`"expiry_month":12,"expiry_year":2034,"cvc":"123"},"billing_details":{"name":"Jane Doe",` +
	`"address":{"line1":"1 Main Street","city":"Dublin","postal_code":"D01 F5P2","country":"IE"}}}}`

// fuzzMCCBody is a valid create body without a card.
const fuzzMCCBody = `{"amount":10.5,"currency":"USD","customer":{"email":"jane@example.com","name":"Jane Doe"},` +
	`"description":"Order 1234","expires_in":3600,"metadata":{"order_id":"ord_1234"},` +
	`"success_url":"https://shop.example.com/success","cancel_url":"https://shop.example.com/cancel","mcc":5732}`

// fuzzEnv is one sandbox with merchant B's data in place, shared by every
// input of one fuzzing process.
type fuzzEnv struct {
	h       http.Handler
	docs    *contract.Documents
	bBefore []byte            // B's data as first read
	ids     map[string]string // {a.payment}, {b.payment}, ...: ids of real objects
	ownA    map[string]bool   // ids of objects A owns: their routes may answer other than 404
	creates int
}

// answer is what the handler answered one request.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	f.Helper()
	seed := uint64(8)
	sb, err := sandbox.New(sandbox.Config{
		Clock:       lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)},
		Seed:        &seed,
		JournalSize: 20,
		Metrics:     true,
		PublicURL:   "http://paymock.test",
	})
	if err != nil {
		f.Fatal(err)
	}
	sb.Start()
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sb.Close(ctx); err != nil {
			f.Error(err)
		}
	})
	docs, err := contract.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	e := &fuzzEnv{h: sb.Handler(), docs: docs, ids: map[string]string{}, ownA: map[string]bool{}}

	// B: a payment of each final status and a pending one with a card,
	// their events, a fault rule, a second API key and a webhook endpoint.
	var made []string
	for _, body := range []string{fuzzCreateBody, fuzzMCCBody, fuzzMCCBody, fuzzMCCBody} {
		made = append(made, e.mustID(f, fuzzKeyB, http.MethodPost, "/api/v1/payments", body, http.StatusCreated))
	}
	e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/payments/"+made[1]+"/complete", "", http.StatusOK)
	e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/payments/"+made[2]+"/fail", "", http.StatusOK)
	e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/payments/"+made[3]+"/expire", "", http.StatusOK)
	e.ids["{b.payment}"] = made[0]
	e.ids["{b.completed}"] = made[1]
	e.ids["{b.fault}"] = e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/faults",
		`{"operation":"createPayment","status":503,"times":1}`, http.StatusCreated)
	e.ids["{b.key}"] = e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/api-keys", "", http.StatusCreated)
	e.ids["{b.endpoint}"] = e.mustID(f, fuzzKeyB, http.MethodPost, "/_sandbox/webhook-endpoints",
		`{"url":"http://127.0.0.1:9/hooks"}`, http.StatusCreated)
	var events struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	evs := e.must(f, fuzzKeyB, http.MethodGet, "/_sandbox/events", "", http.StatusOK).body
	if err := json.Unmarshal(evs, &events); err != nil || len(events.Items) == 0 {
		f.Fatalf("B's events: %v: %s", err, evs)
	}
	e.ids["{b.event}"] = events.Items[0].ID

	// A: a payment, a fault rule that never fires (a 429 on a list is an
	// answer the list target allows) and an endpoint of its own.
	e.ids["{a.payment}"] = e.mustID(f, fuzzKeyA, http.MethodPost, "/api/v1/payments", fuzzMCCBody, http.StatusCreated)
	e.ids["{a.fault}"] = e.mustID(f, fuzzKeyA, http.MethodPost, "/_sandbox/faults",
		`{"operation":"retrievePayment","delay_ms":1,"probability":0}`, http.StatusCreated)
	e.ids["{a.endpoint}"] = e.mustID(f, fuzzKeyA, http.MethodPost, "/_sandbox/webhook-endpoints",
		`{"url":"http://127.0.0.1:9/a"}`, http.StatusCreated)
	for k, id := range e.ids {
		if strings.HasPrefix(k, "{a.") {
			e.ownA[id] = true
		}
	}
	e.bBefore = e.snapshotB(f)
	return e
}

// request builds a request as net/http's server would read it from the
// wire, or reports false when the server would refuse the request line
// before any handler runs.
func request(method, target string, body []byte) (*http.Request, bool) {
	if strings.ContainsAny(target, " \r\n") {
		return nil, false
	}
	raw := method + " " + target + " HTTP/1.1\r\nHost: paymock.test\r\n\r\n"
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return nil, false
	}
	req.RemoteAddr = "127.0.0.1:40000"
	if body != nil {
		req.Body = http.NoBody
		if len(body) > 0 {
			req.Body = readCloser{bytes.NewReader(body)}
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/json")
		}
	}
	return req, true
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// send runs one request as merchant key through the handler and checks
// what every answer must be: not a 5xx, and declared by the contract.
func (e *fuzzEnv) send(tb testing.TB, key string, req *http.Request, body []byte) answer {
	tb.Helper()
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if a.status >= 500 {
		tb.Fatalf("%s %.300s: %d %.2000s", req.Method, req.RequestURI, a.status, a.body)
	}
	if err := e.docs.CheckAnswer(req, body, a.status, a.header, a.body); err != nil {
		tb.Fatalf("%s %.300s: %d breaks the contract: %v\n%.2000s", req.Method, req.RequestURI, a.status, err, a.body)
	}
	return a
}

// must sends a request that has to succeed with status want.
func (e *fuzzEnv) must(tb testing.TB, key, method, target, body string, want int) answer {
	tb.Helper()
	var b []byte
	if method != http.MethodGet {
		b = []byte(body)
	}
	req, ok := request(method, target, b)
	if !ok {
		tb.Fatalf("%s %s: not a request", method, target)
	}
	a := e.send(tb, key, req, b)
	if a.status != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, target, a.status, want, a.body)
	}
	return a
}

// mustID is must for an answer that names an object by its id.
func (e *fuzzEnv) mustID(tb testing.TB, key, method, target, body string, want int) string {
	tb.Helper()
	var obj struct {
		ID string `json:"id"`
	}
	a := e.must(tb, key, method, target, body, want)
	if err := json.Unmarshal(a.body, &obj); err != nil || obj.ID == "" {
		tb.Fatalf("%s %s: no id in %s", method, target, a.body)
	}
	return obj.ID
}

// snapshotB reads everything of B's a client can read, except its request
// journal, which these very reads add to.
func (e *fuzzEnv) snapshotB(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	for _, target := range []string{
		"/api/v1/payments?per_page=100", "/api/v1/payments/" + e.ids["{b.payment}"], "/_sandbox/events",
		"/_sandbox/faults", "/_sandbox/api-keys", "/_sandbox/webhook-endpoints", "/_sandbox/clock",
	} {
		fmt.Fprintf(&buf, "%s\n%s\n", target, e.must(tb, fuzzKeyB, http.MethodGet, target, "", http.StatusOK).body)
	}
	return buf.Bytes()
}

// checkB fails when anything of B's changed.
func (e *fuzzEnv) checkB(t *testing.T, after string) {
	t.Helper()
	if now := e.snapshotB(t); !bytes.Equal(now, e.bBefore) {
		t.Fatalf("merchant B's data changed after %s:\nbefore:\n%s\nafter:\n%s", after, e.bBefore, now)
	}
}

func FuzzCreatePayment(f *testing.F) {
	for _, s := range []string{
		fuzzCreateBody, fuzzMCCBody, `{}`, `[]`, `null`, ``, `{"amount":"10.50"}`,
		`{"amount":10.5,"amount":11}`, "{\"metadata\":{\"k\":\"\xff\"}}",
		strings.Replace(fuzzMCCBody, `"mcc":5732`, `"mcc":5732,"account_id":"acct_sandbox_active"`, 1),
		strings.Replace(fuzzMCCBody, `"order_id":"ord_1234"`, `"scenario":"complete"`, 1),
	} {
		f.Add([]byte(s))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := request(http.MethodPost, "/api/v1/payments", body)
		a := e.send(t, fuzzKeyA, req, body)
		switch a.status {
		case http.StatusCreated:
			e.checkCreated(t, body, a.body)
			if e.creates++; e.creates%fuzzResetEvery == 0 {
				e.must(t, fuzzKeyA, http.MethodPost, "/_sandbox/reset", "", http.StatusNoContent)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("create: %d, want 201, 400 or 413: %s", a.status, a.body)
		}
		e.checkB(t, "a create")
	})
}

// checkCreated checks that a created payment says what the request said:
// the same amount, currency, customer and metadata, as sent.
func (e *fuzzEnv) checkCreated(t *testing.T, reqBody, respBody []byte) {
	t.Helper()
	type payment struct {
		ID       string          `json:"id"`
		Amount   json.Number     `json:"amount"`
		Currency string          `json:"currency"`
		Customer json.RawMessage `json:"customer"`
		Metadata any             `json:"metadata"`
		Desc     string          `json:"description"`
		Success  string          `json:"success_url"`
		Cancel   string          `json:"cancel_url"`
	}
	decode := func(b []byte) payment {
		var p payment
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&p); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		return p
	}
	sent, got := decode(reqBody), decode(respBody)
	sa, ok1 := new(big.Rat).SetString(sent.Amount.String())
	ga, ok2 := new(big.Rat).SetString(got.Amount.String())
	if !ok1 || !ok2 || sa.Cmp(ga) != 0 {
		t.Fatalf("amount sent %s, answered %s", sent.Amount, got.Amount)
	}
	if sent.Currency != got.Currency || sent.Desc != got.Desc || sent.Success != got.Success || sent.Cancel != got.Cancel {
		t.Fatalf("sent %+v, answered %+v", sent, got)
	}
	if sent.Metadata == nil {
		sent.Metadata = map[string]any{}
	}
	if got.Metadata == nil {
		got.Metadata = map[string]any{}
	}
	if !reflect.DeepEqual(sent.Metadata, got.Metadata) {
		t.Fatalf("metadata sent %v, answered %v", sent.Metadata, got.Metadata)
	}
	var sc, gc struct{ Email, Name string }
	if json.Unmarshal(sent.Customer, &sc) != nil || json.Unmarshal(got.Customer, &gc) != nil || sc != gc {
		t.Fatalf("customer sent %s, answered %s", sent.Customer, got.Customer)
	}
	// The payment is A's, and only A's.
	e.must(t, fuzzKeyA, http.MethodGet, "/api/v1/payments/"+got.ID, "", http.StatusOK)
	e.must(t, fuzzKeyB, http.MethodGet, "/api/v1/payments/"+got.ID, "", http.StatusNotFound)
}

func FuzzListPayments(f *testing.F) {
	for _, s := range []string{
		"", "page=1&per_page=10", "per_page=100", "page=2&per_page=1", "page=0", "per_page=101", "page=-1",
		"page=1.5", "page=", "page=1&page=2", "per_page=1e2", "page=99999999999999999999", "status=completed",
		"page=%31", "page=%zz", "page=1;per_page=2", "a=%00", "per_page=+5",
	} {
		f.Add(s)
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, query string) {
		req, ok := request(http.MethodGet, "/api/v1/payments?"+query, nil)
		if !ok {
			return // net/http refuses the request line: no handler sees it
		}
		a := e.send(t, fuzzKeyA, req, nil)
		switch a.status {
		case http.StatusOK:
			var page struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			if err := json.Unmarshal(a.body, &page); err != nil {
				t.Fatalf("list: %v: %s", err, a.body)
			}
			for _, p := range page.Items {
				if p.ID == e.ids["{b.payment}"] || p.ID == e.ids["{b.completed}"] {
					t.Fatalf("A's list shows B's payment %s", p.ID)
				}
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("list ?%.300s: %d, want 200 or 400: %s", query, a.status, a.body)
		}
		e.checkB(t, "a list")
	})
}

func FuzzPathID(f *testing.F) {
	for _, s := range []string{
		"{b.payment}", "{b.completed}", "{b.event}", "{b.fault}", "{b.key}", "{b.endpoint}",
		"{a.payment}", "{a.fault}", "{a.endpoint}", "", ".", "..", "pay_", "pay_eX4wfP3t53uWYeLytOXuTdQK",
		strings.Repeat("x", 3000), "%", "%2F", "a/b", "../../api/v1/payments", "\x00", "\xff\xfe", "é",
		"{b.payment}/", " {b.payment}", "{b.payment}%00", "{a.payment}x",
	} {
		f.Add(s)
	}
	e := newFuzzEnv(f)
	var routes []contract.Operation
	for _, d := range []*contract.Document{e.docs.Service, e.docs.Sandbox} {
		for _, op := range d.Operations() {
			if strings.Contains(op.Path, "{id}") {
				routes = append(routes, op)
			}
		}
	}
	if len(routes) < 8 {
		f.Fatalf("only %d {id} routes in the documents", len(routes))
	}
	f.Fuzz(func(t *testing.T, id string) {
		for k, v := range e.ids {
			id = strings.ReplaceAll(id, k, v)
		}
		// Each id goes once escaped, as a client library sends it, and
		// once as typed when it is a single path segment.
		targets := []string{url.PathEscape(id)}
		if !strings.ContainsAny(id, "/?#%") {
			targets = append(targets, id)
		}
		for _, op := range routes {
			for _, seg := range targets {
				target := strings.Replace(op.Path, "{id}", seg, 1)
				var body []byte
				if op.Method != http.MethodGet {
					body = []byte{}
				}
				req, ok := request(op.Method, target, body)
				if !ok {
					continue
				}
				a := e.send(t, fuzzKeyA, req, body)
				if !e.ownA[id] && a.status != http.StatusNotFound {
					t.Fatalf("%s %.300q: %d, want 404 for an id that is not A's: %.1000s", op.Method, target, a.status, a.body)
				}
			}
		}
		e.checkB(t, "requests to every {id} route")
	})
}
