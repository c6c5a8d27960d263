// The request journal and the contract report over HTTP.

package sandbox

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestJournal_RecordsAcceptedAndRejectedRequests(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	bad := validCreate()
	bad["currency"] = "JPY"
	delete(bad, "mcc")
	st, _, h := env.do("POST", "/api/v1/payments", keyA, bad)
	if st != 400 || !strings.HasPrefix(h.Get("Request-Id"), "req_") {
		t.Fatalf("bad create: %d, Request-Id %q", st, h.Get("Request-Id"))
	}
	rejectedID := h.Get("Request-Id")
	env.do("GET", "/api/v1/payments/"+id+"?x=1", keyA, nil)
	env.do("GET", "/api/v1/nope", keyA, nil)
	env.do("GET", "/api/v1/payments", keyB, nil) // another merchant

	_, body, _ := env.do("GET", "/_sandbox/requests?per_page=100", keyA, nil)
	items := body["items"].([]any)
	// Newest first: the unknown route, the retrieve, the rejected create, the create.
	var got []string
	for _, it := range items {
		e := it.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %v", e["method"], e["path"], e["status"]))
	}
	want := []string{"GET /api/v1/nope 404", "GET /api/v1/payments/" + id + " 200", "POST /api/v1/payments 400", "POST /api/v1/payments 201"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("journal:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rejected := items[2].(map[string]any)
	if rejected["id"] != rejectedID || rejected["operation_id"] != "createPayment" {
		t.Errorf("rejected entry %v", rejected)
	}
	vs := rejected["violations"].([]any) // the contract's, then the rules' (mcc xor account_id)
	if len(vs) != 2 || vs[0].(map[string]any)["param"] != "currency" || vs[1].(map[string]any)["param"] != "mcc" {
		t.Errorf("violations %v", vs)
	}
	wantVariant := "default"
	if env.normalize { // the suite runs under PAYMOCK_TEST_VARIANTS
		wantVariant = items[1].(map[string]any)["variant"].(string)
	}
	if items[1].(map[string]any)["query"] != "x=1" || items[1].(map[string]any)["variant"] != wantVariant || wantVariant == "" {
		t.Errorf("retrieve entry %v", items[1])
	}
	// Filters.
	_, body, _ = env.do("GET", "/_sandbox/requests?violations=true", keyA, nil)
	if n := len(body["items"].([]any)); n != 2 { // the 400 and the unknown route
		t.Errorf("violations=true: %d entries", n)
	}
	_, body, _ = env.do("GET", "/_sandbox/requests?status=201", keyA, nil)
	if n := body["pagination"].(map[string]any)["total_items"]; n != 1.0 {
		t.Errorf("status=201: %v entries", n)
	}
	// B sees only its own (one list call, plus this journal call itself
	// once it has finished).
	_, body, _ = env.do("GET", "/_sandbox/requests", keyB, nil)
	if n := len(body["items"].([]any)); n != 1 {
		t.Errorf("B's journal has %d entries", n)
	}
}

func TestJournal_AnIDTheContractRefusesIsAnsweredNotFoundAndJournaledForWhatItBroke(t *testing.T) {
	env := newEnv(t)
	long := strings.Repeat("x", 300) // past the id's maxLength of 255
	if st, _, _ := env.do("GET", "/api/v1/payments/"+long, keyA, nil); st != 404 {
		t.Fatalf("GET a 300-character id: %d, want 404 as for any id not the merchant's", st)
	}
	_, body, _ := env.do("GET", "/_sandbox/requests?violations=true", keyA, nil)
	items := body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("%d violating entries, want the one retrieve", len(items))
	}
	vs := items[0].(map[string]any)["violations"].([]any)
	v := vs[0].(map[string]any)
	// What the request broke, not the answer it got: a gate reading the
	// journal says why the call failed the contract.
	if len(vs) != 1 || v["param"] != "id" || v["code"] == "resource_missing" ||
		!strings.Contains(fmt.Sprint(v["message"]), "255") {
		t.Errorf("the entry's violations are %v, want the id's length the contract refuses", vs)
	}
}

func TestReport_CountsAndCoverageAreExact(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)                   // createPayment 201
	env.create(keyA, nil)                         // createPayment 201
	env.do("POST", "/api/v1/payments", keyA, "{") // createPayment 400 invalid_json (refused)
	bad := validCreate()
	bad["amount"] = "ten"
	env.do("POST", "/api/v1/payments", keyA, bad) // 400 refused
	env.do("POST", "/api/v1/payments", keyA, bad) // same violation again
	acct := validCreate()
	delete(acct, "mcc")
	acct["account_id"] = "acct_sandbox_inactive"
	env.do("POST", "/api/v1/payments", keyA, acct)                  // 400 by a domain rule: not a contract violation
	env.do("GET", "/api/v1/payments/"+id, keyA, nil)                // retrievePayment 200
	env.do("GET", "/api/v1/payments/pay_missing", keyA, nil)        // retrievePayment 404
	env.do("DELETE", "/api/v1/payments", keyA, nil)                 // unmatched 405 (refused)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil) // control API: not counted

	_, r, _ := env.do("GET", "/_sandbox/report", keyA, nil)
	if r["calls"] != 9.0 || r["violating_calls"] != 4.0 || r["unmatched_calls"] != 1.0 {
		t.Errorf("totals %v %v %v", r["calls"], r["violating_calls"], r["unmatched_calls"])
	}
	cov := r["coverage"].(map[string]any)
	// Operations: create and retrieve of 3. Statuses: 201, 400 of create;
	// 200, 404 of retrieve; of 11+8+8 = 27 declared (429, 502, 503 and
	// 504 of each are for faults).
	if cov["operations_exercised"] != 2.0 || cov["operations_total"] != 3.0 || cov["operations"] != 0.6667 ||
		cov["statuses_exercised"] != 4.0 || cov["statuses_total"] != 27.0 || cov["statuses"] != 0.1481 {
		t.Errorf("coverage %v", cov)
	}
	ops := map[string]map[string]any{}
	for _, o := range r["operations"].([]any) {
		o := o.(map[string]any)
		ops[o["operation_id"].(string)] = o
	}
	create := ops["createPayment"]
	if create["calls"] != 6.0 || create["violating_calls"] != 3.0 {
		t.Errorf("create %v", create)
	}
	vs := create["violations"].([]any)
	if len(vs) != 2 {
		t.Fatalf("distinct violations %v", vs)
	}
	counts := map[string]float64{}
	for _, v := range vs {
		v := v.(map[string]any)
		counts[v["code"].(string)] = v["count"].(float64)
	}
	if counts["invalid_json"] != 1 || counts["parameter_invalid"] != 2 {
		t.Errorf("violation counts %v", counts)
	}
	if ops["listPayments"]["calls"] != 0.0 || ops["retrievePayment"]["calls"] != 2.0 {
		t.Errorf("list %v retrieve %v", ops["listPayments"]["calls"], ops["retrievePayment"]["calls"])
	}
}

