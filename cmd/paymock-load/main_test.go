// The load benchmark's flags, its run against a real server and the bare baseline.

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/sandbox"
)

func TestParse_RefusesTargetsOffThisMachine(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "http://192.168.1.2", "not a url"} {
		if _, err := parse([]string{"--url", u}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:8080", "http://127.3.4.5"} {
		if _, err := parse([]string{"--url", u}); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, args := range [][]string{{"--clients", "0"}, {"--duration", "10m"}, {"--max-requests", "0"}} {
		if _, err := parse(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestRun_DrivesARealServer runs a short, bounded load against a real
// paymock and checks every request got the answer it should.
func TestRun_DrivesARealServer(t *testing.T) {
	ts := startSandbox(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, []string{"--url", ts.URL, "--clients", "3", "--max-requests", "120", "--duration", "1m"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"120 requests", "create", "list", "retrieve"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// startSandbox serves a real paymock on loopback for the test.
func startSandbox(t *testing.T) *httptest.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sb.Start()
	t.Cleanup(func() { _ = sb.Close(context.Background()) })
	ts := httptest.NewServer(sb.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestMain is also the baseline process of the comparison, which starts
// it by running this program again (startBare): in a test, the program
// is the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bareCommand {
		if err := serveBare(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "paymock-load:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun_ComparesWithABareBaseline runs the comparison for a second, the
// baseline in a process of its own and in this one, and checks it reports
// both targets and a ratio for create and retrieve.
func TestRun_ComparesWithABareBaseline(t *testing.T) {
	ts := startSandbox(t)
	for _, extra := range [][]string{nil, {"--bare-in-process"}} {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args := append([]string{"--url", ts.URL, "--compare", "--clients", "2", "--duration", "1s", "--max-requests", "5000"}, extra...)
		if err := run(ctx, args, &out); err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, out.String())
		}
		for _, line := range []string{"create", "retrieve"} {
			var found bool
			for _, l := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(l); len(f) == 8 && f[0] == line && strings.HasSuffix(f[7], "x") {
					found = true
				}
			}
			if !found {
				t.Errorf("%v: no %s row with a ratio:\n%s", extra, line, out.String())
			}
		}
	}
}

func TestStartBare_AnswersTheCapturedBytesFromAnotherProcessUntilStopped(t *testing.T) {
	create := canned{status: 201, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":"pay_1"}`)}
	retrieve := canned{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":"pay_2"}`)}
	addr, stop, err := startBare(create, retrieve)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/api/v1/payments/pay_2")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != `{"id":"pay_2"}` {
		t.Errorf("retrieve from the baseline process: %d %s", resp.StatusCode, b)
	}
	stop()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the baseline process still serves after stop")
	}
}

func TestBareHandler_AnswersTheCapturedBytes(t *testing.T) {
	create := canned{status: 201, header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_1"}}, body: []byte(`{"id":"pay_1"}`)}
	retrieve := canned{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":"pay_2"}`)}
	ts := httptest.NewServer(bareHandler(create, retrieve))
	defer ts.Close()
	for _, tc := range []struct {
		method, path string
		want         canned
	}{{"POST", "/api/v1/payments", create}, {"GET", "/api/v1/payments/pay_2", retrieve}} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(createBody))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want.status || string(b) != string(tc.want.body) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, b)
		}
	}
}

func TestParseStart_RefusesIncompleteCommands(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--cmd", "./paymock --addr {addr}"},
		{"--cmd", "./paymock", "--baseline", "./bare --addr {addr}"},
		{"--cmd", "./paymock --addr {addr}", "--baseline", "./bare --addr {addr}", "--runs", "0"},
	} {
		if _, err := parseStart(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := parse([]string{"--only", "list"}); err == nil {
		t.Error("--only list accepted")
	}
}

func TestServeBareFrom_AnswersWhatPaymockAnsweredAndNamesThePayment(t *testing.T) {
	ts := startSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveBareFrom(ctx, ts.URL, pw); pw.Close() }()
	var addr, id string
	if _, err := fmt.Fscanln(pr, &addr, &id); err != nil {
		cancel()
		t.Fatalf("no address and payment id: %v (%v)", err, <-done)
	}
	get := func(base string) (int, string) {
		req, _ := http.NewRequest("GET", base+"/api/v1/payments/"+id, nil)
		req.Header.Set("Authorization", "Bearer sk_test_load")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ps, pb := get(ts.URL)
	bs, bb := get("http://" + addr)
	if ps != 200 || bs != 200 || pb != bb {
		t.Errorf("paymock %d %s\nbaseline %d %s", ps, pb, bs, bb)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
