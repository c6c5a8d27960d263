// Tests of "paymock healthcheck" against running and failing servers.

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRun_HealthcheckSucceedsAgainstRunningServer(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"addr flag", []string{"healthcheck", "--addr", r.addr}, nil},
		{"addr from env", []string{"healthcheck"}, map[string]string{"PAYMOCK_ADDR": r.addr}},
		{"flag wins over env", []string{"healthcheck", "--addr", r.addr}, map[string]string{"PAYMOCK_ADDR": closedPort(t)}},
		{"other server flags are accepted", []string{"healthcheck", "--addr", r.addr, "--clock", "frozen"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := run(context.Background(), tt.args, envOf(tt.env), &out, io.Discard)
			if err != nil {
				t.Fatalf("healthcheck: %v", err)
			}
			if code := exitCode(err, io.Discard); code != 0 {
				t.Errorf("exit code = %d, want 0", code)
			}
			if !strings.Contains(out.String(), "healthy") {
				t.Errorf("stdout = %q, want a healthy line", out.String())
			}
		})
	}
}

func TestRun_HealthcheckFailsAgainstClosedPort(t *testing.T) {
	addr := closedPort(t)
	err := run(context.Background(), []string{"healthcheck", "--addr", addr}, envOf(nil), io.Discard, io.Discard)
	if err == nil {
		t.Fatal("healthcheck succeeded against a closed port")
	}
	if !strings.Contains(err.Error(), addr+"/healthz") {
		t.Errorf("error %q does not name the URL it tried", err)
	}
	if code := exitCode(err, io.Discard); code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
}

func TestRun_HealthcheckFailsOnUnhealthyAnswer(t *testing.T) {
	// Not paymock: a server that answers /healthz with 503.
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	addr := strings.TrimPrefix(sick.URL, "http://")
	err := run(context.Background(), []string{"healthcheck", "--addr", addr}, envOf(nil), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("healthcheck = %v, want an error naming the 503", err)
	}
	if code := exitCode(err, io.Discard); code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
}

func TestRun_HealthcheckRejectsUnusableAddr(t *testing.T) {
	for _, addr := range []string{"nonsense", ":0", "127.0.0.1:http"} {
		t.Run(addr, func(t *testing.T) {
			err := run(context.Background(), []string{"healthcheck", "--addr", addr}, envOf(nil), io.Discard, io.Discard)
			wantUsageError(t, err, addr)
		})
	}
}

func TestHealthURL_UsesLoopbackForWildcardAddresses(t *testing.T) {
	tests := map[string]string{
		":8080":          "http://127.0.0.1:8080/healthz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		"[::]:8080":      "http://127.0.0.1:8080/healthz",
		"127.0.0.1:9000": "http://127.0.0.1:9000/healthz",
		"[::1]:9000":     "http://[::1]:9000/healthz",
		"localhost:9000": "http://localhost:9000/healthz",
	}
	for addr, want := range tests {
		got, err := healthURL(addr)
		if err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}
