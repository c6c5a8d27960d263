// paymock verify against Prism's mock of openapi.yaml: a deployment that
// knows only the contract.

package interop

import (
	"encoding/json"
	"maps"
	"os/exec"
	"testing"
)

// Prism answers every create, retrieve and list from the contract's one
// example payment and keeps none: each answer fits the contract's
// schemas, but a create answering the id the list showed before, and a
// retrieve of an id never created answering 200 with another payment,
// are what verify's identity checks are for. Nothing else is a violation.
func TestVerify_PrismsMockOfTheContractBreaksOnlyIdentityAndDriftsWhereItKeepsNoState(t *testing.T) {
	url, _ := startPrism(t, "mock", "openapi.yaml")
	cmd := exec.Command(suite.bin, "verify", "--base-url", url, "--api-key", "sk_test_interop_verify", "--format", "json")
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Problems   []string          `json:"problems"`
		Checks     []json.RawMessage `json:"checks"`
		Violations []struct {
			Check, Code string
		} `json:"violations"`
		Drift []struct {
			Point, Paymock, Deployment string
		} `json:"drift"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("verify printed no JSON report (exit %d): %v\n%s", code, err, out)
	}
	if len(rep.Problems) > 0 {
		t.Errorf("the run stopped: %q", rep.Problems)
	}
	got := map[string]bool{}
	for _, v := range rep.Violations {
		got[v.Check+" "+v.Code] = true
	}
	want := map[string]bool{"create.checkout id_reused": true, "unknown_id wrong_payment": true}
	if !maps.Equal(got, want) {
		t.Errorf("violations %v, want exactly %v", got, want)
	}
	// Prism answers from the contract's examples, and keeps no payments:
	// an unknown id is found, and any bearer token passes. That is drift,
	// and verify exits 1 on it.
	drift := map[string]string{}
	for _, d := range rep.Drift {
		drift[d.Point] = d.Deployment
	}
	if code != 1 || drift["error.unknown_id.status"] != "200" || drift["auth.www_authenticate"] != "absent" {
		t.Errorf("exit %d, drift %v; want 1, and Prism's 200 for an unknown id and no WWW-Authenticate", code, drift)
	}
}
