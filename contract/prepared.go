// Loading the documents from their prepared JSON, made at build time.

package contract

import (
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paymock/paymock/contract/internal/prepared"
)

//go:generate go run ./internal/prepared/gen -out prepared

// preparedDocs are what a start reads: the service contract's built form
// (prepared.Build) and sandbox/openapi.yaml as kin-openapi's JSON, both
// written by `go generate ./contract` and checked against the YAML by
// TestBuiltDocument_IsTheYAMLs and TestPreparedDocuments_MatchTheYAML.
// Reading them skips the YAML decoding, and the tests having validated
// the documents, a start does not validate them again. The service
// contract's JSON stays on disk, for the tests and gen: a start reads
// its built form.
//
//go:embed prepared/sandbox-openapi.json.gz prepared/openapi.built
var preparedDocs embed.FS

// shared loads the service contract on the first call (every server
// needs it) and the control API's document when first used.
var shared = sync.OnceValues(func() (*Documents, error) {
	svc := &Document{}
	if err := svc.loadBuilt(); err != nil {
		return nil, err
	}
	sb := &Document{prepare: func(d *Document) {
		if err := d.loadPrepared(preparedDocs, prepared.Files[1]); err != nil {
			// The embedded bytes are fixed at build time and the test
			// above loads them: only a broken build gets here.
			panic(err)
		}
	}}
	return &Documents{Service: svc, Sandbox: sb}, nil
})

// loadPrepared loads and compiles one prepared document of fsys, which
// holds the directory prepared. References stay within the document (the
// loader refuses others), as in the YAML.
func (d *Document) loadPrepared(fsys fs.FS, f prepared.File) error {
	packed, err := fs.ReadFile(fsys, "prepared/"+f.JSON)
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
