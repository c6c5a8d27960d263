// Tests that the page templates, parsed on the first page a process
// renders rather than at start, parse and define every page.

package mockserver

import "testing"

func TestPageTemplates_ParseEveryPage(t *testing.T) {
	templates, err := parsePageTemplates()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"checkout", "threeds", "status", "message", "redirect"} {
		tpl := templates[name]
		if tpl == nil || tpl.Lookup("layout.html") == nil {
			t.Errorf("page %s: no template with the layout", name)
		}
	}
}
