// Tests of "paymock report": its table, gates, flags and failures.

package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reportTestKey = "sk_test_report"

// reportJSON is a canned report: 2 of 20 calls violated the contract,
// 2 of 3 operations and 4 of 13 statuses were exercised.
const reportJSON = `{
  "calls": 20, "violating_calls": 2, "unmatched_calls": 1, "injected_calls": 2,
  "coverage": {"operations": 0.6667, "operations_exercised": 2, "operations_total": 3,
               "statuses": 0.3077, "statuses_exercised": 4, "statuses_total": 13},
  "operations": [
    {"operation_id": "createPayment", "method": "POST", "path": "/api/v1/payments",
     "calls": 12, "violating_calls": 2,
     "statuses": [{"status": 201, "declared": true, "count": 10}, {"status": 400, "declared": true, "count": 2},
                  {"status": 401, "declared": true, "count": 0}, {"status": 403, "declared": true, "count": 0},
                  {"status": 413, "declared": true, "count": 0}, {"status": 415, "declared": true, "count": 0},
                  {"status": 500, "declared": true, "count": 0}],
     "violations": [{"param": "amount", "code": "parameter_invalid", "message": "amount must be a number", "count": 2}]},
    {"operation_id": "listPayments", "method": "GET", "path": "/api/v1/payments",
     "calls": 7, "violating_calls": 0,
     "statuses": [{"status": 200, "declared": true, "count": 6}, {"status": 400, "declared": true, "count": 1},
                  {"status": 401, "declared": true, "count": 0}, {"status": 429, "declared": false, "count": 0}],
     "violations": []},
    {"operation_id": "getPayment", "method": "GET", "path": "/api/v1/payments/{id}",
     "calls": 0, "violating_calls": 0,
     "statuses": [{"status": 200, "declared": true, "count": 0}, {"status": 404, "declared": true, "count": 0}],
     "violations": []}
  ]
}`

// cleanReportJSON is a report where every call kept to the contract and
// everything was exercised.
const cleanReportJSON = `{
  "calls": 3, "violating_calls": 0, "unmatched_calls": 0,
  "coverage": {"operations": 1, "operations_exercised": 1, "operations_total": 1,
               "statuses": 1, "statuses_exercised": 2, "statuses_total": 2},
  "operations": [
    {"operation_id": "listPayments", "method": "GET", "path": "/api/v1/payments", "calls": 3, "violating_calls": 0,
     "statuses": [{"status": 200, "declared": true, "count": 2}, {"status": 400, "declared": true, "count": 1}],
     "violations": []}
  ]
}`

