// libopenapi-validator, an OpenAPI validator that shares no code with
// paymock's kin-openapi, replaying every request and answer of whole
// merchant sessions, and judging both documents.

package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// libopenapiModule is the module, beside paymock's, that runs
// libopenapi-validator over recorded exchanges. It is a module of its own
// so that paymock's go.mod does not carry libopenapi's dependencies; its
// go.sum pins them, and the module cache serves them after the first run.
var libopenapiModule = filepath.Join("testdata", "libopenapi")

// expect is what a recorded request is to libopenapi-validator.
type expect int

const (
	// inContract: the request keeps the contract; no finding is allowed.
	inContract expect = iota
	// breaksContract: the request breaks the contract on purpose (to get
	// a 400, 401, 413 or 415), and the validator must say so too. Its
	// answer must still keep the contract.
	breaksContract
	// outsideContract: the method or path is not in the document (paymock
	// answers 404 or 405); the validator must find no operation, and an
	// answer to no operation cannot be checked.
	outsideContract
	// brokenAnswer: a recorded answer the test broke on purpose; the
	// validator must refuse it, or its silence on the real ones means
	// nothing.
	brokenAnswer
)

// exchange is one request and its answer as they were on the wire. The
// exported fields are what testdata/libopenapi reads.
type exchange struct {
	Doc            string      `json:"doc"`
	Method         string      `json:"method"`
	Target         string      `json:"target"`
	RequestHeader  http.Header `json:"request_header"`
	RequestBody    []byte      `json:"request_body"`
	Status         int         `json:"status"`
	ResponseHeader http.Header `json:"response_header"`
	ResponseBody   []byte      `json:"response_body"`

	what   string // for messages: "default forms: create with a visa card"
	expect expect
}

// finding is one violation libopenapi-validator reported.
type finding struct {
	Type    string   `json:"type"`
	SubType string   `json:"sub_type"`
	Message string   `json:"message"`
	Reason  string   `json:"reason"`
	Schema  []string `json:"schema"`
}

func (f finding) String() string {
	s := f.Type + "/" + f.SubType + ": " + f.Message
	if f.Reason != "" && f.Reason != f.Message {
		s += " (" + f.Reason + ")"
	}
	for _, e := range f.Schema {
		s += "\n\t\t" + e
	}
	return s
}

// libopenapiReport is what testdata/libopenapi prints.
type libopenapiReport struct {
	Documents []struct {
		Name     string    `json:"name"`
		Model    []string  `json:"model"`
		Document []finding `json:"document"`
	} `json:"documents"`
	Exchanges []struct {
		Request  []finding `json:"request"`
		Response []finding `json:"response"`
	} `json:"exchanges"`
}

// recorder sends requests to one paymock and keeps every exchange.
type recorder struct {
	t     *testing.T
	base  string
	token string
	label string // prefixed to each exchange's what
	log   *[]exchange
}

// send makes one request and records it. body is sent as is when it is a
// []byte and as JSON otherwise (nil sends none); header, when not nil,
// changes the request's headers last. The status must be want.
func (r recorder) send(e expect, what, method, target string, body any, want int, header func(http.Header)) exchange {
	r.t.Helper()
	// The body as sent, to be replayed byte for byte.
	raw, ok := body.([]byte)
	if body != nil && !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			r.t.Fatal(err)
		}
		body = raw
	}
	var sent http.Header
	c := doWith(r.t, method, r.base+target, r.token, body, func(h http.Header) {
		if header != nil {
			header(h)
		}
		sent = h.Clone()
	})
	doc := "openapi.yaml"
	if strings.HasPrefix(target, "/_sandbox/") {
		doc = "sandbox/openapi.yaml"
	}
	ex := exchange{Doc: doc, Method: method, Target: target, RequestHeader: sent, RequestBody: raw,
		Status: c.status, ResponseHeader: c.header, ResponseBody: c.body,
		what: r.label + what, expect: e}
	if c.status != want {
		r.t.Errorf("%s: %s %s: status %d, want %d: %.300s", ex.what, method, target, c.status, want, c.body)
	}
	*r.log = append(*r.log, ex)
	return ex
}

// ok sends a request that keeps the contract.
func (r recorder) ok(what, method, target string, body any, want int) exchange {
	r.t.Helper()
	return r.send(inContract, what, method, target, body, want, nil)
}

// payment sends a request that keeps the contract and answers a payment,
// and returns its id.
func (r recorder) payment(what, method, target string, body any, want int) string {
	r.t.Helper()
	ex := r.ok(what, method, target, body, want)
	var p struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(ex.ResponseBody, &p) != nil || p.ID == "" {
		r.t.Fatalf("%s: no id in %s", ex.what, ex.ResponseBody)
	}
	return p.ID
}

