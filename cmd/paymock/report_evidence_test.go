// The gate's verdict and its evidence agree: every call that fails
// --fail-on-violations is shown in the table and in the JUnit report, and
// nothing the gate shows as a failure is a fault the tests asked for.

package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymock/paymock/sandbox"
)

// callWith sends one service API call as key with the extra header h (a
// "Name: value" line, or "") and returns its status, or 0 when the
// connection was dropped with no answer.
func callWith(t *testing.T, base, key, method, path, h string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if name, value, ok := strings.Cut(h, ":"); ok {
		req.Header.Set(name, strings.TrimSpace(value))
	}
	// A connection of its own: a client retries a GET on a reused
	// connection that was reset, and the reset would be counted twice.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return 0, nil // reset
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// junitDoc is what the tests read of a JUnit file.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Failures string   `xml:"failures,attr"`
	Suites   []struct {
		Cases []struct {
			Name      string `xml:"name,attr"`
			SystemOut string `xml:"system-out"`
			Failures  []struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit reads the JUnit file at path.
func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit file: %v", err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the JUnit file is not XML: %v\n%s", err, raw)
	}
	return doc
}

// junitCounts reads a JUnit file: the failures the suites declare, and
// each test case's system-out ("out: ...") and failure messages.
func junitCounts(t *testing.T, path string) (failures string, messages map[string][]string) {
	t.Helper()
	doc := readJUnit(t, path)
	messages = map[string][]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			messages[c.Name] = append(messages[c.Name], "out: "+c.SystemOut)
			for _, f := range c.Failures {
				messages[c.Name] = append(messages[c.Name], f.Message)
			}
		}
	}
	return doc.Failures, messages
}

func TestReport_CallsThatMatchedNoOperationAreShownWhereTheGateFails(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	r.call(gateKey, "GET", "/api/v1/payments", "", http.StatusOK)
	r.call(gateKey, "GET", "/api/v1/payment", "", http.StatusNotFound)
	r.call(gateKey, "GET", "/api/v1/payment", "", http.StatusNotFound)
	r.call(gateKey, "DELETE", "/api/v1/payments", "", http.StatusMethodNotAllowed)

	junit := filepath.Join(t.TempDir(), "junit.xml")
	stdout, stderr, code := runCLI(context.Background(),
		[]string{"report", "--url", r.srv.URL, "--api-key", gateKey, "--fail-on-violations", "--junit", junit}, nil)
	if code != 1 || !strings.Contains(stderr, "--fail-on-violations: 3 of 4 calls violated the contract") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 for 3 violating calls", code, stderr)
	}
	for _, want := range []string{
		"3 calls matched no operation",
		"violations:\n",
		"  GET /api/v1/payment (no operation) route_not_found: no such route: GET /api/v1/payment; did you mean /api/v1/payments? (2×)\n",
		"  DELETE /api/v1/payments (no operation) method_not_allowed: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, stdout)
		}
	}
	failures, cases := junitCounts(t, junit)
	if failures != "1" {
		t.Errorf("JUnit failures = %q, want 1 failed test case: %v", failures, cases)
	}
	got := strings.Join(cases["calls that matched no operation"], "\n")
	for _, want := range []string{"GET /api/v1/payment: route_not_found", "DELETE /api/v1/payments: method_not_allowed"} {
		if !strings.Contains(got, want) {
			t.Errorf("JUnit's case of unmatched calls lacks %q: %v", want, cases)
		}
	}
}