func TestReport_JUnitListsAFailurePerDistinctViolation(t *testing.T) {
	env := newEnv(t)
	env.create(keyA, nil)
	bad := validCreate()
	bad["amount"] = "ten"
	delete(bad, "description")
	env.do("POST", "/api/v1/payments", keyA, bad)
	req, _ := http.NewRequest("GET", env.URL+"/_sandbox/report?format=junit", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name     string `xml:"name,attr"`
				Failures []struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, raw)
	}
	if doc.Tests != 3 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 3 {
		t.Fatalf("suite %+v\n%s", doc, raw)
	}
	var msgs []string
	skipped := 0
	for _, c := range doc.Suites[0].Cases {
		for _, f := range c.Failures {
			msgs = append(msgs, f.Message)
		}
		if c.Skipped != nil {
			skipped++
		}
	}
	if strings.Join(msgs, ",") != "amount: parameter_invalid,description: parameter_missing" || skipped != 2 {
		t.Errorf("failures %v, skipped %d\n%s", msgs, skipped, raw)
	}
}

func TestReport_JUnitSummariesReadInWords(t *testing.T) {
	env := newEnv(t)
	env.create(keyA, nil)
	// One answer injected by the test's own fault: counted apart.
	req, _ := http.NewRequest("GET", env.URL+"/api/v1/payments", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Paymock-Fault", "status=503")
	if st, body, _ := env.send(req); st != http.StatusServiceUnavailable {
		t.Fatalf("an injected 503: status %d %s", st, body)
	}
	req, _ = http.NewRequest("GET", env.URL+"/_sandbox/report?format=junit", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("report: %d %s", resp.StatusCode, raw)
	}
	var doc struct {
		Suites []struct {
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value int    `xml:"value,attr"`
			} `xml:"properties>property"`
			SystemOut string `xml:"system-out"`
			Cases     []struct {
				Name      string `xml:"name,attr"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("not one suite (%v):\n%s", err, raw)
	}
	suite := doc.Suites[0]
	out := map[string]string{}
	for _, c := range suite.Cases {
		op, _, _ := strings.Cut(c.Name, " ")
		out[op] = c.SystemOut
	}
	for op, want := range map[string]string{
		"createPayment":   "1 call, 0 violating; statuses seen: 201",
		"retrievePayment": "0 calls, 0 violating",
	} {
		if out[op] != want {
			t.Errorf("%s says %q, want %q", op, out[op], want)
		}
	}
	if want := "2 calls, 0 violating; 1 answer injected by faults the client asked for"; suite.SystemOut != want {
		t.Errorf("the suite says %q, want %q", suite.SystemOut, want)
	}
	props := map[string]int{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if props["calls"] != 2 || props["injected_calls"] != 1 || props["violating_calls"] != 0 {
		t.Errorf("properties %v, want 2 calls, 1 of them injected", props)
	}
}
