//go:build unix

// The sandbox.Client example of docs/go.md, run against an in-process
// sandbox exactly as it would run against paymock in docker.

package docs_test

import (
	"context"
	"testing"
	"time"

	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/sandbox"
)

// The region between the markers is copied into docs/go.md.

// --- docs/go.md: client ---

// driveSandbox uses the control API of any paymock, in process or in
// docker: the URL and key are all it needs.
func driveSandbox(ctx context.Context, paymockURL, apiKey string) error {
	c, err := sandbox.NewClient(sandbox.ClientConfig{URL: paymockURL, APIKey: apiKey})
	if err != nil {
		return err
	}
	// A second key for the same merchant, shown whole only here.
	key, err := c.CreateAPIKey(ctx)
	if err != nil {
		return err
	}
	_ = key.Key
	// The next create is carried out but answered 503.
	once := 1
	rule := faults.Rule{Operation: "createPayment", Status: 503, When: "after", Times: &once}
	if _, err := c.AddFault(ctx, rule); err != nil {
		return err
	}
	// An hour later on this merchant's clock: expiries and retries fire.
	if _, err := c.AdvanceClock(ctx, time.Hour); err != nil {
		return err
	}
	report, err := c.Report(ctx)
	if err != nil {
		return err
	}
	_ = report.ViolatingCalls
	return c.Reset(ctx)
}

// --- end ---

func TestDriveSandbox_WorksAgainstAnyURL(t *testing.T) {
	s := paymocktest.New(t)
	if err := driveSandbox(t.Context(), s.URL, s.APIKey); err != nil {
		t.Fatal(err)
	}
	c, err := sandbox.NewClient(sandbox.ClientConfig{URL: s.URL, APIKey: s.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.APIKeys(t.Context())
	if err != nil || len(keys) != 2 {
		t.Errorf("APIKeys = %d keys, %v: want the test's key and the created one", len(keys), err)
	}
	rules, err := c.Faults(t.Context())
	if err != nil || len(rules) != 0 {
		t.Errorf("Faults after the reset = %v, %v: want none", rules, err)
	}
}
