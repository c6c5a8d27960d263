// Tests of serve's newer flags through whole runs (merchant cap and idle
// TTL, metrics, fault rules, the PostgreSQL store) and of the HTTP
// server's limits against slow and oversized clients.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/internal/largeanswertest"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/merchants"
	"github.com/paymock/paymock/sandbox"
)

// TestMain lets the --store tests have a throwaway PostgreSQL database.
func TestMain(m *testing.M) { pgtest.Main(m) }

// answer sends one request as key and returns the status and the error
// code of the answer ("" when it is not an error).
func answer(t *testing.T, addr, key, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, errorCode(b)
}

func TestParseOptions_NewFlagsDefaultsAndSources(t *testing.T) {
	o := parseTestOptions(t, nil, nil)
	if o.maxMerchants != merchants.DefaultMaxMerchants || o.merchantIdleTTL != sandbox.DefaultMerchantIdleTTL ||
		!o.metrics || o.storeURL != "" || o.faultsPath != "" {
		t.Errorf("defaults: max %d, ttl %v, metrics %v, store %q, faults %q; want %d, %v, true, memory, none",
			o.maxMerchants, o.merchantIdleTTL, o.metrics, o.storeURL, o.faultsPath,
			merchants.DefaultMaxMerchants, sandbox.DefaultMerchantIdleTTL)
	}
	faultsFile := writeFile(t, "faults.yaml", "- {operation: listPayments, status: 503}\n")
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(o *options) bool
	}{
		{"--max-merchants", []string{"--max-merchants", "5"}, nil, func(o *options) bool { return o.maxMerchants == 5 }},
		{"PAYMOCK_MAX_MERCHANTS 0 is no cap", nil, map[string]string{"PAYMOCK_MAX_MERCHANTS": "0"},
			func(o *options) bool { return o.maxMerchants == 0 && sandboxNoCap(o.maxMerchants) < 0 }},
		{"--max-payments", []string{"--max-payments", "5"}, nil, func(o *options) bool { return o.maxPayments == 5 }},
		{"PAYMOCK_MAX_PAYMENTS 0 is no cap", nil, map[string]string{"PAYMOCK_MAX_PAYMENTS": "0"},
			func(o *options) bool { return o.maxPayments == 0 && sandboxNoCap(o.maxPayments) < 0 }},
		{"--merchant-idle-ttl", []string{"--merchant-idle-ttl", "90m"}, nil,
			func(o *options) bool { return o.merchantIdleTTL == 90*time.Minute }},
		{"PAYMOCK_MERCHANT_IDLE_TTL 0 is never", nil, map[string]string{"PAYMOCK_MERCHANT_IDLE_TTL": "0"},
			func(o *options) bool { return o.merchantIdleTTL == 0 && sandboxIdleTTL(o.merchantIdleTTL) < 0 }},
		{"--metrics=false", []string{"--metrics=false"}, nil, func(o *options) bool { return !o.metrics }},
		{"--metrics alone", []string{"--metrics"}, map[string]string{"PAYMOCK_METRICS": "false"}, func(o *options) bool { return o.metrics }},
		{"PAYMOCK_METRICS=false", nil, map[string]string{"PAYMOCK_METRICS": "false"}, func(o *options) bool { return !o.metrics }},
		{"--faults", []string{"--faults", faultsFile}, nil, func(o *options) bool { return o.faultsPath == faultsFile }},
		{"--store memory", []string{"--store", "memory"}, nil, func(o *options) bool { return o.storeURL == "" }},
		{"PAYMOCK_STORE postgres", nil, map[string]string{"PAYMOCK_STORE": "postgres://u:pw@db.example:5432/paymock"},
			func(o *options) bool {
				return o.storeURL == "postgres://u:pw@db.example:5432/paymock" && o.storeFrom == "PAYMOCK_STORE"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if o := parseTestOptions(t, tt.args, tt.env); !tt.check(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
	// The defaults as the help text shows them are the sandbox's own.
	if d, err := time.ParseDuration(defaultMerchantIdleTTL); err != nil || d != sandbox.DefaultMerchantIdleTTL {
		t.Errorf("--merchant-idle-ttl default %q is not sandbox.DefaultMerchantIdleTTL %v", defaultMerchantIdleTTL, sandbox.DefaultMerchantIdleTTL)
	}
	if sandboxNoCap(7) != 7 || sandboxIdleTTL(time.Hour) != time.Hour {
		t.Error("a positive cap or TTL is not passed as is")
	}
}

func TestRun_RefusesBadValuesOfTheNewFlags(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing faults file", []string{"--faults", dir + "/none.yaml"}, []string{"invalid --faults", "none.yaml"}},
		{"faults is a folder", []string{"--faults", dir}, []string{"invalid --faults", "is a directory"}},
		{"store typo", []string{"--store", "memroy"}, []string{`invalid --store: "memroy": want memory, or a URL`}},
		{"store of another database", []string{"--store", "mysql://root:hunter2@db/x"}, []string{"mysql:// URLs are not supported"}},
		{"store with a password and no scheme", []string{"--store", "user:hunter2@db"}, []string{"invalid --store: want memory, or a URL"}},
		{"idle ttl without unit", []string{"--merchant-idle-ttl", "24"}, []string{`invalid --merchant-idle-ttl: "24"`}},
		{"max merchants not a number", []string{"--max-merchants", "10k"}, []string{`invalid --max-merchants: "10k"`}},
		{"max payments negative", []string{"--max-payments", "-1"}, []string{`invalid --max-payments: "-1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--addr", "127.0.0.1:0"}, tt.args...)
			_, stderr, code := runCLI(cancelled(), args, nil)
			if code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("stderr repeats the password:\n%s", stderr)
			}
		})
	}
}

func TestRun_MaxMerchantsCapsOpenModeAndTheIdleTTLFreesRoom(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--max-merchants", "1", "--merchant-idle-ttl", "1s"}, nil, hooks{})
	// The first merchant holds something (an empty one would be evicted
	// to make room) and nothing pending (it could not be forgotten).
	if status, _ := answer(t, r.addr, "sk_test_first", "POST", "/_sandbox/webhook-endpoints", `{"url":"https://hooks.example/in"}`); status != http.StatusCreated {
		t.Fatalf("the first key got %d, want 201", status)
	}
	status, code := answer(t, r.addr, "sk_test_second", "GET", "/api/v1/payments", "")
	if status != http.StatusTooManyRequests || code != "merchant_limit" {
		t.Fatalf("a second key past --max-merchants 1 got %d %q, want 429 merchant_limit", status, code)
	}
	// Once the first merchant has been idle for the TTL it is forgotten,
	// and the second key gets its place.
	deadline := time.Now().Add(safetyNet)
	for {
		if status, _ := answer(t, r.addr, "sk_test_second", "GET", "/api/v1/payments", ""); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle merchant was never forgotten")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(r.stderr.String(), "forgot an idle open-mode merchant") {
		t.Errorf("no log line of the forgotten merchant:\n%s", r.stderr)
	}
}

func TestRun_MaxMerchantsZeroHasNoCap(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--max-merchants", "0"}, nil, hooks{})
	for i := range 3 {
		if status, code := answer(t, r.addr, fmt.Sprintf("sk_test_%d", i), "GET", "/api/v1/payments", ""); status != http.StatusOK {
			t.Fatalf("key %d got %d %q, want 200", i, status, code)
		}
	}
}

func TestRun_MetricsCanBeTurnedOff(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"on by default", nil, nil, http.StatusOK},
		{"--metrics=false", []string{"--metrics=false"}, nil, http.StatusNotFound},
		{"PAYMOCK_METRICS=false", nil, map[string]string{"PAYMOCK_METRICS": "false"}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRun(t, append([]string{"--addr", "127.0.0.1:0"}, tt.args...), tt.env, hooks{})
			status, body := get(t, r.addr, "/metrics")
			if status != tt.want {
				t.Fatalf("GET /metrics = %d, want %d", status, tt.want)
			}
			if tt.want == http.StatusOK && !strings.Contains(body, "# TYPE ") {
				t.Errorf("GET /metrics is not the Prometheus text format:\n%.300s", body)
			}
		})
	}
}

func TestRun_FaultsFileAppliesToEveryMerchant(t *testing.T) {
	path := writeFile(t, "faults.yaml", "- operation: listPayments\n  status: 503\n  times: 1\n")
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--faults", path}, nil, hooks{})
	for _, key := range []string{"sk_test_a", "sk_test_b"} {
		if status, _ := answer(t, r.addr, key, "GET", "/api/v1/payments", ""); status != http.StatusServiceUnavailable {
			t.Errorf("%s: first list = %d, want the file's 503", key, status)
		}
		if status, _ := answer(t, r.addr, key, "GET", "/api/v1/payments", ""); status != http.StatusOK {
			t.Errorf("%s: second list = %d, want 200 once the rule's one time is used", key, status)
		}
	}
}

func TestRun_RefusesABadFaultsFileWithItsLine(t *testing.T) {
	path := writeFile(t, "faults.yaml", "- operation: listPayments\n  colour: red\n- operation: refundPayment\n  status: 503\n")
	_, stderr, code := runCLI(cancelled(), []string{"--addr", "127.0.0.1:0", "--faults", path}, nil)
	if code != 2 {
		t.Errorf("exit code = %d, want 2", code)
	}
	for _, w := range []string{"paymock: " + path + `:2: unknown field "colour" in a fault rule`, path + ":3: fault rule 2: ", "refundPayment",
		`Run "paymock -h" for usage.`} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not contain %q:\n%s", w, stderr)
		}
	}
}

func TestRun_StoreKeepsPaymentsInPostgreSQLAcrossRestarts(t *testing.T) {
	url := pgtest.URL(t)
	args := []string{"--addr", "127.0.0.1:0", "--api-key", gateKey, "--store", url}
	first := startRun(t, args, nil, hooks{})
	req, _ := http.NewRequest("POST", "http://"+first.addr+"/api/v1/payments", strings.NewReader(goodCreate))
	req.Header.Set("Authorization", "Bearer "+gateKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || created.ID == "" {
		t.Fatalf("create = %d %q, want 201 with an id", resp.StatusCode, created.ID)
	}
	if err := first.stop(t); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(first.stderr.String(), "hunter2") || !strings.Contains(first.stderr.String(), "store=postgres") {
		t.Errorf("the start log should name the store, never its URL:\n%s", first.stderr)
	}

	second := startRun(t, args, nil, hooks{})
	if status, _ := answer(t, second.addr, gateKey, "GET", "/api/v1/payments/"+created.ID, ""); status != http.StatusOK {
		t.Errorf("after a restart on the same database, GET the payment = %d, want 200", status)
	}
}

func TestRun_StoreDownAtStartExitsTwoNamingIt(t *testing.T) {
	down := "postgres://paymock:hunter2@" + closedPort(t) + "/paymock?connect_timeout=2"
	tests := []struct {
		name string
		args []string
		env  map[string]string
		from string
	}{
		{"flag", []string{"--store", down}, nil, "--store"},
		{"env", nil, map[string]string{"PAYMOCK_STORE": down}, "PAYMOCK_STORE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), safetyNet)
			defer cancel()
			_, stderr, code := runCLI(ctx, append([]string{"--addr", "127.0.0.1:0"}, tt.args...), tt.env)
			if code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
			for _, w := range []string{"paymock: " + tt.from + ": cannot use the PostgreSQL database: ", "cannot reach the database at 127.0.0.1:"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("stderr repeats the password:\n%s", stderr)
			}
		})
	}
}

func TestDefaultLimits_OutlastTheLongestFaultDelay(t *testing.T) {
	if defaultLimits.write <= faults.MaxDelayMS*time.Millisecond {
		t.Errorf("write timeout %v would cut a fault delay of %v", defaultLimits.write, faults.MaxDelayMS*time.Millisecond)
	}
	if defaultLimits.readHeader <= 0 || defaultLimits.read <= 0 || defaultLimits.idle <= 0 || defaultLimits.maxHeaderBytes <= 0 ||
		defaultLimits.answer <= 0 || defaultLimits.answer >= defaultLimits.write {
		t.Errorf("a limit is off: %+v", defaultLimits)
	}
}

// testLimits are short limits, so that cutting slow clients takes a
// moment of the test.
var testLimits = serverLimits{
	readHeader:     300 * time.Millisecond,
	read:           600 * time.Millisecond,
	write:          5 * time.Second,
	answer:         5 * time.Second,
	idle:           time.Second,
	maxHeaderBytes: 4 << 10,
}

// trickle sends text over conn one byte every gap, until it is all sent or
// the server cuts the connection; it returns how much it sent.
func trickle(conn net.Conn, text string, gap time.Duration) int {
	for i := range len(text) {
		if _, err := conn.Write([]byte{text[i]}); err != nil {
			return i
		}
		time.Sleep(gap)
	}
	return len(text)
}

func TestRun_CutsClientsThatSendSlowly(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &testLimits})
	pad := strings.Repeat("x", 60)
	body := `{"amount": 10.5, "currency": "USD", "description": "` + pad + `"}`
	tests := []struct {
		name  string
		fast  string // sent at once
		slow  string // sent a byte at a time
		limit time.Duration
	}{
		{"headers a byte at a time", "", "GET /healthz HTTP/1.1\r\nHost: paymock\r\nX-Pad: " + pad + "\r\n\r\n", testLimits.readHeader},
		{"a body a byte at a time",
			"POST /api/v1/payments HTTP/1.1\r\nHost: paymock\r\nAuthorization: Bearer sk_test_slow\r\n" +
				"Content-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n",
			body, testLimits.read},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", r.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			if _, err := io.WriteString(conn, tt.fast); err != nil {
				t.Fatal(err)
			}
			// At a byte every 50ms the slow part takes 3 to 4 seconds: the
			// server must cut the connection long before.
			sent := make(chan int, 1)
			go func() { sent <- trickle(conn, tt.slow, 50*time.Millisecond) }()
			conn.SetReadDeadline(time.Now().Add(safetyNet))
			reply, _ := io.ReadAll(bufio.NewReader(conn)) // until the server closes
			cut := time.Since(start)
			if n := <-sent; n == len(tt.slow) {
				t.Errorf("the client sent all %d bytes over %v: the server never cut it", n, cut)
			}
			if cut > tt.limit+2*time.Second {
				t.Errorf("cut after %v, want soon after the %v limit", cut, tt.limit)
			}
			if strings.HasPrefix(string(reply), "HTTP/1.1 2") {
				t.Errorf("the slow request was served: %q", reply)
			}
		})
	}
}

func TestRun_ADelayFaultLeavesTheBodyItsWholeReadLimit(t *testing.T) {
	// A delay longer than the read limit, before a body not sent with the
	// headers: the body read after the delay must get the whole limit
	// again, or every such create is a 400 body_unreadable.
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &testLimits})
	delay := 2 * testLimits.read
	tests := []struct {
		name   string
		expect bool // Expect: 100-continue: the body is sent once asked for, after the delay
	}{
		{"Expect: 100-continue", true},
		{"a body larger than the headers' read", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := largeanswertest.BigCreate(t, r.addr, "sk_test_delayed")
			req.Header.Set("Paymock-Fault", fmt.Sprintf("delay=%dms", delay.Milliseconds()))
			if tt.expect {
				req.Header.Set("Expect", "100-continue")
			}
			client := &http.Client{Timeout: safetyNet, Transport: &http.Transport{
				DisableKeepAlives: true, ExpectContinueTimeout: safetyNet}}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := docs.Service.Match(req)
			if err != nil {
				t.Fatal(err)
			}
			if err := docs.Service.ValidateResponse(context.Background(), req, rt, resp.StatusCode, resp.Header, body); err != nil {
				t.Fatalf("the answer breaks the contract: %v", err)
			}
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("a create held %v by a delay fault: %d %s, want 201", delay, resp.StatusCode, body)
			}
		})
	}
}

func TestRun_OptionsStarIsAnsweredAsEveryRequest(t *testing.T) {
	// net/http answers OPTIONS * itself with a bare 200 unless told not
	// to: every answer of the server carries nosniff and no-store, and an
	// error of the one shape.
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &testLimits})
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(safetyNet))
	if _, err := io.WriteString(c, "OPTIONS * HTTP/1.1\r\nHost: paymock\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("OPTIONS * answered %d with headers %v, want nosniff and no-store", resp.StatusCode, resp.Header)
	}
	if err := docs.Service.ValidateError(body); err != nil {
		t.Errorf("OPTIONS * answered %d %q: %v", resp.StatusCode, body, err)
	}
}

func TestRun_RefusesHeadersPastTheLimit(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &testLimits})
	req, _ := http.NewRequest("GET", "http://"+r.addr+"/healthz", nil)
	req.Header.Set("X-Pad", strings.Repeat("x", 2*testLimits.maxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("GET with %d bytes of headers = %d, want 431", 2*testLimits.maxHeaderBytes, resp.StatusCode)
	}
	// Go's HTTP server refuses it before any handler: its answer is still
	// an error of the contract's one shape, naming the bound.
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Service.ValidateError(body); err != nil {
		t.Errorf("the 431's body %s breaks the Error schema: %v", body, err)
	}
	if want := `"code":"headers_too_large","message":"the request line and headers are larger than the 4 KiB the server reads"`; !strings.Contains(string(body), want) {
		t.Errorf("the 431's body is %s, want it to hold %s", body, want)
	}
	// Headers under the limit are served.
	req.Header.Set("X-Pad", strings.Repeat("x", testLimits.maxHeaderBytes/4))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET with small headers = %d, want 200", resp.StatusCode)
	}
}

// A webhook endpoint on an address --webhook-deny refuses would start and
// then fail every delivery: it is refused at start, as the control API
// refuses it (400 url_denied), naming where it was given. Only addresses
// are judged there; a host name is checked at each connection.
func TestRun_RefusesAWebhookURLOnADeniedAddressAtStart(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	config := func(url string) string {
		return writeFile(t, "paymock.yaml", "merchants:\n  - name: acme\n    api_keys: [sk_test_acme]\n    webhooks:\n"+
			"      - {url: \""+url+"\", secret: \""+secret+"\"}\n")
	}
	metadata := config("http://169.254.169.254/latest/hooks")
	loopback := config("http://127.0.0.1:9000/hooks")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"the unspecified address", []string{"--webhook-url", "http://0.0.0.0:19000/hooks"}, nil,
			[]string{"invalid --webhook-url", `"http://0.0.0.0:19000/hooks"`, "0.0.0.0 is in 0.0.0.0/8", "--webhook-deny"}},
		{"from the environment", nil, map[string]string{"PAYMOCK_WEBHOOK_URL": "http://localhost:9000/ok,http://[::]:9000/hooks"},
			[]string{"invalid PAYMOCK_WEBHOOK_URL", `"http://[::]:9000/hooks"`, ":: is in ::/128", "--webhook-deny"}},
		{"a range of one's own", []string{"--webhook-deny", "10.0.0.0/8", "--webhook-url", "http://10.1.2.3/hooks"}, nil,
			[]string{"invalid --webhook-url", "10.1.2.3 is in 10.0.0.0/8"}},
		{"a config endpoint on the metadata address", []string{"--config", metadata}, nil,
			[]string{"config file " + metadata + ", line 5", `merchant "acme"`, "webhook 1", "169.254.169.254 is in 169.254.0.0/16", "--webhook-deny"}},
		{"a config endpoint in a range of one's own", []string{"--config", loopback, "--webhook-deny", "127.0.0.0/8"}, nil,
			[]string{"config file " + loopback + ", line 5", "127.0.0.1 is in 127.0.0.0/8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(cancelled(), append(tc.args, "--addr", "127.0.0.1:0"), tc.env)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	for _, args := range [][]string{
		{"--webhook-url", "http://localhost:9000/hooks"},                     // loopback is not denied by default
		{"--webhook-url", "http://metadata.google.internal/computeMetadata"}, // a name: judged at each connection
		{"--webhook-deny", "", "--webhook-url", "http://0.0.0.0:19000/hooks"},
		{"--config", loopback},
	} {
		if _, stderr, code := runCLI(cancelled(), append(args, "--addr", "127.0.0.1:0"), nil); code != 0 {
			t.Errorf("%q: exit code %d, want 0; stderr:\n%s", args, code, stderr)
		}
	}
}
