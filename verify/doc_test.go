// The table of docs/verify.md is the table of the code.

package verify

import (
	"os"
	"strings"
	"testing"
)

// The table of docs/verify.md lies between these markers.
const (
	pointsBegin = "<!-- points: generated from verify.Points(); TestDocs_PointsTableIsTheCodes keeps it so -->\n"
	pointsEnd   = "<!-- points: end -->"
)

func TestDocs_PointsTableIsTheCodes(t *testing.T) {
	data, err := os.ReadFile("../docs/verify.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, rest, ok := strings.Cut(doc, pointsBegin)
	table, _, ok2 := strings.Cut(rest, pointsEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/verify.md has no table between %q and %q", pointsBegin, pointsEnd)
	}
	if want := PointsMarkdown(); table != want {
		if os.Getenv("PAYMOCK_UPDATE_DOCS") == "1" {
			updated := strings.Replace(doc, pointsBegin+table, pointsBegin+want, 1)
			if err := os.WriteFile("../docs/verify.md", []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/verify.md's table of open points is not verify.Points(); run PAYMOCK_UPDATE_DOCS=1 go test ./verify -run TestDocs to write it.\nwant:\n%s\ngot:\n%s", want, table)
	}
}

func TestPoints_EachHasAnIDATopicAndWhatItNeeds(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Points() {
		if p.ID == "" || p.Topic == "" || p.Spec == "" || p.Needs == "" || p.answers == nil {
			t.Errorf("point %+v lacks a field", p.ID)
		}
		if seen[p.ID] {
			t.Errorf("point %s twice", p.ID)
		}
		seen[p.ID] = true
		if (p.Variant == "") != (p.suggest == nil) {
			t.Errorf("point %s: a variant without a suggestion, or the reverse", p.ID)
		}
	}
}
