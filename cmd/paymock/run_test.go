// Tests of a whole run: serving, logging and shutting down.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// get does GET http://addr+path and returns the status and body.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// logLines decodes the JSON log lines of a run started with --log-format json.
func logLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// logsWithMsg are the log lines whose msg starts with prefix.
func logsWithMsg(lines []map[string]any, prefix string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if msg, _ := l["msg"].(string); strings.HasPrefix(msg, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestRun_ServesHealthzAndStopsOnCancel(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"default command", []string{"--addr", "127.0.0.1:0"}, nil},
		{"serve command", []string{"serve", "--addr", "127.0.0.1:0"}, nil},
		{"addr from env", nil, map[string]string{"PAYMOCK_ADDR": "127.0.0.1:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRun(t, tt.args, tt.env, hooks{})
			status, body := get(t, r.addr, "/healthz")
			if status != http.StatusOK {
				t.Errorf("GET /healthz = %d %s, want 200", status, body)
			}
			var health struct{ Status string }
			if err := json.Unmarshal([]byte(body), &health); err != nil || health.Status != "ok" {
				t.Errorf("GET /healthz body = %q, want {\"status\":\"ok\"}", body)
			}
			if err := r.stop(t); err != nil {
				t.Fatalf("run returned %v after cancel, want nil", err)
			}
			if c, err := net.Dial("tcp", r.addr); err == nil {
				c.Close()
				t.Error("the port still accepts connections after run returned")
			}
			if !strings.Contains(r.stderr.String(), "paymock stopped") {
				t.Errorf("no stop line in the log:\n%s", r.stderr)
			}
		})
	}
}

func TestRun_ServesTheAPIWithConfiguredKeys(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--api-key", "sk_test_known"}, nil, hooks{})
	for _, tt := range []struct {
		key  string
		want int
	}{
		{"sk_test_known", http.StatusOK},
		{"sk_test_unknown", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/api/v1/payments", nil)
		req.Header.Set("Authorization", "Bearer "+tt.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET /api/v1/payments with %s = %d, want %d", tt.key, resp.StatusCode, tt.want)
		}
	}
}

func TestRun_ShutdownLetsInFlightRequestFinish(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	shuttingDown := make(chan struct{})
	// The wrapper holds one request inside the real server's handler chain
	// until the test releases it, then lets the real server answer it.
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get("X-Test-Hold") != "" {
				close(entered)
				<-release
			}
			next.ServeHTTP(w, req)
		})
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{
		wrap:         hold,
		shuttingDown: func() { close(shuttingDown) },
	})

	type result struct {
		status int
		body   string
		err    error
	}
	slow := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/healthz", nil)
		req.Header.Set("X-Test-Hold", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			slow <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		slow <- result{resp.StatusCode, string(b), err}
	}()

	waitFor(t, entered, "the slow request to reach the server")
	r.cancel()
	waitFor(t, shuttingDown, "shutdown to begin")

	// Shutdown has closed the listener: no new connections...
	if c, err := net.Dial("tcp", r.addr); err == nil {
		c.Close()
		t.Error("a new connection was accepted during shutdown")
	}
	// ...and run waits for the request in flight.
	select {
	case <-r.done:
		t.Fatalf("run returned (%v) while a request was in flight", r.err)
	default:
	}

	close(release)
	res := <-slow
	if res.err != nil || res.status != http.StatusOK || !strings.Contains(res.body, `"ok"`) {
		t.Errorf("in-flight request = %d %q (err %v), want 200 with the health body", res.status, res.body, res.err)
	}
	if err := r.wait(t); err != nil {
		t.Errorf("run returned %v, want nil", err)
	}
}

// waitFor waits until ch is closed.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(safetyNet):
		t.Fatalf("gave up waiting for %s", what)
	}
}

func TestRun_LogsListeningLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantMode   string
		merchants  float64
		wantClock  string
		publicURL  string // "" means http://localhost:<bound port>
		openWarned bool
	}{
		{
			name:     "open mode",
			args:     []string{"--addr", "127.0.0.1:0", "--log-format", "json"},
			wantMode: "open", merchants: 0, wantClock: "real", openWarned: true,
		},
		{
			name:     "configured from env",
			args:     []string{"--log-format", "json"},
			env:      map[string]string{"PAYMOCK_ADDR": "127.0.0.1:0", "PAYMOCK_API_KEY": "sk_a,sk_b", "PAYMOCK_CLOCK": "frozen", "PAYMOCK_PUBLIC_URL": "https://pay.example.com/"},
			wantMode: "configured", merchants: 2, wantClock: "frozen", publicURL: "https://pay.example.com",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRun(t, tt.args, tt.env, hooks{})
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			lines := logLines(t, r.stderr.String())
			listening := logsWithMsg(lines, "paymock listening")
			if len(listening) != 1 {
				t.Fatalf("got %d listening lines, want 1:\n%s", len(listening), r.stderr)
			}
			l := listening[0]
			_, port, _ := net.SplitHostPort(r.addr)
			wantURL := tt.publicURL
			if wantURL == "" {
				wantURL = "http://localhost:" + port
			}
			checks := map[string]any{
				"level":      "INFO",
				"addr":       r.addr,
				"public_url": wantURL,
				"mode":       tt.wantMode,
				"merchants":  tt.merchants,
				"clock":      tt.wantClock,
				"version":    buildVersion(),
			}
			for k, want := range checks {
				if l[k] != want {
					t.Errorf("listening line %s = %v, want %v", k, l[k], want)
				}
			}
			open := logsWithMsg(lines, "paymock runs in open mode")
			if tt.openWarned && (len(open) != 1 || open[0]["level"] != "WARN") {
				t.Errorf("want one WARN about open mode, got %v", open)
			}
			if !tt.openWarned && len(open) != 0 {
				t.Errorf("open mode logged in configured mode: %v", open)
			}
		})
	}
}

