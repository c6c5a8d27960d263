// What an operator of a shared sandbox relies on: open mode cannot eat the
// machine, idle merchants are forgotten, and /metrics tells what runs.

package sandbox

import (
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestOpenMode_NewTokensPastTheCapAre429(t *testing.T) {
	env := newEnv(t, withMaxMerchants(3))
	id := env.create("sk_test_m1", nil)
	env.create("sk_test_m2", nil)
	env.create("sk_test_m3", nil)
	st, body, _ := env.do("GET", "/api/v1/payments", "sk_test_m4", nil)
	if st != http.StatusTooManyRequests {
		t.Fatalf("a fourth merchant: %d %v", st, body)
	}
	if e := errorOf(t, body); e["type"] != "rate_limit_error" || e["code"] != "merchant_limit" {
		t.Errorf("error %v", e)
	}
	// Existing merchants are untouched.
	if p := env.get("sk_test_m1", id); p["id"] != id {
		t.Errorf("m1 lost its payment: %v", p)
	}
}

func TestOpenMode_IdleMerchantsAreForgottenBusyOnesKept(t *testing.T) {
	env := newEnv(t)
	idle, busy := "sk_test_idle", "sk_test_busy"
	done := env.create(idle, nil)
	env.do("POST", "/_sandbox/payments/"+done+"/complete", idle, nil)
	pending := env.create(busy, nil) // its expiry is scheduled: work pending
	gone := env.sb.ForgetIdle(time.Now().Add(DefaultMerchantIdleTTL + time.Minute))
	if len(gone) != 1 {
		t.Fatalf("forgot %v, want the idle merchant only", gone)
	}
	// In memory the merchant's payments go with it; in a shared store they
	// belong to every replica, and only this one's copy is forgotten
	// (paymock.Backend.Release).
	want := http.StatusNotFound
	if os.Getenv("PAYMOCK_TEST_STORE") == "postgres" {
		want = http.StatusOK
	}
	if st, _, _ := env.do("GET", "/api/v1/payments/"+done, idle, nil); st != want {
		t.Errorf("a forgotten merchant's payment answered %d, want %d", st, want)
	}
	if p := env.get(busy, pending); p["status"] != "pending" {
		t.Errorf("the busy merchant lost its payment: %v", p)
	}
	if !strings.Contains(env.logs.String(), "forgot an idle open-mode merchant") {
		t.Error("no log line for the forgotten merchant")
	}
}

func TestMetrics_CountRequestsViolationsAndMerchants(t *testing.T) {
	env := newEnv(t, withMetrics())
	env.create(keyA, nil)
	env.do("POST", "/api/v1/payments", keyA, map[string]any{"amount": "x"})
	resp, err := http.Get(env.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`paymock_requests_total{operation="createPayment",status="201"} 1`,
		`paymock_requests_total{operation="createPayment",status="400"} 1`,
		`paymock_contract_violations_total{side="request"} 1`,
		`paymock_merchants 1`,
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Off unless asked for.
	plain := newEnv(t)
	if resp, err := http.Get(plain.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics without the flag: %v %v", resp.StatusCode, err)
	}
}

// TestMetrics_ServeEveryFamilyTheOperationsGuideNames reads the metrics
// table of docs/operations.md and asks a running sandbox's /metrics for
// each family it names: an operator alerts on these names, so one that is
// documented but never served would leave an alert silent for ever.
func TestMetrics_ServeEveryFamilyTheOperationsGuideNames(t *testing.T) {
	guide, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	names := documentedMetrics(string(guide))
	if len(names) < 20 {
		t.Fatalf("found %d metric names in the guide's table, want the whole table: %q", len(names), names)
	}
	env := newEnv(t, withMetrics())
	resp, err := http.Get(env.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	served := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "#" && f[1] == "HELP" {
			served[f[2]] = true
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "process_") && runtime.GOOS != "linux" {
			continue // read from /proc/self, absent elsewhere as the guide says
		}
		if !servedFamily(served, name) {
			t.Errorf("docs/operations.md names %s, which /metrics does not serve", name)
		}
	}
}

// documentedMetrics returns the family names in the first column of the
// guide's metrics table: labels ({operation,status}) dropped, alternatives
// (network_{receive,transmit}) spelled out, and the bare suffixes after a
// wildcard (go_memstats_* (heap_inuse_bytes, ...)) joined to its stem.
func documentedMetrics(guide string) []string {
	var out []string
	for line := range strings.Lines(guide) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		stem := ""
		for i, part := range strings.Split(cell, "`") {
			if i%2 == 0 || part == "" {
				continue
			}
			name := part
			if open := strings.IndexByte(name, '{'); open >= 0 {
				end := strings.IndexByte(name, '}')
				if end < 0 {
					continue
				}
				alts, rest := name[open+1:end], name[end+1:]
				if rest == "" { // labels
					name = name[:open]
				} else { // alternatives
					for _, alt := range strings.Split(alts, ",") {
						out = append(out, name[:open]+alt+rest)
					}
					continue
				}
			}
			switch {
			case strings.HasSuffix(name, "*"):
				stem = strings.TrimSuffix(name, "*")
				out = append(out, name)
			case strings.HasPrefix(name, "paymock_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_"):
				out = append(out, name)
			case stem != "":
				out = append(out, stem+name)
			}
		}
	}
	return out
}

// servedFamily reports whether /metrics has a family of that name, or
// any family under a name ending in *.
func servedFamily(served map[string]bool, name string) bool {
	stem, wild := strings.CutSuffix(name, "*")
	if !wild {
		return served[name]
	}
	for s := range served {
		if strings.HasPrefix(s, stem) {
			return true
		}
	}
	return false
}
