//go:build unix

package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/paymock/paymock"
)

// TestDocs_CreateBoundsAreTheContracts holds every bound of a create field
// the docs write as "1 to N" or "1..N" to openapi.yaml's: a bound changed
// in the contract and left in one doc (docs/design.md said customer.name
// 1 to 200 where every other place said 255) fails here.
func TestDocs_CreateBoundsAreTheContracts(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					MinLength *int `yaml:"minLength"`
					MaxLength *int `yaml:"maxLength"`
					Minimum   *int `yaml:"minimum"`
					Maximum   *int `yaml:"maximum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(paymock.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	bound := func(schema, prop string) (lo, hi int) {
		p, ok := doc.Components.Schemas[schema].Properties[prop]
		switch {
		case ok && p.MaxLength != nil && p.MinLength != nil:
			return *p.MinLength, *p.MaxLength
		case ok && p.Maximum != nil && p.Minimum != nil:
			return *p.Minimum, *p.Maximum
		}
		t.Fatalf("openapi.yaml's %s.%s has no bounds", schema, prop)
		return 0, 0
	}
	fields := []struct {
		name, schema, prop string
	}{
		{"description", "CreatePaymentRequest", "description"},
		{"customer.name", "CustomerInput", "name"},
		{"expires_in", "CreatePaymentRequest", "expires_in"},
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	texts := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A bound may be broken over lines, and written in bold.
		texts[f] = strings.Join(strings.Fields(strings.ReplaceAll(string(data), "**", "")), " ")
	}
	for _, fl := range fields {
		lo, hi := bound(fl.schema, fl.prop)
		// `customer.name` 1 to 255, `customer.name` | 1 to 255 characters,
		// `description` 1..1000, 1 to 1,000.
		re := regexp.MustCompile("`" + regexp.QuoteMeta(fl.name) + "`(?: is| \\|)? ([0-9][0-9,]*) ?(?:to|\\.\\.) ?([0-9][0-9,]*)")
		found := 0
		for f, text := range texts {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				found++
				gotLo, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
				gotHi, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
				if gotLo != lo || gotHi != hi {
					t.Errorf("%s: %q, but openapi.yaml bounds %s from %d to %d", f, m[0], fl.name, lo, hi)
				}
			}
		}
		// The docs state each bound in several places (the API page,
		// the design choices, the security page): none found is a
		// pattern that no longer reads them.
		if found < 2 {
			t.Errorf("%s: %d bounds found in the docs, want every place that states it", fl.name, found)
		}
	}
}
