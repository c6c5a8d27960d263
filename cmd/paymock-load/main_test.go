package main

import (
	"bytes"
	"context"
	"net/http/httptest"
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
	sb, err := sandbox.New(sandbox.Config{})
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
	if err := run(ctx, []string{"--url", ts.URL, "--clients", "3", "--max-requests", "120", "--duration", "1m"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"120 requests", "create", "list", "retrieve"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
