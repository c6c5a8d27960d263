// The report gate against real sandboxes: it never passes without having
// seen the calls it judges.

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/sandbox"
)

// gateKey is the merchant key of the gate tests' configured sandboxes.
const gateKey = "sk_test_gate"

// restartable is one URL in front of a sandbox that can be replaced by a
// fresh one, as when the server is restarted between a CI job's tests and
// its gate.
type restartable struct {
	t   *testing.T
	cfg sandbox.Config
	cur atomic.Pointer[sandbox.Sandbox]
	srv *httptest.Server
}

// newGateServer serves a real sandbox built from cfg over loopback.
func newGateServer(t *testing.T, cfg sandbox.Config) *restartable {
	t.Helper()
	r := &restartable{t: t, cfg: cfg}
	r.restart()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.cur.Load().Handler().ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// restart replaces the sandbox with a new one built from the same config:
// everything it held is gone, the URL stays.
func (r *restartable) restart() {
	r.t.Helper()
	sb, err := sandbox.New(r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	sb.Start()
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyNet)
		defer cancel()
		sb.Close(ctx)
	})
	r.cur.Store(sb)
}

// call sends one service API call as key and checks its status.
func (r *restartable) call(key, method, path, body string, want int) {
	r.t.Helper()
	if got := apiCall(r.t, strings.TrimPrefix(r.srv.URL, "http://"), key, method, path, body); got != want {
		r.t.Fatalf("%s %s = %d, want %d", method, path, got, want)
	}
}

// goodCreate is a create request the contract accepts.
const goodCreate = `{"amount": 10.5, "currency": "USD", "customer": {"email": "jane@example.com", "name": "Jane Doe"},
  "description": "Order 1234", "expires_in": 3600, "mcc": 5732, "metadata": {"order_id": "ord_1234"},
  "success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel"}`

// violatingCreate breaks the contract: amount is a string.
var violatingCreate = strings.Replace(goodCreate, "10.5", `"10.50"`, 1)

// configured is a sandbox with the one merchant of gateKey.
func configured(journalSize int) sandbox.Config {
	return sandbox.Config{
		Merchants:   []paymock.Merchant{apiKeyMerchant(1, gateKey)},
		JournalSize: journalSize,
	}
}

