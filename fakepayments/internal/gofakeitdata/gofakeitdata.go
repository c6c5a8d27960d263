// Package gofakeitdata extracts, from gofakeit v7's data, the lists that
// fakepayments draws from, in the text form fakepayments embeds: gofakeit
// builds all of its tables in package initialisation, whatever a program
// draws, so the binary carries this extract instead of linking gofakeit.
// Only `go generate ./fakepayments` and the tests import this package.
package gofakeitdata

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/brianvoe/gofakeit/v7/data"
)

// Lists returns the gofakeit data lists fakepayments reads, as
// "category.key" of gofakeit's data.Data, in the order they are written.
func Lists() []string {
	return []string{
		"person.first",
		"person.last",
		"product.name",
		"product.adjective",
		"product.suffix",
		"product.material",
		"product.feature",
		"product.category",
		"address.number",
		"address.street_prefix",
		"address.street_name",
		"address.street_suffix",
		"address.city",
		"address.state_abr",
		"address.zip",
	}
}

// Header is the file's first line; Section opens each list, followed by
// its name and length, then come its values, one a line.
const (
	Header  = "# gofakeit v7 data drawn by fakepayments, written by `go generate ./fakepayments`: do not edit\n"
	Section = "@ "
)

// Extract returns the text of Lists from gofakeit's data as it is now.
func Extract() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(Header)
	for _, name := range Lists() {
		category, key, _ := strings.Cut(name, ".")
		values, ok := data.Data[category][key]
		if !ok || len(values) == 0 {
			return nil, fmt.Errorf("gofakeitdata: gofakeit has no list %s", name)
		}
		b.WriteString(Section + name + " " + strconv.Itoa(len(values)) + "\n")
		for _, v := range values {
			// One value a line: a value that could be read as something
			// else must stop the build, not change the draws.
			if strings.ContainsAny(v, "\r\n") || strings.HasPrefix(v, Section) {
				return nil, fmt.Errorf("gofakeitdata: %s holds %q, which the text form cannot carry", name, v)
			}
			b.WriteString(v + "\n")
		}
	}
	return b.Bytes(), nil
}
