// A TypeScript client (openapi-typescript types, openapi-fetch calls)
// type-checked strictly against openapi.yaml and run against paymock:
// amounts come back exactly, in both wire forms.

package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildTSClient generates the types from openapi.yaml, type-checks
// testdata/tsclient/main.ts against them with tsc --strict and returns
// the compiled program.
func buildTSClient(t *testing.T) string {
	t.Helper()
	gen := npmTool(t, "openapi-typescript")
	tsc := npmTool(t, "tsc")
	dir := t.TempDir()
	runTool(t, 2*time.Minute, gen, docPath("openapi.yaml"), "-o", filepath.Join(dir, "schema.d.ts"))
	main, err := os.ReadFile(filepath.Join("testdata", "tsclient", "main.ts"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"main.ts":      string(main),
		"package.json": `{"type": "module", "private": true}`,
		"tsconfig.json": `{"compilerOptions": {"target": "es2022", "module": "es2022", "moduleResolution": "bundler",
			"strict": true, "noUncheckedIndexedAccess": true, "skipLibCheck": true, "types": [], "outDir": "dist"},
			"files": ["main.ts"]}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The program imports openapi-fetch from the pinned tools.
	if err := os.Symlink(filepath.Join(suite.npmDir, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if out, err := runToolErr(t, 2*time.Minute, dir, nil, tsc, "-p", dir); err != nil {
		t.Fatalf("tsc --strict refuses the client against the generated types: %v\n%s", err, out)
	}
	return filepath.Join(dir, "dist", "main.js")
}

func TestTypeScriptClient_RoundTripsAmountsExactly(t *testing.T) {
	prog := buildTSClient(t)
	for _, form := range []string{"number", "string"} {
		t.Run(form, func(t *testing.T) {
			srv := startServer(t, "--variants", "amount="+form)
			out, err := runToolErr(t, time.Minute, suite.root, nil, "node", prog, srv.URL, token(t), form)
			if err != nil {
				t.Fatalf("TypeScript client: %v\n%s", err, out)
			}
			if n := strings.Count(out, "round-tripped"); n != 3 {
				t.Errorf("%d amounts round-tripped, want 3:\n%s", n, out)
			}
		})
	}
}
