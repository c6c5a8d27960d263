// The gate over a report that lists only the first distinct violations of
// an operation: it fails on every violating call still, and the table and
// the JUnit report say how many violations they do not list.

package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymock/paymock"
)

func TestReport_AReportListingNotEveryViolationStillFailsTheGateOnEveryCall(t *testing.T) {
	const key = "sk_test_client_under_test"
	const requests, each = 3, 30 // 90 distinct violations
	most := paymock.MaxDistinctViolations
	r := startRun(t, []string{"--addr", "127.0.0.1:0", "--api-key", key}, nil, hooks{})
	const create = `{"amount": 10.5, "currency": "USD", "customer": {"email": "jane@example.com", "name": "Jane Doe"},
	  "description": "Order 1234", "expires_in": 3600, "mcc": 5732, "metadata": {},
	  "success_url": "https://shop.example.com/success", "cancel_url": "https://shop.example.com/cancel"%s}`
	if got := apiCall(t, r.addr, key, "POST", "/api/v1/payments", fmt.Sprintf(create, "")); got != http.StatusCreated {
		t.Fatalf("a valid create: %d", got)
	}
	for i := range requests {
		var fields strings.Builder
		for k := range each {
			fmt.Fprintf(&fields, `, "r%d_f%02d": 0`, i, k)
		}
		if got := apiCall(t, r.addr, key, "POST", "/api/v1/payments", fmt.Sprintf(create, fields.String())); got != http.StatusBadRequest {
			t.Fatalf("a create with unknown fields: %d", got)
		}
	}

	junitPath := filepath.Join(t.TempDir(), "junit.xml")
	out, err, code := runReport(t, []string{"--url", "http://" + r.addr, "--api-key", key, "--fail-on-violations", "--junit", junitPath}, nil)
	if code != 1 || err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--fail-on-violations: %d of %d calls violated the contract", requests, requests+1)) {
		t.Errorf("exit code %d, error %v; want 1 and every violating call counted", code, err)
	}
	unlisted := requests*each - most
	if listed := strings.Count(out, " parameter_unknown: "); listed != most {
		t.Errorf("the table lists %d violations, want %d:\n%s", listed, most, out)
	}
	if want := fmt.Sprintf("\n  createPayment %d more violations, not listed: a report tells apart at most %d distinct ones per operation\n", unlisted, most); !strings.Contains(out, want) {
		t.Errorf("stdout does not say%s%s", want, out)
	}

	failures, messages := junitCounts(t, junitPath)
	var createCase []string
	for name, m := range messages {
		if strings.HasPrefix(name, "createPayment ") {
			createCase = m
		}
	}
	// Its system-out, a failure per violation listed, and one for the rest.
	if failures != "1" || len(createCase) != 1+most+1 || createCase[len(createCase)-1] != "more violations, not listed" {
		t.Errorf("JUnit: %s failures, createPayment's case %d entries ending %q; want 1, %d and the unlisted",
			failures, len(createCase), createCase[len(createCase)-1], 1+most+1)
	}
}
