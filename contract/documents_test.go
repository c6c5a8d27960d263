// Tests that the control API's document stands alone and that the service
// contract's schemas copied into it stay the contract's.

package contract_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/paymock/paymock"
)

func TestSandboxDocument_LoadsWithoutRemoteReferences(t *testing.T) {
	// kin's loader refuses any reference outside the document unless told
	// otherwise, as ogen and most generators do.
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(paymock.SandboxOpenAPI)
	if err != nil {
		t.Fatalf("sandbox/openapi.yaml does not load on its own: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("sandbox/openapi.yaml is not valid on its own: %v", err)
	}
	var walk func(node any, at string)
	walk = func(node any, at string) {
		switch n := node.(type) {
		case map[string]any:
			for k, v := range n {
				if ref, ok := v.(string); ok && k == "$ref" && !strings.HasPrefix(ref, "#/") {
					t.Errorf("%s: $ref %q points outside the document", at, ref)
				}
				walk(v, at+"/"+k)
			}
		case []any:
			for _, v := range n {
				walk(v, at+"/[]")
			}
		}
	}
	walk(decodeYAML(t, paymock.SandboxOpenAPI), "#")
}

func TestSandboxDocument_CopiesMatchTheContract(t *testing.T) {
	service := schemasOf(t, paymock.OpenAPI)
	sandbox := schemasOf(t, paymock.SandboxOpenAPI)
	copies := 0
	for name, s := range sandbox {
		want, ok := service[name]
		if !ok {
			continue
		}
		copies++
		if !reflect.DeepEqual(s, want) {
			t.Errorf("components.schemas.%s of sandbox/openapi.yaml differs from openapi.yaml's: copy it again from openapi.yaml", name)
		}
	}
	// Payment, the errors and what they refer to: fewer means a schema
	// was renamed on one side only, and the document refers to nothing.
	if copies < 10 {
		t.Errorf("%d schemas of openapi.yaml are copied into sandbox/openapi.yaml, want Payment, Error and what they refer to", copies)
	}
}

func schemasOf(t *testing.T, data []byte) map[string]any {
	t.Helper()
	doc, _ := decodeYAML(t, data).(map[string]any)
	components, _ := doc["components"].(map[string]any)
	schemas, ok := components["schemas"].(map[string]any)
	if !ok {
		t.Fatal("a document without components.schemas")
	}
	return schemas
}

func decodeYAML(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
