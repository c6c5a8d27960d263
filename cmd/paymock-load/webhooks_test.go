// The webhook benchmark: verified deliveries timed, and the server's switches and page faults read.

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymock/paymock/sandbox"
	"github.com/paymock/paymock/webhooks"
)

func TestParseHooks_RefusesWhatCannotBeMeasured(t *testing.T) {
	for _, args := range [][]string{
		{"--url", "http://10.0.0.1:8080"},
		{"--url", "http://example.com"},
		{"--deliveries", "0"},
		{"--deliveries", "100001"},
		{"--warmup", "-1"},
		{"--timeout", "2m"},
	} {
		if _, err := parseHooks(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := parseHooks([]string{"--url", "http://127.0.0.1:1", "--deliveries", "5"}); err != nil {
		t.Errorf("a loopback target refused: %v", err)
	}
}

// TestRunHooks_TimesVerifiedDeliveriesOfARealServer completes payments
// of a real paymock one at a time and checks every one was timed, and
// that the server's collections and bytes are reported when its
// /metrics serves them.
func TestRunHooks_TimesVerifiedDeliveriesOfARealServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		metrics bool
	}{
		{"metrics served", true},
		{"no metrics", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.New(sandbox.Config{Metrics: tc.metrics})
			if err != nil {
				t.Fatal(err)
			}
			sb.Start()
			defer sb.Close(context.Background())
			ts := httptest.NewServer(sb.Handler())
			defer ts.Close()
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := run(ctx, []string{"webhooks", "--url", ts.URL, "--deliveries", "30", "--warmup", "3"}, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range []string{"30 deliveries", " p99 ", "collections during the run: 0"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
			// The server here is this process: it allocates for every
			// delivery, so a reading of its metrics cannot be 0 B.
			got := regexp.MustCompile(`paymock's collections during the run: \d+; paymock allocated ([1-9]\d*) B a delivery`).MatchString(out.String())
			if got != tc.metrics {
				t.Errorf("server's collections reported: %v, want %v:\n%s", got, tc.metrics, out.String())
			}
		})
	}
}

// TestHookReceiver_ReportsWhatDoesNotVerify checks the receiver times only
// deliveries that verify with the endpoint's secret and are of the
// payment completed.
func TestHookReceiver_ReportsWhatDoesNotVerify(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	other, err := webhooks.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		signWith string
		payment  string
		wantErr  string
	}{
		{"signed, of the payment", secret, "pay_1", ""},
		{"signed with another secret", other, "pay_1", "does not verify"},
		{"of another payment", secret, "pay_2", "another payment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hookReceiver{got: make(chan verified, 1)}
			h.wh.Store(wh)
			want := []byte(`"id":"pay_1"`)
			h.want.Store(&want)
			body := []byte(`{"id":"evt_1","type":"payment.completed","data":{"id":"` + tc.payment + `"}}`)
			now := time.Now()
			sig, err := webhooks.Sign(tc.signWith, "evt_1", now, body)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(body))
			req.Header.Set("webhook-id", "evt_1")
			req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
			req.Header.Set("webhook-signature", sig)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			v := <-h.got
			switch {
			case tc.wantErr == "" && (v.err != nil || w.Code != http.StatusNoContent):
				t.Errorf("got %d, %v; want 204 and no error", w.Code, v.err)
			case tc.wantErr != "" && (v.err == nil || !strings.Contains(v.err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", v.err, tc.wantErr)
			case v.at.IsZero():
				t.Error("no instant of verification")
			}
		})
	}
}

// TestProcessSwitches_CountsAProcessThreadsSleeping reads this process's
// switches around sleeps, each of which puts a thread to sleep and wakes
// it: the count must grow by at least one a sleep.
func TestProcessSwitches_CountsAProcessThreadsSleeping(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		want func(before, after int64) bool
	}{
		{"this process", os.Getpid(), func(before, after int64) bool { return before > 0 && after-before >= 5 }},
		{"no pid", 0, func(before, after int64) bool { return before == 0 && after == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := processSwitches(tc.pid)
			for range 5 {
				time.Sleep(2 * time.Millisecond)
			}
			if after := processSwitches(tc.pid); !tc.want(before, after) {
				t.Errorf("switches %d then %d", before, after)
			}
		})
	}
}

// TestProcessFaults_CountsFreshPagesTouched reads this process's page
// faults around touching memory mapped fresh from the kernel (not the
// heap's, which may reuse pages already touched): each page is a fault.
func TestProcessFaults_CountsFreshPagesTouched(t *testing.T) {
	const pages = 256
	b, err := syscall.Mmap(-1, 0, pages*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("no anonymous mapping here: %v", err)
	}
	defer syscall.Munmap(b)
	before := processFaults(os.Getpid())
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := processFaults(os.Getpid())
	if before <= 0 || after-before < pages/2 {
		t.Errorf("faults %d then %d after touching %d fresh pages", before, after, pages)
	}
	if n := processFaults(0); n != 0 {
		t.Errorf("no pid: %d faults", n)
	}
}

// TestReportHooks_GivesTheServersSwitchesWithItsPID reports the server's
// context switches per delivery when its pid was given, and not without.
func TestReportHooks_GivesTheServersSwitchesWithItsPID(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		want string // "" for no line at all
	}{
		{"with --server-pid", 42, "paymock's threads: 6.5 context switches a delivery; paymock's page faults: 3.5 a delivery\n"},
		{"without", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			lats := []time.Duration{time.Millisecond, 2 * time.Millisecond}
			err := reportHooks(&out, hooksReport{lats: lats, answers: slices.Clone(lats), elapsed: time.Second,
				serverPID: tc.pid, switches: 13, serverFaults: 7})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(out.String(), "context switches")
			if tc.want == "" && got || tc.want != "" && !strings.HasSuffix(out.String(), tc.want) {
				t.Errorf("report:\n%s\nwant it to end with %q", out.String(), tc.want)
			}
		})
	}
}
