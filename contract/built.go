// Loading the service contract from its built form, made at build time:
// the cheapest form a start can read.

package contract

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paymock/paymock/contract/internal/prepared"
)

// loadBuilt loads the service contract from its built form
// (prepared.Build: kin-openapi's decoded values, read in one pass); kin
// then resolves its references as it does the JSON's. The loader makes
// the document it resolves (its location and state are kin's own), so it
// loads an empty one first and the rebuilt fields are copied in.
// TestBuiltDocument_LoadsAsTheYAMLDoes holds the result to the YAML's.
func (d *Document) loadBuilt() error {
	f := prepared.Files[0]
	built, err := preparedDocs.ReadFile("prepared/" + prepared.BuiltService)
	if err != nil {
		return fmt.Errorf("load contract: %w", err)
	}
	rebuilt, err := prepared.Rebuild(built)
	if err != nil {
		return fmt.Errorf("load contract %s: %w", f.YAML, err)
	}
	location := &url.URL{Path: f.YAML}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromDataWithPath([]byte(`{}`), location)
	if err != nil {
		return fmt.Errorf("load contract %s: %w", f.YAML, err)
	}
	copyExported(doc, rebuilt)
	if err := loader.ResolveRefsIn(doc, location); err != nil {
		return fmt.Errorf("load contract %s: %w", f.YAML, err)
	}
	return d.build(doc)
}

// copyExported sets every exported field of dst to src's.
func copyExported(dst, src *openapi3.T) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range dv.NumField() {
		if dv.Type().Field(i).IsExported() {
			dv.Field(i).Set(sv.Field(i))
		}
	}
}
