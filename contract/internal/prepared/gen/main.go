// Command gen writes the prepared JSON form of paymock's two OpenAPI
// documents, which the contract package embeds, and the service
// contract's built form (prepared.Build), which a start reads; `go
// generate ./contract` runs it, and a test of contract fails when the
// files and the YAML disagree.
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
	flag.Parse()
	for i, f := range prepared.Files {
		data, err := prepared.FromYAML(paymock.Documents, f.YAML)
		if err == nil && i == 0 {
			var built []byte
			if built, err = prepared.Build(data); err == nil {
				err = os.WriteFile(filepath.Join(*out, prepared.BuiltService), built, 0o644)
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