func TestReport_RefusesTheAPIsBaseURL(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	r.call(gateKey, "GET", "/api/v1/payments", "", http.StatusOK)
	for _, suffix := range []string{"/api/v1", "/api/v1/", "/api"} {
		_, stderr, code := runCLI(context.Background(), []string{"report", "--url", r.srv.URL + suffix, "--api-key", gateKey}, nil)
		if code != 2 || !strings.Contains(stderr, "give the server's base URL, not the API's: --url "+r.srv.URL+"\n") {
			t.Errorf("--url ...%s: exit %d, stderr:\n%s\nwant exit 2 naming --url %s", suffix, code, stderr, r.srv.URL)
		}
	}
	// The mistaken URL sent nothing: the merchant's report is as the tests
	// left it, and the gate passes.
	stdout, stderr, code := runCLI(context.Background(), []string{"report", "--url", r.srv.URL, "--api-key", gateKey, "--fail-on-violations"}, nil)
	if code != 0 || !strings.Contains(stdout, "0 of 1 call violated the contract") {
		t.Errorf("exit %d after the mistaken URLs, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestReport_A404OfTheReportSaysToGiveTheServersBaseURL(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	_, stderr, code := runCLI(context.Background(), []string{"report", "--url", r.srv.URL + "/v1", "--api-key", gateKey}, nil)
	if code != 1 || !strings.Contains(stderr, "404 Not Found") ||
		!strings.Contains(stderr, "\n  no report at that URL: give --url the paymock server's base URL") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and what --url should be", code, stderr)
	}
}

func TestReport_AMalformedFaultHeaderIsNoViolation(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	r.call(gateKey, "POST", "/api/v1/payments", goodCreate, http.StatusCreated)
	// Refused with a 400 naming the header on every operation, retrieve's
	// too, and never carried out.
	for _, path := range []string{"/api/v1/payments", "/api/v1/payments/pay_missing"} {
		st, body := callWith(t, r.srv.URL, gateKey, "GET", path, "Paymock-Fault: status=418")
		var e struct {
			Error struct{ Param, Code string }
		}
		if json.Unmarshal(body, &e); st != http.StatusBadRequest || e.Error.Param != "Paymock-Fault" {
			t.Errorf("GET %s with Paymock-Fault: status=418 = %d %s, want 400 naming the header", path, st, body)
		}
	}
	stdout, stderr, code := runCLI(context.Background(), []string{"report", "--url", r.srv.URL, "--api-key", gateKey, "--fail-on-violations"}, nil)
	if code != 0 || !strings.Contains(stdout, "0 of 3 calls violated the contract") || !strings.Contains(stdout, "2 answers injected by faults asked for") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant a pass: a fault asked for, even badly, is no violation", code, stdout, stderr)
	}
	// The journal says what happened to them.
	st, body := callWith(t, r.srv.URL, gateKey, "GET", "/_sandbox/requests?per_page=3", "")
	var page struct {
		Items []struct {
			Path          string `json:"path"`
			InjectedFault string `json:"injected_fault"`
			InjectedBy    string `json:"injected_by"`
			Violations    []any  `json:"violations"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &page); st != http.StatusOK || err != nil || len(page.Items) != 3 {
		t.Fatalf("journal: %d %s", st, body)
	}
	for _, it := range page.Items[1:] {
		if it.InjectedFault != "header" || it.InjectedBy != `Paymock-Fault header: refused as malformed, nothing injected: "status=418"` || it.Violations != nil {
			t.Errorf("journal entry of %s = %+v, want the header's refusal, no violation", it.Path, it)
		}
	}
}

func TestReport_AResetFaultShowsAsReset(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	r.call(gateKey, "GET", "/api/v1/payments", "", http.StatusOK)
	if st, _ := callWith(t, r.srv.URL, gateKey, "GET", "/api/v1/payments", "Paymock-Fault: reset"); st != 0 {
		t.Fatalf("GET with Paymock-Fault: reset = %d, want the connection dropped", st)
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	stdout, stderr, code := runCLI(context.Background(),
		[]string{"report", "--url", r.srv.URL, "--api-key", gateKey, "--fail-on-violations", "--junit", junit}, nil)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, " 200 reset / 200 ") || strings.Contains(stdout, "0*") || strings.Contains(stdout, "does not declare") {
		t.Errorf("the reset is not shown as one:\n%s", stdout)
	}
	_, cases := junitCounts(t, junit)
	if got := strings.Join(cases["listPayments GET /api/v1/payments"], "\n"); !strings.Contains(got, "statuses seen: 200 reset") {
		t.Errorf("JUnit's listPayments case = %q, want the reset named", got)
	}
}
