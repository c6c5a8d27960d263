package lifecycle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestSelect_BuiltIns(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		do    paymock.Status
	}{
		{"complete", 0, paymock.StatusCompleted},
		{"fail", 0, paymock.StatusFailed},
		{"expire", 0, paymock.StatusExpired},
		{"complete_after_5s", 5 * time.Second, paymock.StatusCompleted},
		{"fail_after_2m", 2 * time.Minute, paymock.StatusFailed},
		{"expire_after_1h", time.Hour, paymock.StatusExpired},
		{"complete_after_250ms", 250 * time.Millisecond, paymock.StatusCompleted},
	}
	var set *Scenarios
	for _, tc := range tests {
		sc, ok := set.Select(paymock.Payment{}, Trigger{MetadataScenario: tc.name})
		if !ok || len(sc.Steps) != 1 || sc.Steps[0].After != tc.after || sc.Steps[0].Do != tc.do {
			t.Errorf("%s: %v %+v", tc.name, ok, sc)
		}
	}
	for _, bad := range []string{"completed", "complete_after", "complete_after_5", "complete_after_5d", "COMPLETE", ""} {
		if sc, ok := set.Select(paymock.Payment{}, Trigger{MetadataScenario: bad}); ok {
			t.Errorf("%q selected %+v", bad, sc)
		}
	}
}

func TestSelect_TestCards(t *testing.T) {
	var set *Scenarios
	sc, ok := set.Select(paymock.Payment{}, Trigger{CardNumber: CardDeclinedAtOnce})
	if !ok || sc.Steps[0].Do != paymock.StatusFailed || sc.Steps[0].After != 0 {
		t.Errorf("declined card: %v %+v", ok, sc)
	}
	for _, n := range []string{"4242424242424242", Card3DSSucceeds, Card3DSDeclined} {
		if sc, ok := set.Select(paymock.Payment{}, Trigger{CardNumber: n}); ok {
			t.Errorf("%s runs a scenario at creation: %+v", n, sc)
		}
	}
	for _, c := range Cards {
		if !paymock.Luhn(c.Number) {
			t.Errorf("test card %s fails Luhn", c.Number)
		}
	}
	if c, ok := CardFor(Card3DSDeclined); !ok || !c.DeclineOn3DS {
		t.Errorf("3DS-declined card: %+v", c)
	}
}

const goodFile = `scenarios:
  - name: slow-success
    steps:
      - after: 30s
        do: complete
  - name: big-euro-fails
    match:
      amount: 13.37
      currency: EUR
    steps:
      - {after: 0s, do: fail}
  - name: vip
    match: {email: vip@example.com}
    steps: [{after: 2m, do: complete}]
  - name: card-expire
    match: {card: "4000000000000077"}
    steps: [{after: 1h, do: expire}]
`

func TestSelect_FileScenarios(t *testing.T) {
	set, err := ParseScenarios("s.yaml", []byte(goodFile))
	if err != nil {
		t.Fatal(err)
	}
	amt := paymock.Amount(1337)
	tests := []struct {
		name string
		p    paymock.Payment
		tr   Trigger
		want string
	}{
		{"by metadata name", paymock.Payment{}, Trigger{MetadataScenario: "slow-success"}, "slow-success"},
		{"by amount and currency", paymock.Payment{Amount: amt, Currency: paymock.EUR}, Trigger{}, "big-euro-fails"},
		{"amount alone is not enough", paymock.Payment{Amount: amt, Currency: paymock.USD}, Trigger{}, ""},
		{"by email, any case", paymock.Payment{Customer: paymock.Customer{Email: "VIP@example.com"}}, Trigger{}, "vip"},
		{"by card", paymock.Payment{}, Trigger{CardNumber: "4000000000000077"}, "card-expire"},
		{"metadata wins over match", paymock.Payment{Amount: amt, Currency: paymock.EUR}, Trigger{MetadataScenario: "vip"}, "vip"},
		{"file beats test card", paymock.Payment{Customer: paymock.Customer{Email: "vip@example.com"}}, Trigger{CardNumber: CardDeclinedAtOnce}, "vip"},
		{"nothing matches", paymock.Payment{Amount: 1}, Trigger{}, ""},
	}
	for _, tc := range tests {
		sc, ok := set.Select(tc.p, tc.tr)
		if got := map[bool]string{true: sc.Name}[ok]; got != tc.want {
			t.Errorf("%s: got %q want %q", tc.name, got, tc.want)
		}
	}
	if sc, _ := set.Select(paymock.Payment{}, Trigger{MetadataScenario: "slow-success"}); sc.Source != "s.yaml:2" {
		t.Errorf("source %q", sc.Source)
	}
}