const junitXML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="paymock contract" tests="1" failures="0"><testsuite name="listPayments" tests="1"><testcase name="GET /api/v1/payments"></testcase></testsuite></testsuites>
`

// fakeReportServer is not paymock: it stands in for a running paymock and
// serves body at /_sandbox/report and junitXML at ?format=junit, to
// requests that carry reportTestKey.
func fakeReportServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_sandbox/report" || r.Method != http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"type":"not_found_error","code":"route_missing","message":"no such route"}}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+reportTestKey {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="paymock"`)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"type":"authentication_error","code":"api_key_invalid","message":"the API key is not known to this sandbox"}}`)
			return
		}
		switch r.URL.Query().Get("format") {
		case "":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		case "junit":
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, junitXML)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"format must be json or junit"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runReport runs "paymock report args..." and returns stdout, the error
// and the exit code main would use.
func runReport(t *testing.T, args []string, env map[string]string) (stdout string, err error, code int) {
	t.Helper()
	var out strings.Builder
	err = run(context.Background(), append([]string{"report"}, args...), envOf(env), &out, io.Discard)
	return out.String(), err, exitCode(err, io.Discard)
}

func TestReport_ExitCodeFollowsTheGates(t *testing.T) {
	withViolations := fakeReportServer(t, reportJSON)
	clean := fakeReportServer(t, cleanReportJSON)
	tests := []struct {
		name     string
		srv      *httptest.Server
		args     []string
		wantCode int
		wantErr  []string // in the error (stderr) when the code is 1
		wantOut  []string // on stdout
	}{
		{
			name: "clean report with every gate passes", srv: clean,
			args:     []string{"--fail-on-violations", "--min-coverage", "1", "--min-status-coverage", "1.0"},
			wantCode: 0,
			wantOut:  []string{"gates passed: --min-calls 1, --fail-on-violations, --min-coverage 1, --min-status-coverage 1"},
		},
		{
			name: "violations without --fail-on-violations pass", srv: withViolations,
			wantCode: 0,
			wantOut:  []string{"2 of 20 calls violated the contract"},
		},
		{
			name: "violations with --fail-on-violations fail", srv: withViolations,
			args:     []string{"--fail-on-violations"},
			wantCode: 1,
			wantErr:  []string{"1 gate failed", "--fail-on-violations: 2 of 20 calls violated the contract"},
		},
		{
			name: "operations coverage under --min-coverage fails", srv: withViolations,
			args:     []string{"--min-coverage", "0.8"},
			wantCode: 1,
			wantErr:  []string{"--min-coverage 0.8: operations coverage is 66.7% (2/3), below 80.0%"},
		},
		{
			name: "operations coverage at --min-coverage passes", srv: withViolations,
			args:     []string{"--min-coverage", "0.6"},
			wantCode: 0,
			wantOut:  []string{"gates passed: --min-calls 1, --min-coverage 0.6"},
		},
		{
			name: "status coverage under --min-status-coverage fails", srv: withViolations,
			args:     []string{"--min-status-coverage", "0.5"},
			wantCode: 1,
			wantErr:  []string{"--min-status-coverage 0.5: status coverage is 30.8% (4/13), below 50.0%"},
		},
		{
			name: "every failed gate gets its own line", srv: withViolations,
			args:     []string{"--fail-on-violations", "--min-coverage", "0.9", "--min-status-coverage", "0.9"},
			wantCode: 1,
			wantErr: []string{"3 gates failed:\n  --fail-on-violations: 2 of 20",
				"\n  --min-coverage 0.9: operations coverage is 66.7% (2/3)",
				"\n  --min-status-coverage 0.9: status coverage is 30.8% (4/13)"},
		},
		{
			name: "the table is printed even when a gate fails", srv: withViolations,
			args:     []string{"--fail-on-violations"},
			wantCode: 1,
			wantOut:  []string{"OPERATION", "createPayment", "coverage: operations 2/3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--url", tt.srv.URL, "--api-key", reportTestKey}, tt.args...)
			out, err, code := runReport(t, args, nil)
			if code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d\nstdout:\n%s", code, err, tt.wantCode, out)
			}
			if tt.wantCode == 1 {
				var ge *gateError
				if !errors.As(err, &ge) {
					t.Errorf("error %v is not a gate failure", err)
				}
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not contain %q", err, w)
				}
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestReport_PrintsAlignedTableCoverageAndViolations(t *testing.T) {
	srv := fakeReportServer(t, reportJSON)
	out, err, _ := runReport(t, []string{"--url", srv.URL, "--api-key", reportTestKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `OPERATION     METHOD PATH                  CALLS VIOLATIONS STATUSES (seen/declared)
createPayment POST   /api/v1/payments      12    2          201 400 / 201 400 401 403 413 415 500
listPayments  GET    /api/v1/payments      7     0          200 400 / 200 400 401
getPayment    GET    /api/v1/payments/{id} 0     0          - / 200 404
coverage: operations 2/3 (66.7%), statuses 4/13 (30.8%); 2 of 20 calls violated the contract; 1 call matched no operation; 2 answers injected by faults asked for
violations:
  createPayment amount parameter_invalid: amount must be a number (2×)
  1 more call of no operation, not listed by path
