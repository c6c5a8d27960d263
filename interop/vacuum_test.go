// Both documents as vacuum sees them: its recommended OpenAPI rules and
// every OWASP rule, with no finding of any severity.

package interop

import (
	"path/filepath"
	"testing"
	"time"
)

// vacuumModule pins vacuum as a tool of a module of its own: its go.sum
// fixes every dependency, so paymock's go.mod stays lean and a run offline
// needs only the module cache. (go run vacuum@version cannot be used: it
// asks the module proxy for the list of versions, which it does not serve.)
var vacuumModule = filepath.Join("testdata", "vacuum")

func TestLint_VacuumFindsNothing(t *testing.T) {
	needInterop(t)
	dir, err := filepath.Abs(vacuumModule)
	if err != nil {
		t.Fatal(err)
	}
	ruleset := filepath.Join(suite.root, "interop", ".vacuum.yaml")
	ignore := filepath.Join(suite.root, "interop", ".vacuum-ignore.yaml")
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly"}
	for _, name := range documents {
		t.Run(name, func(t *testing.T) {
			// The first run builds vacuum (minutes); later ones reuse the
			// build cache.
			out, err := runToolErr(t, 30*time.Minute, dir, env, "go", "tool", "vacuum", "spectral-report",
				"--no-update-check", "--no-style", "--stdout", "--ruleset", ruleset, "--ignore-file", ignore, docPath(name))
			if err != nil {
				t.Fatalf("vacuum failed (%v):\n%s", err, out)
			}
			lintReport(t, "vacuum", out, err)
		})
	}
}