// runLibopenapi has testdata/libopenapi validate the exchanges and both
// documents of the checkout.
func runLibopenapi(t *testing.T, exchanges []exchange) libopenapiReport {
	t.Helper()
	traffic := filepath.Join(t.TempDir(), "traffic.json")
	data, err := json.Marshal(exchanges)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(traffic, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(libopenapiModule)
	if err != nil {
		t.Fatal(err)
	}
	// -mod=readonly: the committed go.sum is the whole truth, so a run
	// offline needs nothing but the module cache.
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly"}
	out, err := runToolErr(t, 10*time.Minute, dir, env, "go", "run", ".", "-root", suite.root, "-traffic", traffic)
	if err != nil {
		t.Fatalf("libopenapi-validator did not run: %v\n%s", err, out)
	}
	var rep libopenapiReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("libopenapi-validator's report is not JSON: %v\n%s", err, out)
	}
	if len(rep.Exchanges) != len(exchanges) {
		t.Fatalf("libopenapi-validator judged %d exchanges of %d", len(rep.Exchanges), len(exchanges))
	}
	return rep
}

// judge fails the test on every finding the exchanges' expectations do
// not allow, and on a request meant to break the contract that the
// validator passes. There is no allow-list: on paymock's documents and
// traffic libopenapi-validator v0.16.2 and kin-openapi agree everywhere,
// and a finding is a fault of paymock's until shown otherwise.
func judge(t *testing.T, exchanges []exchange, rep libopenapiReport) {
	t.Helper()
	for i, ex := range exchanges {
		got := rep.Exchanges[i]
		where := fmt.Sprintf("%s (%s %s → %d)", ex.what, ex.Method, ex.Target, ex.Status)
		switch ex.expect {
		case inContract:
			for _, f := range got.Request {
				t.Errorf("%s: libopenapi-validator refuses the request: %s", where, f)
			}
		case breaksContract:
			if len(got.Request) == 0 {
				t.Errorf("%s: the request breaks the contract on purpose, and libopenapi-validator finds nothing", where)
			}
		case outsideContract:
			if len(got.Request) == 0 || got.Request[0].Type != "path" || got.Request[0].SubType != "missing" && got.Request[0].SubType != "missingOperation" {
				t.Errorf("%s: libopenapi-validator finds an operation for a request outside the contract: %v", where, got.Request)
			}
			continue
		case brokenAnswer:
			if len(got.Response) == 0 {
				t.Errorf("%s: the answer was broken on purpose, and libopenapi-validator finds nothing in it: %.400s", where, ex.ResponseBody)
			}
			continue
		}
		for _, f := range got.Response {
			t.Errorf("%s: libopenapi-validator refuses paymock's answer: %s\n\tbody: %.400s", where, f, ex.ResponseBody)
		}
	}
}

// brokenCopies are copies of recorded answers, each broken in one way the
// contract forbids: the validator must refuse every one.
func brokenCopies(t *testing.T, log []exchange) []exchange {
	t.Helper()
	find := func(method, prefix string, status int) exchange {
		t.Helper()
		for _, ex := range log {
			if ex.Method == method && strings.HasPrefix(ex.Target, prefix) && ex.Status == status && ex.expect == inContract {
				return ex
			}
		}
		t.Fatalf("no %s %s answered %d was recorded", method, prefix, status)
		return exchange{}
	}
	edit := func(ex exchange, what string, change func(map[string]any)) exchange {
		t.Helper()
		var body map[string]any
		if err := json.Unmarshal(ex.ResponseBody, &body); err != nil {
			t.Fatalf("%s: %v", ex.what, err)
		}
		change(body)
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		ex.ResponseBody, ex.what, ex.expect = b, "broken on purpose: "+what, brokenAnswer
		return ex
	}
	retrieved := find("GET", "/api/v1/payments/pay_", 200)
	status := find("POST", "/api/v1/payments", 201)
	status.Status, status.what, status.expect = 299, "broken on purpose: an undeclared status", brokenAnswer
	return []exchange{
		edit(retrieved, "an amount with three decimals", func(p map[string]any) { p["amount"] = "10.505" }),
		edit(retrieved, "no currency", func(p map[string]any) { delete(p, "currency") }),
		edit(retrieved, "a field the schema does not have", func(p map[string]any) { p["refunded"] = true }),
		edit(retrieved, "a time with fractional seconds", func(p map[string]any) { p["created_at"] = "2026-11-21T12:00:00.5Z" }),
		edit(find("GET", "/api/v1/payments?page=2", 200), "a page of 0", func(l map[string]any) {
			l["pagination"].(map[string]any)["page"] = 0
		}),
		edit(find("GET", "/_sandbox/events", 200), "an event of an unknown type", func(l map[string]any) {
			l["items"].([]any)[0].(map[string]any)["type"] = "payment.refunded"
		}),
		edit(find("POST", "/_sandbox/payments/", 409), "an error without its type", func(e map[string]any) {
			delete(e["error"].(map[string]any), "type")
		}),
		status,
	}
}
