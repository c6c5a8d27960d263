// Both documents as the two common OpenAPI linters see them: no error and
// no warning from Spectral's OpenAPI ruleset or Redocly's recommended one.

package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLint_SpectralFindsNothing(t *testing.T) {
	spectral := npmTool(t, "spectral")
	ruleset := filepath.Join(suite.root, "interop", ".spectral.yaml")
	for _, name := range documents {
		t.Run(name, func(t *testing.T) {
			// --fail-severity=hint: a warning, an info or a hint fails too.
			out, err := runToolErr(t, 2*time.Minute, suite.root, nil, spectral,
				"lint", "--ruleset", ruleset, "--format", "json", "--fail-severity", "hint", "--quiet", name)
			var results []struct {
				Code     string   `json:"code"`
				Message  string   `json:"message"`
				Severity int      `json:"severity"`
				Path     []string `json:"path"`
			}
			// --quiet leaves only the JSON on stdout; anything else is a
			// failure to run, which must not read as a clean lint.
			start := strings.Index(out, "[")
			if start < 0 || json.Unmarshal([]byte(out[start:]), &results) != nil {
				t.Fatalf("spectral did not report as JSON (%v):\n%s", err, out)
			}
			for _, r := range results {
				t.Errorf("spectral %s (severity %d) at %s: %s", r.Code, r.Severity, strings.Join(r.Path, "."), r.Message)
			}
			if err != nil && len(results) == 0 {
				t.Errorf("spectral failed without results: %v\n%s", err, out)
			}
		})
	}
}

func TestLint_RedoclyFindsNothing(t *testing.T) {
	redocly := npmTool(t, "redocly")
	for _, name := range documents {
		t.Run(name, func(t *testing.T) {
			out, err := runToolErr(t, 2*time.Minute, suite.root, []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true"},
				redocly, "lint", "--format", "json", name)
			start := strings.Index(out, "{")
			var report struct {
				Totals struct {
					Errors   int `json:"errors"`
					Warnings int `json:"warnings"`
				} `json:"totals"`
				Problems []struct {
					RuleID   string `json:"ruleId"`
					Severity string `json:"severity"`
					Message  string `json:"message"`
					Location []struct {
						Pointer string `json:"pointer"`
					} `json:"location"`
				} `json:"problems"`
			}
			if start < 0 || json.Unmarshal([]byte(out[start:strings.LastIndex(out, "}")+1]), &report) != nil {
				t.Fatalf("redocly did not report as JSON (%v):\n%s", err, out)
			}
			for _, p := range report.Problems {
				where := ""
				if len(p.Location) > 0 {
					where = p.Location[0].Pointer
				}
				t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
			}
			if report.Totals.Errors+report.Totals.Warnings > 0 && len(report.Problems) == 0 {
				t.Errorf("redocly counts %d errors and %d warnings", report.Totals.Errors, report.Totals.Warnings)
			}
			if err != nil && len(report.Problems) == 0 {
				t.Errorf("redocly failed without problems: %v\n%s", err, out)
			}
		})
	}
}
