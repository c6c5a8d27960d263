// Tests of the checking transport, over both readings of the contract.

package contracttest_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/contracttest"
)

// The transport checks with the server's own reading of the contract.
var _ contracttest.Checker = (*contract.Documents)(nil)

// reports stands in for a test's testing.TB and keeps what the transport
// reports; anything else goes to the real test.
type reports struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *reports) Helper() {}

func (r *reports) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, format)
}

// answer is what the stand-in server answers.
type answer struct {
	status int
	body   string
}

const notFound = `{"error":{"type":"not_found_error","code":"resource_missing","message":"No such payment."}}`

func TestTransport_ReportsEveryAnswerTheContractDoesNotDeclare(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	checkers := []struct {
		name    string
		answers contracttest.Checker
	}{
		{"the contract package's reading", docs},
		{"the independent reading", contracttest.Independent(t, "../..")},
	}
	cases := []struct {
		name         string
		method, path string
		sent         string
		answer       answer
		expected     func(status int, body []byte) bool
		// want is the start of each report's format, in order; none: the
		// answer passes.
		want []string
	}{
		{name: "a declared error passes", method: "GET", path: "/api/v1/payments/pay_000000000000000000000000",
			answer: answer{404, notFound}},
		{name: "an undeclared body is reported", method: "GET", path: "/api/v1/payments/pay_000000000000000000000000",
			answer: answer{404, `{"oops":true}`}, want: []string{"%s %s: answer %d breaks the contract"}},
		{name: "a declared 5xx the test did not ask for is reported", method: "GET", path: "/api/v1/payments",
			answer: answer{503, `{"error":{"type":"api_error","code":"injected_fault","message":"unavailable"}}`},
			want:   []string{"%s %s answered %d"}},
		{name: "a 5xx the test asked for passes", method: "GET", path: "/api/v1/payments",
			answer: answer{503, `{"error":{"type":"api_error","code":"injected_fault","message":"unavailable"}}`},
			expected: func(status int, body []byte) bool {
				return status == 503 && bytes.Contains(body, []byte("injected_fault"))
			}},
		{name: "an undeclared 5xx is reported twice", method: "GET", path: "/api/v1/payments",
			answer: answer{500, `panic`}, expected: func(int, []byte) bool { return false },
			want: []string{"%s %s answered %d", "%s %s: answer %d breaks the contract"}},
		{name: "an unknown route's answer must be an error object", method: "GET", path: "/api/v1/nothing",
			answer: answer{404, `404 page not found`}, want: []string{"%s %s: answer %d breaks the contract"}},
		{name: "a control API answer is checked", method: "GET", path: "/_sandbox/clock",
			answer: answer{200, `{"now":"soon"}`}, want: []string{"%s %s: answer %d breaks the contract"}},
		{name: "a refused create passes with its body sent on", method: "POST", path: "/api/v1/payments", sent: `{"amount":1}`,
			answer: answer{400, `{"error":{"type":"invalid_request_error","code":"parameter_missing","message":"currency is required","param":"currency"}}`}},
		{name: "a path outside the contract passes", method: "GET", path: "/healthz", answer: answer{200, "ok"}},
	}
	for _, ck := range checkers {
		for _, tc := range cases {
			t.Run(ck.name+"/"+tc.name, func(t *testing.T) {
				var got []byte
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got, _ = io.ReadAll(r.Body)
					w.Header().Set("Content-Type", "application/json")
					if tc.path == "/healthz" || !strings.HasPrefix(tc.answer.body, "{") {
						w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					}
					w.WriteHeader(tc.answer.status)
					_, _ = io.WriteString(w, tc.answer.body)
				}))
				t.Cleanup(srv.Close)
				rec := &reports{TB: t}
				client := &http.Client{Transport: &contracttest.Transport{T: rec, Answers: ck.answers, Expected: tc.expected}}
				var body io.Reader
				if tc.sent != "" {
					body = strings.NewReader(tc.sent)
				}
				req, err := http.NewRequest(tc.method, srv.URL+tc.path, body)
				if err != nil {
					t.Fatal(err)
				}
				if tc.sent != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				read, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tc.answer.status || string(read) != tc.answer.body {
					t.Errorf("the client got %d %q, want the server's %d %q", resp.StatusCode, read, tc.answer.status, tc.answer.body)
				}
				if string(got) != tc.sent {
					t.Errorf("the server got %q, want the %q sent", got, tc.sent)
				}
				ok := len(rec.errs) == len(tc.want)
				for i := 0; ok && i < len(tc.want); i++ {
					ok = strings.HasPrefix(rec.errs[i], tc.want[i])
				}
				if !ok {
					t.Errorf("reported %q, want reports starting %q", rec.errs, tc.want)
				}
			})
		}
	}
}

func TestIndependent_AContractThatDoesNotLoadFailsTheTest(t *testing.T) {
	rec := &fatals{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		contracttest.Independent(rec, t.TempDir())
	}()
	<-done
	if !rec.failed {
		t.Error("a folder with no contract loaded without failing the test")
	}
}

// fatals stands in for a test's testing.TB and keeps whether it was
// stopped by Fatal.
type fatals struct {
	testing.TB
	failed bool
}

func (f *fatals) Helper() {}

func (f *fatals) Fatal(args ...any) {
	f.failed = true
	runtime.Goexit()
}