func TestParse_RefusesBadFilesWithLine(t *testing.T) {
	tests := []struct {
		name, file string
		line       int
		reason     string
	}{
		{"bad action", "scenarios:\n  - name: x\n    steps:\n      - after: 1s\n        do: completed\n", 5, "want complete, fail or expire"},
		{"bad duration", "scenarios:\n  - name: x\n    steps:\n      - after: soon\n        do: fail\n", 4, "want a duration"},
		{"negative duration", "scenarios:\n  - name: x\n    steps:\n      - after: -1s\n        do: fail\n", 4, "want a duration"},
		{"missing after", "scenarios:\n  - name: x\n    steps:\n      - do: fail\n", 4, "after is required"},
		{"no steps", "scenarios:\n  - name: x\n", 2, "at least one step"},
		{"no name", "scenarios:\n  - steps: [{after: 1s, do: fail}]\n", 2, "name is required"},
		{"unknown field", "scenarios:\n  - name: x\n    stepz: []\n", 3, "stepz"},
		{"duplicate name", "scenarios:\n  - name: x\n    steps: [{after: 1s, do: fail}]\n  - name: x\n    steps: [{after: 1s, do: fail}]\n", 4, "used by another scenario"},
		{"built-in name", "scenarios:\n  - name: complete_after_5s\n    steps: [{after: 1s, do: fail}]\n", 2, "built-in"},
		{"bad amount", "scenarios:\n  - name: x\n    match:\n      amount: 1.234\n    steps: [{after: 1s, do: fail}]\n", 4, "two decimals"},
		{"bad currency", "scenarios:\n  - name: x\n    match: {currency: JPY}\n    steps: [{after: 1s, do: fail}]\n", 3, "currency"},
		{"bad card", "scenarios:\n  - name: x\n    match: {card: \"1234\"}\n    steps: [{after: 1s, do: fail}]\n", 3, "Luhn"},
		{"empty match", "scenarios:\n  - name: x\n    match: {}\n    steps: [{after: 1s, do: fail}]\n", 3, "at least one of"},
		{"not YAML", "scenarios: [\n", 1, "did not find expected node content"},
		{"empty file", "", 1, "no scenarios"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenarios("bad.yaml", []byte(tc.file))
			all := []error{err}
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				all = joined.Unwrap()
			}
			found := false
			for _, e := range all {
				var fe *FileError
				if !errors.As(e, &fe) {
					t.Fatalf("error %v is not a FileError", e)
				}
				found = found || fe.File == "bad.yaml" && fe.Line == tc.line && strings.Contains(fe.Reason, tc.reason)
			}
			if !found {
				t.Errorf("got %v, want one at line %d with %q", err, tc.line, tc.reason)
			}
		})
	}
}

