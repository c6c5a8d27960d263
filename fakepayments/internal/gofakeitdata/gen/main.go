// Command gen writes fakepayments/fakedata.txt, the extract of gofakeit's
// data that fakepayments embeds; `go generate ./fakepayments` runs it, and
// a test of fakepayments fails when the file and gofakeit disagree.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/paymock/paymock/fakepayments/internal/gofakeitdata"
)

func main() {
	out := flag.String("out", "fakedata.txt", "file to write")
	flag.Parse()
	text, err := gofakeitdata.Extract()
	if err == nil {
		err = os.WriteFile(*out, text, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