gates passed: --min-calls 1
`
	if out != want {
		t.Errorf("stdout =\n%s\nwant\n%s", out, want)
	}
}

func TestReport_MarksStatusesTheContractDoesNotDeclare(t *testing.T) {
	srv := fakeReportServer(t, `{"calls": 1, "coverage": {}, "operations": [
	  {"operation_id": "getPayment", "method": "GET", "path": "/api/v1/payments/{id}", "calls": 1,
	   "statuses": [{"status": 200, "declared": true, "count": 0}, {"status": 502, "declared": false, "count": 1}]}]}`)
	out, err, _ := runReport(t, []string{"--url", srv.URL, "--api-key", reportTestKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"502* / 200\n", "* a status the contract does not declare"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout does not contain %q:\n%s", w, out)
		}
	}
}

func TestReport_ReadsURLAndKeyFromReportEnv(t *testing.T) {
	srv := fakeReportServer(t, cleanReportJSON)
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"both from env", nil, map[string]string{reportURLEnv: srv.URL, reportKeyEnv: reportTestKey}},
		{"flags win over env", []string{"--url", srv.URL + "/", "--api-key", reportTestKey},
			map[string]string{reportURLEnv: "http://" + closedPort(t), reportKeyEnv: "sk_wrong"}},
		{"the server's PAYMOCK_API_KEY is not the report's key", []string{"--url", srv.URL, "--api-key", reportTestKey},
			map[string]string{"PAYMOCK_API_KEY": "sk_other,sk_more", "PAYMOCK_URL": "http://" + closedPort(t)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err, code := runReport(t, tt.args, tt.env)
			if code != 0 {
				t.Fatalf("exit code = %d (%v), want 0", code, err)
			}
			if !strings.Contains(out, "coverage: operations 1/1 (100.0%)") {
				t.Errorf("stdout lacks the coverage line:\n%s", out)
			}
		})
	}
}

func TestReport_UsageErrorsExit2(t *testing.T) {
	url := "http://" + closedPort(t) // never reached: usage is checked first
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"missing url", []string{"--api-key", "sk_x"}, nil, []string{"--url (or PAYMOCK_REPORT_URL) is required"}},
		{"missing api key", []string{"--url", url}, nil, []string{"--api-key (or PAYMOCK_REPORT_API_KEY) is required"}},
		{"missing both, PAYMOCK_API_KEY not used", nil, map[string]string{"PAYMOCK_API_KEY": "sk_x"}, []string{"--url", "--api-key"}},
		{"url not http", []string{"--url", "ftp://h", "--api-key", "sk_x"}, nil, []string{"invalid --url", "http://"}},
		{"url from env names the env", nil, map[string]string{reportURLEnv: "localhost:8080", reportKeyEnv: "sk_x"}, []string{"invalid PAYMOCK_REPORT_URL"}},
		{"malformed key", []string{"--url", url, "--api-key", "sk x"}, nil, []string{"invalid --api-key", "bearer token"}},
		{"min coverage above 1", []string{"--url", url, "--api-key", "sk_x", "--min-coverage", "1.5"}, nil, []string{`--min-coverage: "1.5"`, "0 to 1"}},
		{"min coverage below 0", []string{"--url", url, "--api-key", "sk_x", "--min-coverage", "-0.1"}, nil, []string{`--min-coverage: "-0.1"`}},
		{"min coverage a percentage", []string{"--url", url, "--api-key", "sk_x", "--min-coverage", "80%"}, nil, []string{`--min-coverage: "80%"`}},
		{"min coverage NaN", []string{"--url", url, "--api-key", "sk_x", "--min-coverage", "NaN"}, nil, []string{`--min-coverage: "NaN"`}},
		{"min status coverage not a number", []string{"--url", url, "--api-key", "sk_x", "--min-status-coverage", "most"}, nil, []string{`--min-status-coverage: "most"`}},
		{"timeout not a duration", []string{"--url", url, "--api-key", "sk_x", "--timeout", "10"}, nil, []string{`--timeout: "10"`}},
		{"timeout zero", []string{"--url", url, "--api-key", "sk_x", "--timeout", "0s"}, nil, []string{`--timeout: "0s"`}},
		{"empty junit", []string{"--url", url, "--api-key", "sk_x", "--junit", ""}, nil, []string{"--junit"}},
		{"unknown flag", []string{"--url", url, "--api-key", "sk_x", "--addr", ":8080"}, nil, []string{"unknown flag --addr"}},
		{"min calls negative", []string{"--url", url, "--api-key", "sk_x", "--min-calls", "-1"}, nil, []string{`invalid --min-calls: "-1"`, "0 to turn the check off"}},
		{"min calls not a number", []string{"--url", url, "--api-key", "sk_x", "--min-calls", "some"}, nil, []string{`invalid --min-calls: "some"`}},
		{"fail on violations with a value that is not a bool", []string{"--url", url, "--api-key", "sk_x", "--fail-on-violations=yes"}, nil, []string{`invalid --fail-on-violations: "yes": want true or false`}},
		{"positional argument", []string{"--url", url, "--api-key", "sk_x", "extra"}, nil, []string{`unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err, code := runReport(t, tt.args, tt.env)
			wantUsageError(t, err, tt.want...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
		})
	}
}