func TestReport_GateNeverPassesWithoutTheCalls(t *testing.T) {
	everyGate := []string{"--fail-on-violations", "--min-coverage", "0", "--min-status-coverage", "0"}
	tests := []struct {
		name    string
		cfg     sandbox.Config
		before  func(r *restartable) // the CI job's tests, and what happens after them
		key     string
		args    []string
		wantErr []string
	}{
		{
			name: "journal off: the violating call cannot be seen, whatever the gates",
			cfg:  configured(0),
			before: func(r *restartable) {
				r.call(gateKey, "POST", "/api/v1/payments", violatingCreate, http.StatusBadRequest)
			},
			key: gateKey, args: everyGate,
			wantErr: []string{"409 Conflict: conflict_error/journal_disabled: no report: this server keeps no request journal (--journal-size 0)",
				"no gate can pass without a report: start the server with a journal"},
		},
		{
			name: "journal off, even with --min-calls 0",
			cfg:  configured(0),
			key:  gateKey, args: append([]string{"--min-calls", "0"}, everyGate...),
			wantErr: []string{"journal_disabled", "no gate can pass without a report"},
		},
		{
			name:    "journal off, no gate asked for",
			cfg:     configured(0),
			key:     gateKey,
			wantErr: []string{"journal_disabled", "no gate can pass without a report"},
		},
		{
			name: "a merchant with no calls at all",
			cfg:  configured(sandbox.DefaultJournalSize),
			key:  gateKey, args: everyGate,
			wantErr: []string{"--min-calls 1: the report counts 0 calls of the service API, fewer than 1", "the tests made no calls to this server",
				"not judged without the calls: --fail-on-violations, --min-coverage 0, --min-status-coverage 0"},
		},
		{
			name: "a key the configured server does not know",
			cfg:  configured(sandbox.DefaultJournalSize),
			before: func(r *restartable) {
				r.call(gateKey, "POST", "/api/v1/payments", violatingCreate, http.StatusBadRequest)
			},
			key: "sk_test_wrong", args: everyGate,
			wantErr: []string{"401 Unauthorized: authentication_error/", "the server does not know the key of --api-key: give it the key your tests used"},
		},
		{
			name: "another key in open mode is another merchant, with no calls",
			cfg:  sandbox.Config{JournalSize: sandbox.DefaultJournalSize},
			before: func(r *restartable) {
				r.call("sk_test_the_tests_key", "POST", "/api/v1/payments", violatingCreate, http.StatusBadRequest)
			},
			key: "sk_test_another_key", args: everyGate,
			wantErr: []string{"--min-calls 1: the report counts 0 calls", "they used another API key than --api-key"},
		},
		{
			name: "the server restarted between the tests and the gate",
			cfg:  configured(sandbox.DefaultJournalSize),
			before: func(r *restartable) {
				r.call(gateKey, "POST", "/api/v1/payments", violatingCreate, http.StatusBadRequest)
				r.restart()
			},
			key: gateKey, args: everyGate,
			wantErr: []string{"--min-calls 1: the report counts 0 calls", "the server was restarted between the tests and this gate"},
		},
		{
			name: "fewer calls than --min-calls",
			cfg:  configured(sandbox.DefaultJournalSize),
			before: func(r *restartable) {
				r.call(gateKey, "POST", "/api/v1/payments", goodCreate, http.StatusCreated)
				r.call(gateKey, "GET", "/api/v1/payments", "", http.StatusOK)
			},
			key: gateKey, args: append([]string{"--min-calls", "3"}, everyGate...),
			wantErr: []string{"--min-calls 3: the report counts 2 calls of the service API, fewer than 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newGateServer(t, tt.cfg)
			if tt.before != nil {
				tt.before(r)
			}
			args := append([]string{"report", "--url", r.srv.URL, "--api-key", tt.key}, tt.args...)
			stdout, stderr, code := runCLI(context.Background(), args, nil)
			if code != 1 {
				t.Fatalf("exit code = %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if strings.Contains(stdout, "gates passed") {
				t.Errorf("stdout says gates passed without the calls:\n%s", stdout)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, tt.key) {
				t.Errorf("stderr repeats the API key:\n%s", stderr)
			}
		})
	}
}

func TestReport_GatePassesOnceItHasSeenTheCalls(t *testing.T) {
	tests := []struct {
		name    string
		calls   int
		args    []string
		wantOut string
	}{
		{"the default --min-calls 1", 1, []string{"--fail-on-violations"}, "gates passed: --min-calls 1, --fail-on-violations\n"},
		{"exactly --min-calls", 2, []string{"--min-calls", "2"}, "gates passed: --min-calls 2\n"},
		{"--min-calls 0 turns the check off", 0, []string{"--min-calls", "0", "--fail-on-violations"}, "gates passed: --fail-on-violations\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newGateServer(t, configured(sandbox.DefaultJournalSize))
			for range tt.calls {
				r.call(gateKey, "GET", "/api/v1/payments", "", http.StatusOK)
			}
			args := append([]string{"report", "--url", r.srv.URL, "--api-key", gateKey}, tt.args...)
			stdout, stderr, code := runCLI(context.Background(), args, nil)
			if code != 0 {
				t.Fatalf("exit code = %d, want 0\nstderr:\n%s", code, stderr)
			}
			if !strings.HasSuffix(stdout, tt.wantOut) {
				t.Errorf("stdout does not end with %q:\n%s", tt.wantOut, stdout)
			}
		})
	}
}

func TestReport_MinCallsFailureReadsAsWritten(t *testing.T) {
	r := newGateServer(t, configured(sandbox.DefaultJournalSize))
	_, stderr, code := runCLI(context.Background(), []string{"report", "--url", r.srv.URL, "--api-key", gateKey, "--fail-on-violations"}, nil)
	want := `paymock: report: 1 gate failed:
  --min-calls 1: the report counts 0 calls of the service API, fewer than 1, so it cannot vouch for the calls of your tests. Likely causes:
    - the tests made no calls to this server (check the URL they were given);
    - they used another API key than --api-key (in open mode every key is a merchant of its own, with its own report);
    - the server was restarted between the tests and this gate (the report is kept in memory), or the merchant was forgotten after --merchant-idle-ttl without requests.
  not judged without the calls: --fail-on-violations
`
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr =\n%s\nwant exit 1 and\n%s", code, stderr, want)
	}
}
