// Tests of "paymock verify" and "paymock proxy": formats, exit codes,
// usage errors, the gate on a proxy's report, and the replay.

package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/driftedtest"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/verify"
)

func TestVerify_APaymockPassesInEveryFormat(t *testing.T) {
	// Configured keys, as a deployment has: open mode would take verify's
	// unknown key as a merchant of its own.
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--api-key", "sk_test_verify", "--api-key", "sk_test_verify_json", "--api-key", "sk_test_verify_junit"}, nil, hooks{})
	base := "http://" + r.addr
	out, errOut, code := runCLI(context.Background(), []string{"verify", "--base-url", base, "--api-key", "sk_test_verify"}, nil)
	if code != 0 {
		t.Fatalf("exit %d against a paymock:\n%s\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "paymock verify vfy_") || !strings.Contains(errOut, "creates at most 10 payments") {
		t.Errorf("stderr does not say first what the run creates: %q", errOut)
	}
	// Said first on stderr, the notice is not said again by a text
	// report on stdout: a terminal shows both.
	if n := strings.Count(out+errOut, "creates at most 10 payments"); n != 1 {
		t.Errorf("the notice is printed %d times, want once:\n%s\n%s", n, errOut, out)
	}
	// A text report written to a file is read without stderr: it keeps
	// the notice.
	textFile := filepath.Join(t.TempDir(), "verify.txt")
	if _, _, code := runCLI(context.Background(), []string{"verify", "--base-url", base, "--api-key", "sk_test_verify", "--out", textFile}, nil); code != 0 {
		t.Errorf("--out: exit %d", code)
	}
	if data, err := os.ReadFile(textFile); err != nil || !strings.HasPrefix(string(data), "paymock verify vfy_") {
		t.Errorf("the text report in a file lacks the notice: %v\n%s", err, data)
	}
	for _, want := range []string{"contract violations: 0", "drift: 0", "closest paymock: --variants default", "webhooks: skipped: no --listen"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}

	js, _, code := runCLI(context.Background(), []string{"verify", "--base-url", base, "--api-key", "sk_test_verify_json", "--format", "json"}, nil)
	var rep verify.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 0 || len(rep.Checks) == 0 {
		t.Errorf("json: exit %d, %v:\n%s", code, err, js)
	}

	file := filepath.Join(t.TempDir(), "verify.xml")
	_, _, code = runCLI(context.Background(), []string{"verify", "--base-url", base, "--api-key", "sk_test_verify_junit", "--format", "junit", "--out", file}, nil)
	data, err := os.ReadFile(file)
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err != nil || code != 0 || xml.Unmarshal(data, &suites) != nil || suites.Tests == 0 || suites.Failures != 0 {
		t.Errorf("junit: exit %d, %v, %+v:\n%s", code, err, suites, data)
	}
}

func TestVerify_FindingsExit1AndProblemsNameTheHost(t *testing.T) {
	// A deployment that has drifted: amounts as strings.
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--api-key", "sk_test_verify", "--variants", "amount=string"}, nil, hooks{})
	out, errOut, code := runCLI(context.Background(), []string{"verify", "--base-url", "http://" + r.addr, "--api-key", "sk_test_verify"}, nil)
	if code != 1 || !strings.Contains(out, "amount.form") || !strings.Contains(out, "closest paymock: --variants amount=string") ||
		!strings.Contains(errOut, "verify: 0 contract violations, 1 drifting point") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}

	drifted := driftedtest.New(t)
	out, errOut, code = runCLI(context.Background(), []string{"verify", "--base-url", drifted.URL, "--api-key", driftedtest.Key, "--format", "junit"}, nil)
	var suites struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil || code != 1 || len(suites.Suites) != 2 ||
		suites.Suites[0].Failures == 0 || suites.Suites[1].Failures == 0 {
		t.Errorf("a drifted deployment: exit %d, %v, %+v\n%s", code, err, suites, errOut)
	}

	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html></html>"))
	}))
	defer html.Close()
	host := strings.TrimPrefix(html.URL, "http://")
	out, errOut, code = runCLI(context.Background(), []string{"verify", "--base-url", html.URL}, map[string]string{verifyKeyEnv: "sk_never_printed"})
	if code != 1 || !strings.Contains(errOut, "a check got no usable answer: "+host+" answered GET /api/v1/payments with 200 and text/html") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "sk_never_printed") {
		t.Error("the key was printed")
	}
}

