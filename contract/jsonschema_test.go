// Tests of the patched JSON Schema library that go.mod puts in place
// (third_party/jsonschema): it is upstream v6.0.3 plus the patch beside it
// and nothing else, and it still checks schemas and values, alone and
// through kin-openapi's OpenAPI 3.1 path.

package contract

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The module the copy is of, and where the copy and its patch live,
// relative to this package.
const (
	jsonschemaModule = "github.com/santhosh-tekuri/jsonschema/v6@v6.0.3"
	jsonschemaCopy   = "../third_party/jsonschema"
	jsonschemaPatch  = "../third_party/jsonschema.patch"
)

// jsonschemaLeftOut says which files of the upstream module the copy does
// not carry: its tests, their data, and the repository's CI and workspace
// files, none of which a build reads.
func jsonschemaLeftOut(rel string) bool {
	base := filepath.Base(rel)
	return strings.HasSuffix(base, "_test.go") ||
		strings.HasPrefix(rel, "testdata/") ||
		strings.HasPrefix(rel, ".github/") ||
		strings.HasPrefix(base, ".") ||
		strings.HasPrefix(base, "go.work")
}

func TestJSONSchemaCopy_IsUpstreamPlusThePatch(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads a module")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to download upstream with:", err)
	}
	// Outside this module, so that go.mod's replace does not apply.
	cmd := exec.Command(gobin, "mod", "download", "-json", jsonschemaModule)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go mod download %s failed, so the copy cannot be compared: %v", jsonschemaModule, err)
	}
	var dl struct{ Dir string }
	if err := json.Unmarshal(out, &dl); err != nil || dl.Dir == "" {
		t.Fatalf("go mod download -json gave %q: %v", out, err)
	}

	// Upstream as the copy should hold it: its files, less those left out,
	// with the patch applied.
	want := t.TempDir()
	err = filepath.WalkDir(dl.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dl.Dir, path)
		if err != nil || jsonschemaLeftOut(filepath.ToSlash(rel)) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(want, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(want, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := filepath.Abs(jsonschemaPatch)
	if err != nil {
		t.Fatal(err)
	}
	apply := exec.Command("git", "apply", patch)
	apply.Dir = want
	// Keep git from taking a repository around the temporary directory
	// for the one to patch.
	apply.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(want))
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply %s to upstream %s: %v\n%s", jsonschemaPatch, jsonschemaModule, err, out)
	}

	wantFiles, gotFiles := filesUnder(t, want), filesUnder(t, jsonschemaCopy)
	for _, rel := range wantFiles {
		if !slices.Contains(gotFiles, rel) {
			t.Errorf("%s/%s is missing: upstream has it", jsonschemaCopy, rel)
		}
	}
	for _, rel := range gotFiles {
		if !slices.Contains(wantFiles, rel) {
			t.Errorf("%s/%s is not upstream's", jsonschemaCopy, rel)
			continue
		}
		a, errA := os.ReadFile(filepath.Join(want, rel))
		b, errB := os.ReadFile(filepath.Join(jsonschemaCopy, rel))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s/%s differs from upstream %s with %s applied", jsonschemaCopy, rel, jsonschemaModule, jsonschemaPatch)
		}
	}
}

// filesUnder lists the files under dir, as slash-separated relative paths.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestJSONSchema_StillChecksSchemasAndValues(t *testing.T) {
	// Several first compiles at once: the meta-schemas are compiled once,
	// and every caller waits for them.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c := jsonschema.NewCompiler()
			if err := c.AddResource("bad.json", map[string]any{"type": float64(5)}); err != nil {
				t.Error(err)
				return
			}
			// Only the meta-schema says a type must be a name.
			if _, err := c.Compile("bad.json"); err == nil {
				t.Error(`compiled {"type": 5}: the meta-schema was not applied`)
			}
		})
	}
	wg.Wait()

	c := jsonschema.NewCompiler()
	schema := map[string]any{"type": "object", "required": []any{"amount"}}
	if err := c.AddResource("good.json", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("good.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(map[string]any{"amount": float64(1)}); err != nil {
		t.Errorf("a valid value: %v", err)
	}
	if err := sch.Validate(map[string]any{}); err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("a value without amount: got %v, want the missing property named", err)
	}
}

func TestKinOpenAPI31_ValidatesThroughThePatchedCopy(t *testing.T) {
	// kin-openapi's OpenAPI 3.1 path, the reason the library is linked: a
	// 3.1 document's schema, checked by JSON Schema 2020-12.
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.1.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    Payment:
      type: object
      required: [amount]
      properties:
        amount: {type: number, exclusiveMinimum: 0}
        note: {type: [string, "null"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	payment := doc.Components.Schemas["Payment"].Value
	for _, tc := range []struct {
		name  string
		value map[string]any
		ok    bool
	}{
		{"a positive amount", map[string]any{"amount": float64(2), "note": nil}, true},
		{"a zero amount", map[string]any{"amount": float64(0)}, false},
		{"no amount", map[string]any{}, false},
		{"a note of the wrong type", map[string]any{"amount": float64(2), "note": float64(1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := payment.VisitJSON(tc.value, openapi3.EnableJSONSchema2020())
			if tc.ok && err != nil {
				t.Errorf("rejected: %v", err)
			}
			if !tc.ok && err == nil {
				t.Error("accepted")
			}
		})
	}
}
