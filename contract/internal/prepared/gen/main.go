// Command gen writes the prepared JSON form of paymock's two OpenAPI
// documents, which the contract package embeds, and the service
// contract's as Go code that builds it; `go generate ./contract` runs it,
// and a test of contract fails when the files and the YAML disagree.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract/internal/prepared"
)

func main() {
	out := flag.String("out", "prepared", "directory to write the JSON documents to")
	goOut := flag.String("go", "", "file to write the service contract to as Go code (package servicedoc)")
	flag.Parse()
	for i, f := range prepared.Files {
		data, err := prepared.FromYAML(paymock.Documents, f.YAML)
		if err == nil && i == 0 && *goOut != "" {
			var src []byte
			src, err = prepared.GoSource(data, prepared.GoPackage, prepared.GoFunc, f.YAML)
			if err == nil {
				err = os.WriteFile(*goOut, src, 0o644)
			}
		}
		if err == nil {
			data, err = prepared.Pack(data)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*out, f.JSON), data, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
