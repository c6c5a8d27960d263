// The sessions libopenapi-validator replays: every operation of both
// documents, every accepted shape of a create, and the error answers a
// client can reach, recorded from running servers.

package interop

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock/contract"
)

func TestLibopenapiValidator_FindsNothingInWholeSessions(t *testing.T) {
	needInterop(t)
	var log []exchange
	for _, form := range []struct{ name, variants string }{
		{"default forms", "default"},
		{"other forms", "amount=string,status=succeeded,payment_link=omit"},
	} {
		recordOpenSession(t, form.name, form.variants, &log)
	}
	recordConfiguredSession(t, &log)
	log = append(log, brokenCopies(t, log)...)

	rep := runLibopenapi(t, log)
	for _, d := range rep.Documents {
		for _, e := range d.Model {
			t.Errorf("%s: libopenapi cannot build the model: %s", d.Name, e)
		}
		for _, f := range d.Document {
			t.Errorf("%s: libopenapi-validator's document validation: %s", d.Name, f)
		}
	}
	if len(rep.Documents) != len(documents) {
		t.Errorf("libopenapi-validator judged %d documents, want %d", len(rep.Documents), len(documents))
	}
	judge(t, log, rep)
	checkEveryOperation(t, log)
	t.Logf("%d exchanges replayed", len(log))
}

// checkEveryOperation fails when the sessions left an operation of either
// document out, or a status the sessions are meant to reach.
func checkEveryOperation(t *testing.T, log []exchange) {
	t.Helper()
	seen := map[string]bool{}
	statuses := map[int]bool{}
	docs := map[string]*contract.Document{}
	for _, name := range documents {
		docs[name] = paymockDoc(t, name)
	}
	for _, ex := range log {
		if ex.expect == outsideContract || ex.expect == brokenAnswer {
			continue
		}
		pd := docs[ex.Doc]
		req := httptest.NewRequest(ex.Method, ex.Target, nil)
		rt, err := pd.Match(req)
		if err != nil {
			t.Errorf("%s: %s %s matches no operation of %s: %v", ex.what, ex.Method, ex.Target, ex.Doc, err)
			continue
		}
		seen[rt.OperationID()] = true
		statuses[ex.Status] = true
	}
	for _, name := range documents {
		for _, op := range docs[name].Operations() {
			if !seen[op.ID] {
				t.Errorf("the sessions never call %s (%s %s of %s)", op.ID, op.Method, op.Path, name)
			}
		}
	}
	for _, s := range []int{200, 201, 202, 204, 400, 401, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504} {
		if !statuses[s] {
			t.Errorf("the sessions never got a %d", s)
		}
	}
}