func TestReport_NeverRepeatsTheKeyInErrors(t *testing.T) {
	_, err, _ := runReport(t, []string{"--url", "http://localhost:1", "--api-key", "sk_SECRET with space"}, nil)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error = %v, want one that does not contain the key", err)
	}
}

func TestReport_HelpPrintsItsOwnUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		out, err, code := runReport(t, args, nil)
		if err != nil || code != 0 {
			t.Fatalf("report %v = %v, want no error", args, err)
		}
		for _, w := range []string{"paymock report --url URL --api-key KEY", "--fail-on-violations", "--min-coverage",
			"--min-status-coverage", "--junit", "--timeout", reportURLEnv, reportKeyEnv} {
			if !strings.Contains(out, w) {
				t.Errorf("report %v help lacks %q:\n%s", args, w, out)
			}
		}
	}
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, envOf(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "paymock report --url URL --api-key KEY") {
		t.Errorf("paymock -h does not mention the report command:\n%s", out.String())
	}
}

func TestReport_FailsWhenServerCannotAnswer(t *testing.T) {
	srv := fakeReportServer(t, reportJSON)
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>hello</html>")
	}))
	defer notJSON.Close()
	bareError := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream is down", http.StatusBadGateway)
	}))
	defer bareError.Close()
	redirect := httptest.NewServer(http.RedirectHandler("http://example.com/", http.StatusFound))
	defer redirect.Close()
	closed := "http://" + closedPort(t)

	tests := []struct {
		name string
		url  string
		key  string
		want []string
	}{
		{"unreachable server", closed, reportTestKey, []string{"cannot reach paymock", closed + "/_sandbox/report"}},
		{"unknown key prints the server's message", srv.URL, "sk_test_unknown",
			[]string{"401 Unauthorized", "authentication_error/api_key_invalid: the API key is not known to this sandbox"}},
		{"wrong base path prints the server's message", srv.URL + "/paymock", reportTestKey,
			[]string{"404 Not Found", "no such route", "give --url the paymock server's base URL"}},
		{"error that is not paymock's shape", bareError.URL, reportTestKey, []string{"502 Bad Gateway", "upstream is down"}},
		{"answer that is not a report", notJSON.URL, reportTestKey, []string{"not a contract report"}},
		{"redirect is not followed", redirect.URL, reportTestKey, []string{"302 Found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err, code := runReport(t, []string{"--url", tt.url, "--api-key", tt.key, "--fail-on-violations"}, nil)
			if code != 1 {
				t.Fatalf("exit code = %d (err %v), want 1", code, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.key) {
				t.Errorf("error %q repeats the API key", err)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing when there is no report", out)
			}
		})
	}
}

func TestReport_TimeoutBoundsTheRequest(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	_, err, code := runReport(t, []string{"--url", slow.URL, "--api-key", reportTestKey, "--timeout", "100ms"}, nil)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Errorf("report = %v (exit %d), want exit 1 saying there was no answer within 100ms", err, code)
	}
}

func TestReport_JUnitWritesTheServedXML(t *testing.T) {
	srv := fakeReportServer(t, reportJSON)
	tests := []struct {
		name     string
		extra    []string
		wantCode int
	}{
		{"gates pass", nil, 0},
		{"written even when a gate fails", []string{"--fail-on-violations"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "junit.xml")
			args := append([]string{"--url", srv.URL, "--api-key", reportTestKey, "--junit", path}, tt.extra...)
			out, err, code := runReport(t, args, nil)
			if code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != junitXML {
				t.Errorf("junit file =\n%s\nwant what the server served:\n%s", got, junitXML)
			}
			if !strings.Contains(out, "junit: wrote "+path) {
				t.Errorf("stdout does not say where the JUnit file went:\n%s", out)
			}
		})
	}
}

// A --junit path that cannot be written is the command line's to fix:
// exit 2, as a usage error, not the 1 of a failed gate.
func TestReport_JUnitUnwritableFileExits2(t *testing.T) {
	srv := fakeReportServer(t, cleanReportJSON)
	path := filepath.Join(t.TempDir(), "no-such-dir", "junit.xml")
	_, err, code := runReport(t, []string{"--url", srv.URL, "--api-key", reportTestKey, "--junit", path}, nil)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "writing the JUnit report") {
		t.Errorf("report = %v (exit %d), want exit 2 about the JUnit file", err, code)
	}
}

