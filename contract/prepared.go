// Loading the documents from their prepared JSON, made at build time.

package contract

import (
	"embed"
	"fmt"
	"net/url"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paymock/paymock/contract/internal/prepared"
)

//go:generate go run ./internal/prepared/gen -out prepared -go internal/servicedoc/decoded_gen.go

// preparedDocs are openapi.yaml and sandbox/openapi.yaml as kin-openapi's
// JSON, written by `go generate ./contract` and checked against the YAML
// by TestPreparedDocuments_MatchTheYAML. Reading JSON skips the YAML
// decoding, and the test having validated the documents, a start does not
// validate them again.
//
//go:embed prepared/*.json.gz
var preparedDocs embed.FS

// shared loads the service contract on the first call (every server
// needs it) and the control API's document when first used.
var shared = sync.OnceValues(func() (*Documents, error) {
	svc := &Document{}
	if err := svc.loadServiceDoc(); err != nil {
		return nil, err
	}
	sb := &Document{prepare: func(d *Document) {
		if err := d.loadPrepared(prepared.Files[1]); err != nil {
			// The embedded bytes are fixed at build time and the test
			// above loads them: only a broken build gets here.
			panic(err)
		}
	}}
	return &Documents{Service: svc, Sandbox: sb}, nil
})

// loadPrepared loads and compiles one prepared document. References stay
// within the document (the loader refuses others), as in the YAML.
func (d *Document) loadPrepared(f prepared.File) error {
	packed, err := preparedDocs.ReadFile("prepared/" + f.JSON)
	if err != nil {
		return fmt.Errorf("load contract: %w", err)
	}
	data, err := prepared.Unpack(packed)
	if err != nil {
		return fmt.Errorf("load contract: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromDataWithPath(data, &url.URL{Path: f.YAML})
	if err != nil {
		return fmt.Errorf("load contract %s: %w", f.YAML, err)
	}
	return d.build(doc)
}