// recordOpenSession drives a merchant of an open-mode paymock with one
// --webhook-url endpoint through everything both documents offer.
func recordOpenSession(t *testing.T, name, variants string, log *[]exchange) {
	t.Helper()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hooks.Close)
	srv := startServer(t, "--variants", variants, "--webhook-url", hooks.URL+"/default",
		"--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	r := recorder{t: t, base: srv.URL, token: token(t) + "_" + strings.Fields(name)[0], label: name + ": ", log: log}

	// Creates in every shape the contract accepts.
	checkout := r.payment("create with mcc", "POST", "/api/v1/payments", createBody(nil), 201)
	var cards, plain []string
	for _, c := range []struct{ brand, number string }{
		{"visa", "4242424242424242"}, {"mastercard", "5555555555554444"}, {"amex", "378282246310005"},
		{"discover", "6011111111111117"}, {"diners", "36227206271667"}, {"jcb", "3566002020360505"},
		{"unionpay", "6200000000000005"}, {"unknown", "10000000000008"},
	} {
		cards = append(cards, r.payment("create with a "+c.brand+" card", "POST", "/api/v1/payments", createBody(map[string]any{
			"mcc": nil, "account_id": "acct_sandbox_active", "payment_method": cardInput(c.number),
		}), 201))
	}
	billing := cardInput("4242424242424242")
	billing["billing_details"] = map[string]any{"name": "Jane Doe", "address": map[string]any{
		"line1": "1 Main Street", "line2": "Flat 2", "city": "Dublin", "state": "Leinster", "postal_code": "D01 F5P2", "country": "IE"}}
	cards = append(cards, r.payment("create with card and billing details", "POST", "/api/v1/payments",
		createBody(map[string]any{"payment_method": billing}), 201))
	cards = append(cards, r.payment("create with only a billing name", "POST", "/api/v1/payments",
		createBody(map[string]any{"payment_method": map[string]any{"type": "card",
			"card": cardInput("5555555555554444")["card"], "billing_details": map[string]any{"name": "J"}}}), 201))
	for _, edit := range []map[string]any{
		{"amount": 0.01, "currency": "EUR", "mcc": 0, "expires_in": 1},
		{"amount": 999999999.99, "currency": "GBP", "mcc": 9999, "expires_in": 2592000},
		{"amount": 1234567.89, "currency": "CAD", "metadata": map[string]any{}},
		{"amount": 7, "metadata": map[string]any{"n": 1, "f": 1.5, "b": true, "z": nil, "s": "ünïcode ✓",
			"deep": []any{[]any{[]any{[]any{1}}}}, "obj": map[string]any{"a": map[string]any{"b": "c"}}}},
		{"customer": map[string]any{"email": "o'brien+tag@sub.example.co.uk", "name": strings.Repeat("N", 255)},
			"description": strings.Repeat("d", 1000), "success_url": "HTTP://[::1]:8080/ok?x=1#y", "cancel_url": "http://127.0.0.1"},
	} {
		b, _ := json.Marshal(edit)
		plain = append(plain, r.payment("create "+string(b[:min(len(b), 60)]), "POST", "/api/v1/payments", createBody(edit), 201))
	}
	for _, id := range slices.Concat(cards, plain, []string{checkout}) {
		r.ok("retrieve", "GET", "/api/v1/payments/"+id, nil, 200)
	}
	for _, q := range []string{"", "?page=1", "?page=2&per_page=1", "?per_page=100", "?page=99&per_page=5", "?page=2147483647"} {
		r.ok("list"+q, "GET", "/api/v1/payments"+q, nil, 200)
	}

	// Every outcome, each on a payment with and without a card, then
	// the refusal of a second one.
	for i, outcome := range []string{"complete", "fail", "expire"} {
		r.ok(outcome+" a card payment", "POST", "/_sandbox/payments/"+cards[i]+"/"+outcome, nil, 200)
		r.ok(outcome+" a checkout payment", "POST", "/_sandbox/payments/"+plain[i]+"/"+outcome, nil, 200)
		r.ok("retrieve after "+outcome, "GET", "/api/v1/payments/"+cards[i], nil, 200)
		r.ok(outcome+" again", "POST", "/_sandbox/payments/"+cards[i]+"/"+outcome, nil, 409)
		r.ok(outcome+" an unknown payment", "POST", "/_sandbox/payments/pay_000000000000000000000000/"+outcome, nil, 404)
	}

	// The clock: the advance expires what was left pending, on the way.
	r.ok("clock", "GET", "/_sandbox/clock", nil, 200)
	r.ok("advance by nothing", "POST", "/_sandbox/clock/advance", map[string]any{"seconds": 0}, 200)
	r.ok("advance a month", "POST", "/_sandbox/clock/advance", map[string]any{"seconds": 2592000}, 200)
	r.send(breaksContract, "advance too far", "POST", "/_sandbox/clock/advance", map[string]any{"seconds": 31536001}, 400, nil)
	r.ok("list after the clock moved", "GET", "/api/v1/payments?per_page=100", nil, 200)

	// Webhook endpoints, a test event, events and a redelivery.
	var added struct{ ID string }
	ex := r.ok("add an endpoint", "POST", "/_sandbox/webhook-endpoints", map[string]any{"url": hooks.URL + "/added"}, 201)
	if err := json.Unmarshal(ex.ResponseBody, &added); err != nil || added.ID == "" {
		t.Fatalf("no endpoint id in %s", ex.ResponseBody)
	}
	ex = r.ok("list endpoints", "GET", "/_sandbox/webhook-endpoints", nil, 200)
	var endpoints struct{ Items []struct{ ID, Source string } }
	if err := json.Unmarshal(ex.ResponseBody, &endpoints); err != nil {
		t.Fatal(err)
	}
	for _, e := range endpoints.Items {
		if e.Source == "default" {
			r.ok("delete the --webhook-url endpoint", "DELETE", "/_sandbox/webhook-endpoints/"+e.ID, nil, 400)
		}
	}
	r.ok("send a test event", "POST", "/_sandbox/webhook-endpoints/"+added.ID+"/test", nil, 202)
	r.ok("test an unknown endpoint", "POST", "/_sandbox/webhook-endpoints/we_000000000000000000000000/test", nil, 404)
	r.send(breaksContract, "add a ftp endpoint", "POST", "/_sandbox/webhook-endpoints", map[string]any{"url": "ftp://example.com/"}, 400, nil)
	ex = r.ok("events", "GET", "/_sandbox/events?per_page=100", nil, 200)
	var events struct{ Items []struct{ ID string } }
	if err := json.Unmarshal(ex.ResponseBody, &events); err != nil || len(events.Items) == 0 {
		t.Fatalf("no events in %s", ex.ResponseBody)
	}
	r.ok("events, a page", "GET", "/_sandbox/events?page=2&per_page=1", nil, 200)
	r.ok("redeliver", "POST", "/_sandbox/events/"+events.Items[0].ID+"/redeliver", nil, 202)
	r.ok("redeliver an unknown event", "POST", "/_sandbox/events/evt_000000000000000000000000/redeliver", nil, 404)
	r.ok("advance past the retries", "POST", "/_sandbox/clock/advance", map[string]any{"seconds": 7200}, 200)
	r.ok("events after delivery", "GET", "/_sandbox/events?per_page=100", nil, 200)
	r.ok("delete the endpoint", "DELETE", "/_sandbox/webhook-endpoints/"+added.ID, nil, 204)
	r.ok("delete it again", "DELETE", "/_sandbox/webhook-endpoints/"+added.ID, nil, 404)

	// Faults: each injected status of the service API, a webhook rule,
	// and the rule book's own calls.
	for _, f := range []struct {
		op     string
		status int
		extra  map[string]any
	}{
		{"createPayment", 503, map[string]any{"when": "after"}},
		{"listPayments", 500, nil},
		{"retrievePayment", 502, nil},
		{"listPayments", 504, nil},
		{"retrievePayment", 429, map[string]any{"retry_after": 3}},
	} {
		rule := map[string]any{"operation": f.op, "status": f.status, "times": 1}
		for k, v := range f.extra {
			rule[k] = v
		}
		r.ok("add a fault", "POST", "/_sandbox/faults", rule, 201)
		switch f.op {
		case "createPayment":
			r.ok("create under a fault", "POST", "/api/v1/payments", createBody(nil), f.status)
		case "listPayments":
			r.ok("list under a fault", "GET", "/api/v1/payments", nil, f.status)
		default:
			r.ok("retrieve under a fault", "GET", "/api/v1/payments/"+checkout, nil, f.status)
		}
	}
	r.send(inContract, "retrieve under the Paymock-Fault header", "GET", "/api/v1/payments/"+checkout, nil, 503,
		func(h http.Header) { h.Set("Paymock-Fault", "status=503") })
	var rule struct{ ID string }
	ex = r.ok("add a webhook fault", "POST", "/_sandbox/faults", map[string]any{"target": "webhooks", "event_type": "payment.completed", "duplicate": 2}, 201)
	if err := json.Unmarshal(ex.ResponseBody, &rule); err != nil || rule.ID == "" {
		t.Fatalf("no rule id in %s", ex.ResponseBody)
	}
	r.ok("add a delay fault", "POST", "/_sandbox/faults", map[string]any{"target": "webhooks", "delay_ms": 1, "probability": 0.5}, 201)
	late := r.payment("create for the webhook faults", "POST", "/api/v1/payments", createBody(nil), 201)
	r.ok("complete under the webhook faults", "POST", "/_sandbox/payments/"+late+"/complete", nil, 200)
	r.ok("events under the webhook faults", "GET", "/_sandbox/events?per_page=5", nil, 200)
	r.ok("list faults", "GET", "/_sandbox/faults", nil, 200)
	r.send(breaksContract, "add a fault with a status that cannot be injected", "POST", "/_sandbox/faults", map[string]any{"status": 418}, 400, nil)
	r.ok("add a fault that breaks a rule the schema cannot state", "POST", "/_sandbox/faults", map[string]any{"status": 503, "reset": true}, 400)
	r.ok("delete a fault", "DELETE", "/_sandbox/faults/"+rule.ID, nil, 204)
	r.ok("delete it again", "DELETE", "/_sandbox/faults/"+rule.ID, nil, 404)
	r.ok("clear faults", "DELETE", "/_sandbox/faults", nil, 204)

	// API keys: one created, used, revoked, and refused after.
	var key struct{ ID, Key string }
	ex = r.ok("create a key", "POST", "/_sandbox/api-keys", nil, 201)
	if err := json.Unmarshal(ex.ResponseBody, &key); err != nil || key.Key == "" {
		t.Fatalf("no key in %s", ex.ResponseBody)
	}
	r.ok("list keys", "GET", "/_sandbox/api-keys", nil, 200)
	created := r
	created.token = key.Key
	created.ok("list with the created key", "GET", "/api/v1/payments?per_page=1", nil, 200)
	r.ok("revoke the key", "DELETE", "/_sandbox/api-keys/"+key.ID, nil, 204)
	r.ok("revoke it again", "DELETE", "/_sandbox/api-keys/"+key.ID, nil, 404)
	created.ok("list with the revoked key", "GET", "/api/v1/payments", nil, 401)

	// The service API's error answers.
	r.send(breaksContract, "create with every field wrong", "POST", "/api/v1/payments", map[string]any{
		"amount": 0, "currency": "JPY", "customer": map[string]any{"email": "nope"}, "expires_in": 0,
		"success_url": "ftp://x", "mcc": 5732, "account_id": "acct_sandbox_active", "colour": "red"}, 400, nil)
	r.send(breaksContract, "create with a body that is not JSON", "POST", "/api/v1/payments", []byte(`{"amount": 10.5,`), 400, nil)
	r.send(breaksContract, "create with no body", "POST", "/api/v1/payments", nil, 400, nil)
	r.ok("create with three decimals", "POST", "/api/v1/payments", createBody(map[string]any{"amount": 10.505}), 400)
	r.ok("create with an expired card", "POST", "/api/v1/payments", createBody(map[string]any{
		"mcc": nil, "account_id": "acct_sandbox_active", "payment_method": map[string]any{"type": "card",
			"card": map[string]any{"number": "4242424242424242", "expiry_month": 1, "expiry_year": 2000, "cvc": "123"}}}), 400)
	r.ok("create with an inactive account", "POST", "/api/v1/payments", createBody(map[string]any{"mcc": nil, "account_id": "acct_sandbox_inactive"}), 400)
	r.ok("create with a card failing Luhn", "POST", "/api/v1/payments", createBody(map[string]any{"payment_method": cardInput("4242424242424241")}), 400)
	r.send(breaksContract, "create as text/plain", "POST", "/api/v1/payments", createBody(nil), 415,
		func(h http.Header) { h.Set("Content-Type", "text/plain") })
	r.send(breaksContract, "create with a body over the limit", "POST", "/api/v1/payments",
		createBody(map[string]any{"description": strings.Repeat("x", 1<<20)}), 413, nil)
	r.send(breaksContract, "list with page 0", "GET", "/api/v1/payments?page=0", nil, 400, nil)
	r.send(breaksContract, "list with per_page 101 and a word for page", "GET", "/api/v1/payments?page=one&per_page=101", nil, 400, nil)
	r.ok("retrieve an unknown payment", "GET", "/api/v1/payments/pay_000000000000000000000000", nil, 404)
	// An id past maxLength breaks the contract; retrievePayment declares
	// no 400, and paymock answers it as the unknown payment it is.
	r.send(breaksContract, "retrieve a payment id too long", "GET", "/api/v1/payments/"+strings.Repeat("p", 300), nil, 404, nil)
	r.send(outsideContract, "delete the payments", "DELETE", "/api/v1/payments", nil, 405, nil)
	r.send(outsideContract, "an unknown path", "GET", "/api/v1/refunds", nil, 404, nil)
	anon := r
	anon.token = ""
	anon.send(breaksContract, "list without a key", "GET", "/api/v1/payments", nil, 401, nil)
	anon.send(breaksContract, "clock without a key", "GET", "/_sandbox/clock", nil, 401, nil)
	// The document cannot tell a good key from a bad one: the request
	// keeps the contract, and the 401 is paymock's to give.
	anon.send(inContract, "list with a malformed key", "GET", "/api/v1/payments", nil, 401,
		func(h http.Header) { h.Set("Authorization", "Bearer not a token") })
	anon.send(breaksContract, "list with another scheme", "GET", "/api/v1/payments", nil, 401,
		func(h http.Header) { h.Set("Authorization", "Basic dXNlcjpwYXNz") })

	// The journal and the report, whose answers describe all of the above.
	for _, q := range []string{"?per_page=100", "?status=400", "?violations=true&per_page=3&page=2", "?status=201&violations=false"} {
		r.ok("requests"+q, "GET", "/_sandbox/requests"+q, nil, 200)
	}
	r.send(breaksContract, "requests with status 99", "GET", "/_sandbox/requests?status=99", nil, 400, nil)
	r.ok("report", "GET", "/_sandbox/report", nil, 200)
	r.ok("report as JUnit", "GET", "/_sandbox/report?format=junit", nil, 200)
	r.send(breaksContract, "report as csv", "GET", "/_sandbox/report?format=csv", nil, 400, nil)
	r.ok("reset", "POST", "/_sandbox/reset", nil, 204)
	r.ok("list after the reset", "GET", "/api/v1/payments", nil, 200)
}

