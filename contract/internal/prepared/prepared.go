// Package prepared turns an OpenAPI document from its YAML into the JSON
// form paymock embeds: kin-openapi reads JSON with encoding/json alone,
// skipping the YAML decoding that was most of what a start cost.
package prepared

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// FromYAML loads the document at name in docs as the server once did at
// every start (references to the other documents in docs resolved, the
// whole validated) and returns it as kin-openapi's JSON, which loads
// back to the same document.
func FromYAML(docs fs.FS, name string) ([]byte, error) {
	doc, err := LoadYAML(docs, name)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", name, err)
	}
	return append(out, '\n'), nil
}

// LoadYAML loads and validates the YAML document at name in docs.
func LoadYAML(docs fs.FS, name string) (*openapi3.T, error) {
	data, err := fs.ReadFile(docs, name)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", name, err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		return fs.ReadFile(docs, path.Clean(strings.TrimPrefix(u.Path, "/")))
	}
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: name})
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", name, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("prepare %s: validate: %w", name, err)
	}
	return doc, nil
}

// File is one document: its YAML in paymock.Documents and the name of
// its prepared JSON under contract/prepared.
type File struct{ YAML, JSON string }

// Files are the documents paymock embeds, service contract first.
var Files = []File{
	{YAML: "openapi.yaml", JSON: "openapi.json.gz"},
	{YAML: "sandbox/openapi.yaml", JSON: "sandbox-openapi.json.gz"},
}

// BuiltService is the name of the service contract's built form
// (Build) under contract/prepared, which a start reads. It is not packed:
// unpacking it was about a millisecond of a cold start, for 15 kB of
// binary.
const BuiltService = "openapi.built"

// Pack gzips a prepared document: the image must stay small, and the
// JSON shrinks to a tenth; unpacking it costs well under a millisecond.
func Pack(data []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Unpack is Pack undone.
func Unpack(packed []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, fmt.Errorf("unpack a prepared document: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("unpack a prepared document: %w", err)
	}
	return data, nil
}
