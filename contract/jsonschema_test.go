// Tests that the patched JSON Schema library (internal/thirdparty), whose
// meta-schemas wait for the first compile, still checks schemas against
// them and values against schemas, on its own and through kin-openapi.

package contract

import (
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestJSONSchema2020_StillChecksSchemasAndValues(t *testing.T) {
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

	// kin-openapi's OpenAPI 3.1 path, the reason the library is linked.
	kin := openapi3.NewObjectSchema().WithProperty("amount", openapi3.NewFloat64Schema().WithMin(1))
	if err := kin.VisitJSON(map[string]any{"amount": float64(0)}, openapi3.EnableJSONSchema2020()); err == nil {
		t.Error("kin's JSON Schema 2020 validation accepted an amount under its minimum")
	}
	if err := kin.VisitJSON(map[string]any{"amount": float64(2)}, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("kin's JSON Schema 2020 validation: %v", err)
	}
}
