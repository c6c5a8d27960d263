// Package servicedoc is the service contract (openapi.yaml) as Go code
// that builds kin-openapi's document, written by `go generate ./contract`:
// a start allocates the document instead of decoding its JSON, which was
// most of what the first server of a process cost. The contract tests
// check that it resolves to the very document the YAML loads to.
package servicedoc
