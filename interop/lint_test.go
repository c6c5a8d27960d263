// Both documents as the two common OpenAPI linters see them: no error and
// no warning from Spectral's OpenAPI ruleset or Redocly's recommended one.

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestLint_SpectralFindsNothing(t *testing.T) {
	spectral := npmTool(t, "spectral")
	ruleset := filepath.Join(suite.root, "interop", ".spectral.yaml")
	for _, name := range documents {
		t.Run(name, func(t *testing.T) {
			// --fail-severity=hint: a warning, an info or a hint fails too.
			out, err := runToolErr(t, 2*time.Minute, suite.root, nil, spectral,
				"lint", "--ruleset", ruleset, "--format", "json", "--fail-severity", "hint", "--quiet", name)
			// --quiet leaves only the JSON on stdout; anything else is a
			// failure to run, which must not read as a clean lint.
			results := lintReport(t, "spectral", out, err)
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

func TestLint_EverySchemaUsesPortableForms(t *testing.T) {
	needInterop(t)
	for _, name := range documents {
		data, err := os.ReadFile(docPath(name))
		if err != nil {
			t.Fatal(err)
		}
		var root any
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, problem := range portabilityProblems(root, "#") {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

// portabilityProblems walks a document's YAML for forms that OpenAPI 3.0
// and 3.1 tools or JSON Schema converters read differently, or that make
// generators pick narrow types.
func portabilityProblems(node any, at string) []string {
	var out []string
	switch n := node.(type) {
	case map[string]any:
		typ, _ := n["type"].(string)
		format, _ := n["format"].(string)
		_, isExample := n["value"]
		switch {
		case isExample:
			return nil // an example's value is data, not a schema
		case typ == "number" && format != "double" && format != "float":
			out = append(out, at+": a number without format double, so generators may make it a float32")
		case typ == "integer" && format != "int32" && format != "int64":
			out = append(out, at+": an integer without format int32 or int64")
		}
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
			if _, isBool := n[k].(bool); isBool {
				out = append(out, at+": boolean "+k+" is OpenAPI 3.0 only; use minimum or maximum with the bound itself")
			}
		}
		if nullable, _ := n["nullable"].(bool); nullable {
			if typ == "" {
				out = append(out, at+": nullable without type admits nothing under OpenAPI 3.0.3; say the type in the same schema")
			}
			for _, k := range []string{"allOf", "oneOf", "anyOf", "$ref"} {
				if _, has := n[k]; has {
					out = append(out, at+": nullable beside "+k+" does not admit null under a strict reading; make the referenced schema nullable itself")
				}
			}
		}
		for _, k := range sortedKeys(n) {
			out = append(out, portabilityProblems(n[k], at+"/"+k)...)
		}
	case []any:
		for i, v := range n {
			out = append(out, portabilityProblems(v, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return out
}

// lintReport reads a Spectral-format JSON report (Spectral's own, and
// vacuum's spectral-report) from out and fails the test on each finding.
// A report that is not there is a failure to run, never a clean lint.
func lintReport(t *testing.T, tool, out string, err error) []lintFinding {
	t.Helper()
	var results []lintFinding
	start := strings.Index(out, "[")
	if start < 0 || json.Unmarshal([]byte(out[start:]), &results) != nil {
		t.Fatalf("%s did not report as JSON (%v):\n%s", tool, err, out)
	}
	for _, r := range results {
		t.Errorf("%s %s (severity %d) at %s: %s", tool, r.Code, r.Severity, strings.Join(r.Path, "."), r.Message)
	}
	return results
}

// lintFinding is one finding of a Spectral-format report.
type lintFinding struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Severity int      `json:"severity"`
	Path     []string `json:"path"`
}