func TestRun_AMerchantLineCountsTheWebhooksItsEventsGoTo(t *testing.T) {
	// acme has an endpoint of its own; key-1, the --api-key merchant, has
	// none, and gets the --webhook-url endpoints when there are any.
	cfg := writeFile(t, "paymock.yaml", `merchants:
  - name: acme
    api_keys: [sk_test_acme]
    webhooks:
      - {url: "http://localhost:9000/hooks", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
`)
	type hooksOf struct {
		webhooks float64
		from     string
	}
	for _, tc := range []struct {
		name string
		args []string
		want map[string]hooksOf
	}{
		{"the shared endpoint counts for a merchant without its own",
			[]string{"--api-key", "sk_test_one", "--webhook-url", "http://localhost:9001/h"},
			map[string]hooksOf{"key-1": {1, "--webhook-url"}}},
		{"no endpoint at all is none",
			[]string{"--api-key", "sk_test_one"},
			map[string]hooksOf{"key-1": {0, "none"}}},
		{"a merchant's own endpoints replace the shared ones",
			[]string{"--config", cfg, "--api-key", "sk_test_one", "--webhook-url", "http://localhost:9001/h", "--webhook-url", "http://localhost:9002/h"},
			map[string]hooksOf{"acme": {1, "config"}, "key-1": {2, "--webhook-url"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--addr", "127.0.0.1:0", "--log-format", "json", "--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, tc.args...)
			r := startRun(t, args, nil, hooks{})
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			got := map[string]hooksOf{}
			for _, l := range logsWithMsg(logLines(t, r.stderr.String()), "merchant") {
				if l["msg"] == "merchant" {
					n, _ := l["webhooks"].(float64)
					from, _ := l["webhooks_from"].(string)
					got[l["name"].(string)] = hooksOf{n, from}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("merchant lines: %+v, want %+v\n%s", got, tc.want, r.stderr)
			}
		})
	}
}

func TestRun_NeverLogsKeysOrSecrets(t *testing.T) {
	const (
		cliKey    = "sk_test_cli_SECRETKEY1"
		fileKey   = "sk_test_file_SECRETKEY2"
		cliSecret = "whsec_Q0xJU0VDUkVUMw=="
		fileHook  = "whsec_RklMRVNFQ1JFVDQ="
	)
	cfg := writeFile(t, "paymock.yaml", `merchants:
  - name: acme
    api_keys: [`+fileKey+`]
    webhooks:
      - {url: "http://localhost:9000/hooks", secret: "`+fileHook+`"}
`)
	r := startRun(t, []string{
		"--addr", "127.0.0.1:0", "--log-level", "debug",
		"--api-key", cliKey, "--config", cfg,
		"--webhook-url", "http://localhost:9001/h", "--webhook-secret", cliSecret,
	}, nil, hooks{})
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/api/v1/payments", nil)
	req.Header.Set("Authorization", "Bearer "+cliKey)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	logs := r.stderr.String()
	for _, secret := range []string{"SECRETKEY", cliSecret, fileHook, "Q0xJU0VDUkVUMw", "RklMRVNFQ1JFVDQ"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{"name=acme", "name=key-1", "merchants=2", "api_keys=2", "webhook_urls=1"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}

func TestRun_FailsWhenAddressIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run(context.Background(), []string{"--addr", ln.Addr().String()}, envOf(nil), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("run = %v, want a listen error", err)
	}
	if code := exitCode(err, io.Discard); code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
}

func TestRun_LogsTheSeedSoARunCanBeRepeated(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--seed", "42"}, nil, hooks{})
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stderr.String(), "seed=42") {
		t.Errorf("the start log lacks seed=42:\n%s", r.stderr)
	}
	drawn := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
	if err := drawn.stop(t); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`seed=[0-9]+ `).MatchString(drawn.stderr.String()) {
		t.Errorf("a drawn seed is not logged:\n%s", drawn.stderr)
	}
}