// apiCall sends one request as key to a running paymock and returns the status.
func apiCall(t *testing.T, addr, key, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestReport_GatesARealServersContractReport(t *testing.T) {
	const (
		key   = "sk_test_client_under_test"
		other = "sk_test_someone_else"
	)
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--api-key", key, "--api-key", other}, nil, hooks{})
	base := "http://" + r.addr

	const create = `{"amount": %s, "currency": "USD", "customer": {"email": "jane@example.com", "name": "Jane Doe"},
	  "description": "Order 1234", "expires_in": 3600, "mcc": 5732, "metadata": {"order_id": "ord_1234"},
	  "success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel"}`
	calls := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/api/v1/payments", strings.Replace(create, "%s", "10.5", 1), http.StatusCreated},
		{"POST", "/api/v1/payments", strings.Replace(create, "%s", `"10.50"`, 1), http.StatusBadRequest}, // amount must be a number
		{"GET", "/api/v1/payments", "", http.StatusOK},
	}
	for _, c := range calls {
		if got := apiCall(t, r.addr, key, c.method, c.path, c.body); got != c.want {
			t.Fatalf("%s %s = %d, want %d", c.method, c.path, got, c.want)
		}
	}

	junitPath := filepath.Join(t.TempDir(), "paymock-junit.xml")
	tests := []struct {
		name     string
		key      string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{
			name: "no gate: the report is printed and passes", key: key,
			wantCode: 0,
			wantOut: []string{"createPayment", "listPayments", "retrievePayment",
				"coverage: operations 2/3 (66.7%)", "1 of 3 calls violated the contract",
				"violations:\n  createPayment amount "},
		},
		{
			name: "--junit writes the JUnit report", key: key,
			args:     []string{"--junit", junitPath},
			wantCode: 0,
			wantOut:  []string{"junit: wrote " + junitPath},
		},
		{
			name: "the violating create fails --fail-on-violations", key: key,
			args:     []string{"--fail-on-violations"},
			wantCode: 1,
			wantErr:  []string{"--fail-on-violations: 1 of 3 calls violated the contract"},
		},
		{
			name: "the unexercised retrieve fails --min-coverage 1.0", key: key,
			args:     []string{"--min-coverage", "1.0"},
			wantCode: 1,
			wantErr:  []string{"--min-coverage 1: operations coverage is 66.7% (2/3), below 100.0%"},
		},
		{
			name: "two of three operations pass --min-coverage 0.6", key: key,
			args:     []string{"--min-coverage", "0.6"},
			wantCode: 0,
			wantOut:  []string{"gates passed: --min-calls 1, --min-coverage 0.6"},
		},
		{
			name: "another merchant's report has none of these calls: --min-calls fails", key: other,
			args:     []string{"--fail-on-violations"},
			wantCode: 1,
			wantOut:  []string{"coverage: operations 0/3 (0.0%)", "0 of 0 calls violated the contract"},
			wantErr:  []string{"--min-calls 1: the report counts 0 calls", "not judged without the calls: --fail-on-violations"},
		},
		{
			name: "an unknown key gets the server's 401 message", key: "sk_test_unknown",
			wantCode: 1,
			wantErr:  []string{"401 Unauthorized", "authentication_error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--url", base, "--api-key", tt.key}, tt.args...)
			out, err, code := runReport(t, args, nil)
			if code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d\nstdout:\n%s", code, err, tt.wantCode, out)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not contain %q", err, w)
				}
			}
		})
	}

	// The JUnit file written by the --junit case is XML a CI system can read:
	// one test case per operation, the violating create failed.
	doc := readJUnit(t, junitPath)
	failed := map[string]int{}
	cases := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			op, _, _ := strings.Cut(c.Name, " ")
			failed[op] += len(c.Failures)
		}
	}
	if cases != 3 || failed["createPayment"] == 0 || failed["listPayments"] != 0 {
		t.Errorf("JUnit has %d test cases with failures %v, want 3 with a failure for createPayment only", cases, failed)
	}
}
