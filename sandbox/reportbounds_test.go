// Tests of the bound on the distinct violations a report lists: a client
// that makes up a new violation with every request gets the first ones
// listed and the rest counted, in the report, its JUnit form and the
// dashboard's page, and the gate's count of violating calls stays exact.

package sandbox

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

// madeUpFields is a valid create with n unknown fields named after the
// request: every one a violation no request made before.
func madeUpFields(request, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"amount": 10.5, "currency": "USD", "customer": {"email": "jane@example.com", "name": "Jane"},
		"description": "x", "expires_in": 3600, "metadata": {}, "success_url": "https://a.example/s",
		"cancel_url": "https://a.example/c", "mcc": 5732`)
	for k := range n {
		fmt.Fprintf(&b, `, "r%d_f%02d": 0`, request, k)
	}
	b.WriteString("}")
	return b.Bytes()
}

func TestReport_AClientMakingUpViolationsGetsTheFirstListedAndTheRestCounted(t *testing.T) {
	const requests, each = 4, 30 // 120 distinct violations
	most := paymock.MaxDistinctViolations
	env := newEnv(t)
	env.create(keyA, nil)
	for i := range requests {
		if st, out, _ := env.send(env.request("POST", "/api/v1/payments", keyA, madeUpFields(i, each))); st != 400 {
			t.Fatalf("create %d: %d %v", i, st, out)
		}
	}

	st, r, _ := env.do("GET", "/_sandbox/report", keyA, nil)
	if st != 200 {
		t.Fatalf("report: %d %v", st, r)
	}
	if r["calls"] != float64(requests+1) || r["violating_calls"] != float64(requests) {
		t.Errorf("report counts %v calls, %v violating; want %d and %d", r["calls"], r["violating_calls"], requests+1, requests)
	}
	var create map[string]any
	for _, o := range r["operations"].([]any) {
		if o := o.(map[string]any); o["operation_id"] == "createPayment" {
			create = o
		}
	}
	listed := create["violations"].([]any)
	if len(listed) != most || create["unlisted_violations"] != float64(requests*each-most) || create["violating_calls"] != float64(requests) {
		t.Errorf("createPayment lists %d violations, %v unlisted, %v violating calls; want %d, %d and %d",
			len(listed), create["unlisted_violations"], create["violating_calls"], most, requests*each-most, requests)
	}
	for _, v := range listed { // the first made: the first request's, then the second's
		if p := v.(map[string]any)["param"].(string); !strings.HasPrefix(p, "r0_") && !strings.HasPrefix(p, "r1_") {
			t.Errorf("lists %s, made after the first %d", p, most)
		}
	}

	req := env.request("GET", "/_sandbox/report?format=junit", keyA, nil)
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("JUnit report: %d %v", resp.StatusCode, err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name     string `xml:"name,attr"`
				Failures []struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Suites[0].Cases {
		if !strings.HasPrefix(c.Name, "createPayment ") {
			continue
		}
		last := c.Failures[len(c.Failures)-1]
		if len(c.Failures) != most+1 || last.Type != "more_violations" || !strings.HasPrefix(last.Text, fmt.Sprintf("%d more violations", requests*each-most)) {
			t.Errorf("JUnit's createPayment has %d failures, the last %+v; want %d and one of the %d unlisted",
				len(c.Failures), last, most+1, requests*each-most)
		}
	}

	page := signIn(t, env, keyA).get("/dashboard/report")
	if n := strings.Count(page, `data-violation-code="parameter_unknown"`); n != most {
		t.Errorf("the dashboard's report lists %d violations, want %d", n, most)
	}
	if want := fmt.Sprintf(`data-field="unlisted-violations">%d<`, requests*each-most); !strings.Contains(page, want) {
		t.Errorf("the dashboard's report does not say %s", want)
	}
	if !strings.Contains(page, fmt.Sprintf(`data-field="violating-calls">%d<`, requests)) {
		t.Errorf("the dashboard's report does not count %d violating calls", requests)
	}
}