func TestVerify_UsageErrorsExit2(t *testing.T) {
	// A --replay folder that cannot be read, or holds no recording, is
	// the command line's to fix, not a recording that broke the contract
	// (1).
	tmp := t.TempDir()
	file := writeFile(t, "a.exchange.json", "{}")
	empty := t.TempDir()
	unreadable := filepath.Join(tmp, "unreadable")
	if err := os.MkdirAll(filepath.Join(unreadable, "00000001-x.exchange.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify"}, "--base-url (or PAYMOCK_VERIFY_BASE_URL) is required"},
		{[]string{"verify", "--base-url", "http://x", "--api-key", "k", "--format", "xml"}, `invalid --format: "xml"`},
		{[]string{"verify", "--base-url", "http://x", "--api-key", "k", "--listen", ":0"}, "--listen needs --webhook-secret"},
		{[]string{"verify", "--base-url", "http://x", "--api-key", "k", "--listen", ":0", "--webhook-secret", "nope"}, "invalid --webhook-secret: want a whsec_ secret"},
		{[]string{"verify", "--base-url", "http://x", "--api-key", "k", "--max-creates", "0"}, "invalid --max-creates"},
		{[]string{"verify", "--replay", "d", "--base-url", "http://x"}, "--base-url has no use with --replay"},
		{[]string{"verify", "--replay", "d", "--api-key", "bad key!"}, "invalid --api-key: not a valid bearer token"},
		{[]string{"verify", "--replay", filepath.Join(tmp, "missing")}, "--replay: stat " + filepath.Join(tmp, "missing") + ": no such file or directory"},
		{[]string{"verify", "--replay", file}, "--replay " + file + ": not a folder"},
		{[]string{"verify", "--replay", unreadable}, "00000001-x.exchange.json: is a directory"},
		{[]string{"verify", "--replay", empty}, "holds no recorded exchange"},
		{[]string{"verify", "--base-url", "http://x", "--api-key", "bad key!"}, "invalid --api-key: not a valid bearer token"},
		{[]string{"proxy"}, "--upstream (or PAYMOCK_PROXY_UPSTREAM) is required"},
		{[]string{"proxy", "--upstream", "ftp://x"}, "want an absolute http(s) URL"},
	} {
		_, errOut, code := runCLI(cancelled(), tc.args, nil)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, `Run "paymock `+tc.args[0]+` -h" for usage.`) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
		if strings.Contains(errOut, "bad key!") || strings.Contains(errOut, "nope") {
			t.Errorf("%q: a secret was repeated: %q", tc.args, errOut)
		}
	}
}

func TestVerifyAndProxy_HelpIsTheirOwn(t *testing.T) {
	for _, cmd := range []string{"verify", "proxy"} {
		out, _, code := runCLI(context.Background(), []string{cmd, "-h"}, nil)
		if code != 0 || !strings.HasPrefix(out, "paymock "+cmd) {
			t.Errorf("%s -h: exit %d:\n%s", cmd, code, out)
		}
	}
	out, _, _ := runCLI(context.Background(), []string{"-h"}, nil)
	for _, want := range []string{"paymock verify [flags]", "paymock proxy [flags]"} {
		if !strings.Contains(out, want) {
			t.Errorf("paymock -h lacks %q", want)
		}
	}
}