func TestParseScenarios_ErrorsReadInTheUsersWords(t *testing.T) {
	const steps = "    steps: [{after: 1s, do: fail}]\n"
	tests := []struct {
		name, file, want string
	}{
		{"unknown field in a scenario",
			"scenarios:\n  - name: x\n" + steps + "    colour: red\n",
			`bad.yaml:4: unknown field "colour" in a scenario (want name, match, steps)`},
		{"unknown field in a match",
			"scenarios:\n  - name: x\n    match: {currency: EUR, colour: red}\n" + steps,
			`bad.yaml:3: unknown field "colour" in a match (want amount, currency, email, card)`},
		{"unknown field in a step",
			"scenarios:\n  - name: x\n    steps:\n      - {after: 1s, do: fail, wait: 2s}\n",
			`bad.yaml:4: unknown field "wait" in a step (want after, do)`},
		{"unknown field at the top level",
			"scenario:\n  - name: x\n" + steps,
			`bad.yaml:1: unknown field "scenario" in the top level (want scenarios)` + "\n" +
				`bad.yaml:1: no scenarios: the file must have a top-level 'scenarios:' list`},
		{"the top level is a list",
			"- name: x\n  steps: [{after: 1s, do: fail}]\n",
			`bad.yaml:1: want the top level, a mapping of scenarios; found a list`},
		{"scenarios is a mapping",
			"scenarios:\n  name: x\n",
			`bad.yaml:2: scenarios: want a list of scenarios, found a mapping`},
		{"a scenario is a string",
			"scenarios:\n  - slow-success\n",
			`bad.yaml:2: scenario 1: want a scenario, a mapping of name, match, steps; found "slow-success"`},
		{"name is a list",
			"scenarios:\n  - name: [x]\n" + steps,
			`bad.yaml:2: scenario 1: name: want a name of letters, digits, '-' and '_', found a list`},
		{"steps is a string",
			"scenarios:\n  - name: x\n    steps: soon\n",
			`bad.yaml:3: scenario "x": steps: want a list of steps such as - {after: 30s, do: complete}, found "soon"`},
		{"a step is a string",
			"scenarios:\n  - name: x\n    steps: [complete]\n",
			`bad.yaml:3: scenario "x": steps[0]: want a step, a mapping of after, do; found "complete"`},
		{"a field given twice",
			"scenarios:\n  - name: x\n" + steps + steps,
			`bad.yaml:4: scenario "x": steps is given twice`},
		{"match is a string",
			"scenarios:\n  - name: x\n    match: EUR\n" + steps,
			`bad.yaml:3: scenario "x": match: want a match, a mapping of amount, currency, email, card; found "EUR"`},
		{"amount is a mapping",
			"scenarios:\n  - name: x\n    match:\n      amount: {value: 1}\n" + steps,
			`bad.yaml:4: scenario "x": match.amount: want an amount such as 13.37, found a mapping`},
		{"every problem at once",
			"scenarios:\n  - name: x\n    colour: red\n  - name: y y\n" + steps + "  - steps: [{after: soon, do: finish}]\n",
			`bad.yaml:2: scenario "x": steps: at least one step is required` + "\n" +
				`bad.yaml:3: unknown field "colour" in a scenario (want name, match, steps)` + "\n" +
				`bad.yaml:4: scenario 2: name "y y": use letters, digits, '-' and '_' only` + "\n" +
				`bad.yaml:6: scenario 3: name is required` + "\n" +
				`bad.yaml:6: scenario 3: steps[0].after "soon": want a duration such as 0s, 30s or 2m` + "\n" +
				`bad.yaml:6: scenario 3: steps[0].do "finish": want complete, fail or expire`},
		{"a duplicate name among other mistakes, in line order",
			"scenarios:\n  - name: x\n    steps: [{after: 1s, do: finish}]\n  - name: y\n" + steps +
				"  - name: x\n    colour: red\n" + steps + "  - name: y\n    steps: []\n",
			`bad.yaml:3: scenario "x": steps[0].do "finish": want complete, fail or expire` + "\n" +
				`bad.yaml:6: scenario "x": the name is used by another scenario (bad.yaml:2)` + "\n" +
				`bad.yaml:7: unknown field "colour" in a scenario (want name, match, steps)` + "\n" +
				`bad.yaml:9: scenario "y": the name is used by another scenario (bad.yaml:4)` + "\n" +
				`bad.yaml:10: scenario "y": steps: at least one step is required`},
		{"a duplicate name among other mistakes, in line order",
			"scenarios:\n  - name: x\n    steps: [{after: 1s, do: finish}]\n  - name: y\n" + steps +
				"  - name: x\n    colour: red\n" + steps + "  - name: y\n    steps: []\n",
			`bad.yaml:3: scenario "x": steps[0].do "finish": want complete, fail or expire` + "\n" +
				`bad.yaml:6: scenario "x": the name is used by another scenario (bad.yaml:2)` + "\n" +
				`bad.yaml:7: unknown field "colour" in a scenario (want name, match, steps)` + "\n" +
				`bad.yaml:9: scenario "y": the name is used by another scenario (bad.yaml:4)` + "\n" +
				`bad.yaml:10: scenario "y": steps: at least one step is required`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenarios("bad.yaml", []byte(tc.file))
			if err == nil {
				t.Fatalf("the file was accepted, want\n%s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error =\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestLoad_ReadsAFolderInNameOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", "scenarios:\n  - name: second\n    match: {currency: EUR}\n    steps: [{after: 1s, do: fail}]\n")
	write("a.yml", "scenarios:\n  - name: first\n    match: {currency: EUR}\n    steps: [{after: 1s, do: complete}]\n")
	write("notes.txt", "not a scenario file")
	set, err := LoadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "first,second" {
		t.Errorf("names %s", got)
	}
	write("c.yaml", "scenarios:\n  - name: first\n    steps: [{after: 1s, do: fail}]\n")
	if _, err := LoadScenarios(dir); err == nil || !strings.Contains(err.Error(), "c.yaml:2") {
		t.Errorf("duplicate across files: %v", err)
	}
	// One run names the mistakes of every file, file by file.
	write("a.yml", "scenarios:\n  - name: first\n    steps: [{after: soon, do: complete}]\n")
	_, err = LoadScenarios(dir)
	want := filepath.Join(dir, "a.yml") + `:3: scenario "first": steps[0].after "soon": want a duration such as 0s, 30s or 2m` + "\n" +
		filepath.Join(dir, "c.yaml") + `:2: scenario "first": the name is used by another scenario (` + filepath.Join(dir, "a.yml") + `:2)`
	if err == nil || err.Error() != want {
		t.Errorf("mistakes of two files:\n%v\nwant\n%s", err, want)
	}
	if _, err := LoadScenarios(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("loaded a missing file")
	}
}

func TestLoad_ShippedExamplesAreValid(t *testing.T) {
	set, err := LoadScenarios("examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Names()) == 0 {
		t.Error("no example scenarios")
	}
}
