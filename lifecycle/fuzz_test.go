// Fuzz target for scenario files: whatever an operator writes, the server
// either starts with scenarios that work or refuses the file with lines
// that say where and why, in plain words and without card numbers.

package lifecycle_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/lifecycle"
)

// goTypeDump finds Go's words leaking into a message meant for a user.
var goTypeDump = regexp.MustCompile(`\b(lifecycle|paymock|yaml)\.[A-Za-z]|\*(int|float64|bool|string)\b|\bfloat64\b|time\.Duration|!!(str|int|float|bool|map|seq|null)\b|\[\](string|int)`)

// knownStatuses are the outcomes a step may have.
var knownStatuses = map[paymock.Status]bool{
	paymock.StatusCompleted: true, paymock.StatusFailed: true, paymock.StatusExpired: true,
}

func FuzzParseScenarios(f *testing.F) {
	// The committed corpus under testdata/fuzz/FuzzParseScenarios holds
	// whole files; these are the smallest cases.
	for _, s := range []string{
		"scenarios:\n  - name: slow\n    steps:\n      - {after: 30s, do: complete}\n",
		"scenarios:\n  - name: card\n    match: {card: \"4000000000000077\"}\n    steps: [{after: 1h, do: expire}]\n",
		"scenarios:\n  - name: bad-card\n    match: {card: \"4000000000000078\"}\n    steps: [{after: 1h, do: expire}]\n",
		"scenarios: []\n",
		"",
		"- name: x\n",
		"scenarios:\n  - &s {name: a, steps: [{after: 0s, do: fail}]}\n  - *s\n",
		"scenarios:\n  - name: complete_after_5s\n    steps: [{after: -1s, do: refund}]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		const name = "scenarios.yaml"
		set, err := lifecycle.ParseScenarios(name, []byte(data))
		if err != nil {
			if set != nil {
				t.Fatalf("ParseScenarios refused the file but returned scenarios")
			}
			checkScenarioErrors(t, data, err, name)
			return
		}
		names := set.Names()
		if len(names) == 0 {
			t.Fatalf("ParseScenarios accepted %q with no scenarios", data)
		}
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" || seen[n] {
				t.Fatalf("ParseScenarios(%q): names %q: empty or repeated", data, names)
			}
			seen[n] = true
			// A payment that asks for the scenario by name gets it, with
			// steps the lifecycle can carry out.
			sc, ok := set.Select(paymock.Payment{Amount: 1050, Currency: "EUR"}, lifecycle.Trigger{MetadataScenario: n})
			if !ok || sc.Name != n || len(sc.Steps) == 0 || !strings.HasPrefix(sc.Source, name+":") {
				t.Fatalf("ParseScenarios(%q): scenario %q selects as %+v, %v", data, n, sc, ok)
			}
			for _, st := range sc.Steps {
				if st.After < 0 || !knownStatuses[st.Do] {
					t.Fatalf("ParseScenarios(%q): scenario %q has step %+v", data, n, st)
				}
			}
		}
	})
}

// checkScenarioErrors checks a refused file: every error is a *FileError
// of that file at a real line, in plain words, and no card number of the
// file appears in a message.
func checkScenarioErrors(t *testing.T, data string, err error, name string) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	if len(errs) == 0 {
		t.Fatalf("ParseScenarios(%q): an empty error", data)
	}
	cards := cardNumbers(data)
	lines := lineCount(data)
	for _, e := range errs {
		var fe *lifecycle.FileError
		if !errors.As(e, &fe) {
			t.Fatalf("ParseScenarios(%q): error %T %v is not a *FileError", data, e, e)
		}
		if fe.File != name || fe.Line < 1 || fe.Line > lines+1 || fe.Reason == "" {
			t.Fatalf("ParseScenarios(%q): error at %s:%d (file has %d lines): %q", data, fe.File, fe.Line, lines, fe.Reason)
		}
		if !utf8.ValidString(fe.Reason) {
			t.Fatalf("ParseScenarios(%q): message is not UTF-8: %q", data, fe.Reason)
		}
		if goTypeDump.MatchString(fe.Reason) {
			t.Fatalf("ParseScenarios(%q): message speaks Go: %s", data, fe.Reason)
		}
		for _, c := range cards {
			if strings.Contains(fe.Reason, c) {
				t.Fatalf("ParseScenarios(%q): message shows card number %s: %s", data, c, fe.Reason)
			}
		}
	}
}

// cardNumbers lists the values of match.card fields that look like card
// numbers (12 digits or more) and appear nowhere else in the file: a
// number that is also a name or a key may rightly be quoted as that.
func cardNumbers(data string) []string {
	var root yaml.Node
	if yaml.Unmarshal([]byte(data), &root) != nil {
		return nil
	}
	counts := map[string]int{}
	var cards []string
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		if n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode {
			counts[n.Value]++
			if key == "card" && len(n.Value) >= 12 && strings.Trim(n.Value, "0123456789") == "" {
				cards = append(cards, n.Value)
			}
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i], "")
				walk(n.Content[i+1], n.Content[i].Value)
			}
			return
		}
		for _, c := range n.Content {
			walk(c, "")
		}
	}
	walk(&root, "")
	var out []string
	for _, c := range cards {
		if counts[c] == 1 && strings.Count(data, c) == 1 {
			out = append(out, c)
		}
	}
	return out
}

// lineCount is an upper bound of the lines YAML sees in data: it breaks
// lines at \r and at NEL, LS and PS too.
func lineCount(data string) int {
	n := 1
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += strings.Count(data, br)
	}
	return n
}