// recordConfiguredSession reaches what open mode cannot: a merchant
// without PCI DSS approval (403) and a server without a journal (409).
func recordConfiguredSession(t *testing.T, log *[]exchange) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "paymock.yaml")
	if err := os.WriteFile(cfg, []byte(`merchants:
  - name: acme
    api_keys: [sk_test_interop_acme]
    accounts:
      - {id: acct_acme_main, active: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "--config", cfg, "--journal-size", "0")
	r := recorder{t: t, base: srv.URL, token: "sk_test_interop_acme", label: "configured: ", log: log}
	r.ok("create with an account", "POST", "/api/v1/payments", createBody(map[string]any{"mcc": nil, "account_id": "acct_acme_main"}), 201)
	r.ok("create with a card, unapproved", "POST", "/api/v1/payments", createBody(map[string]any{"payment_method": cardInput("4242424242424242")}), 403)
	r.ok("create with an unknown account", "POST", "/api/v1/payments", createBody(map[string]any{"mcc": nil, "account_id": "acct_nope"}), 400)
	r.ok("requests without a journal", "GET", "/_sandbox/requests", nil, 409)
	r.ok("report without a journal", "GET", "/_sandbox/report", nil, 409)
	r.ok("list keys", "GET", "/_sandbox/api-keys", nil, 200)
	other := r
	other.token = "sk_test_interop_nobody"
	other.ok("list with an unknown key", "GET", "/api/v1/payments", nil, 401)
}