// violatingUpstream answers every list with a field the contract does
// not declare.
func violatingUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[],"pagination":{"page":1,"per_page":10,"total_pages":0,"total_items":0},"has_more":false}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProxy_TheGateFailsOnUpstreamViolationsAndTheReplayAgrees(t *testing.T) {
	const key = "sk_test_proxy_client"
	dir := filepath.Join(t.TempDir(), "exchanges")

	// Through the proxy to a paymock: a clean session passes the gate.
	pm := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
	clean := startRun(t, []string{"proxy", "--addr", "127.0.0.1:0", "--upstream", "http://" + pm.addr}, nil, hooks{})
	if st := apiCall(t, clean.addr, key, "GET", "/api/v1/payments", ""); st != 200 {
		t.Fatalf("list through the proxy: %d", st)
	}
	out, errOut, code := runCLI(context.Background(), []string{"report", "--url", "http://" + clean.addr, "--api-key", key, "--fail-on-violations"}, nil)
	if code != 0 {
		t.Errorf("gate on a clean session: exit %d\n%s\n%s", code, out, errOut)
	}

	// To an upstream that breaks the contract: the gate fails, and the
	// report names the side.
	up := violatingUpstream(t)
	px := startRun(t, []string{"proxy", "--addr", "127.0.0.1:0", "--upstream", up.URL, "--record", dir}, nil, hooks{})
	for range 2 {
		if st := apiCall(t, px.addr, key, "GET", "/api/v1/payments", ""); st != 200 {
			t.Fatalf("list through the proxy: %d", st)
		}
	}
	// A call without a key is filed under no key by the proxy: its
	// report of the key leaves it out, and so must the replay of the key.
	if st := apiCall(t, px.addr, "", "GET", "/api/v1/payments", ""); st != 200 {
		t.Fatalf("keyless list through the proxy: %d", st)
	}
	junit := filepath.Join(t.TempDir(), "contract.xml")
	out, errOut, code = runCLI(context.Background(), []string{"report", "--url", "http://" + px.addr, "--api-key", key, "--fail-on-violations", "--junit", junit}, nil)
	if code != 1 || !strings.Contains(out, "listPayments [upstream] has_more parameter_unknown") || !strings.Contains(errOut, "--fail-on-violations: 2 of 2 calls violated the contract") {
		t.Errorf("gate on upstream violations: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, err := os.ReadFile(junit); err != nil || !strings.Contains(string(data), `<failure message="upstream has_more: parameter_unknown" type="parameter_unknown">`) {
		t.Errorf("the JUnit report of the proxy: %v\n%s", err, data)
	}

	// The recording, checked offline, gives the proxy's report.
	req, _ := http.NewRequest("GET", "http://"+px.addr+"/_sandbox/report", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var want mockserver.Report
	json.NewDecoder(resp.Body).Decode(&want)
	resp.Body.Close()
	js, errOut, code := runCLI(context.Background(), []string{"verify", "--replay", dir, "--api-key", key, "--format", "json"}, nil)
	var got mockserver.Report
	if err := json.Unmarshal([]byte(js), &got); err != nil || code != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("replay: exit %d (%v), %s\nwant %+v\ngot  %+v", code, err, errOut, want, got)
	}
	text, _, _ := runCLI(context.Background(), []string{"verify", "--replay", dir, "--api-key", key}, nil)
	if !strings.HasPrefix(text, "replayed 2 of 3 recorded exchanges from "+dir+", those of the --api-key given") ||
		!strings.Contains(text, "2 of 2 calls violated") || !strings.Contains(text, "[upstream] has_more") {
		t.Errorf("replay text:\n%s", text)
	}
	// Without --api-key every exchange is replayed, the keyless one too.
	text, _, _ = runCLI(context.Background(), []string{"verify", "--replay", dir}, nil)
	if !strings.HasPrefix(text, "replayed 3 recorded exchanges from "+dir+", of every key and of none") {
		t.Errorf("replay text of every key:\n%s", text)
	}
}
