// Scripted scenarios: which payments get which outcome, and when. Built-in
// ones are always there; files add more.

package lifecycle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"gopkg.in/yaml.v3"
)

// Step is one outcome, due a while after the payment was created.
type Step struct {
	After time.Duration
	Do    paymock.Status // completed, failed or expired
}

// Match selects payments at creation; every field given must agree.
type Match struct {
	Amount   *paymock.Amount
	Currency paymock.Currency
	Email    string
	Card     string
}

// Scenario is a named script of steps for the payments it matches.
type Scenario struct {
	Name   string
	Match  *Match // nil: selected only by metadata.scenario
	Steps  []Step
	Source string // "file:line" for scenarios from files, "built-in" otherwise
}

// Trigger is what a new payment offers to scenario matching: the
// metadata.scenario value and the card number, which is never stored.
type Trigger struct {
	MetadataScenario string
	CardNumber       string
}

// String keeps the card number out of logs.
func (t Trigger) String() string { return fmt.Sprintf("trigger{scenario=%q}", t.MetadataScenario) }

var actions = map[string]paymock.Status{
	"complete": paymock.StatusCompleted,
	"fail":     paymock.StatusFailed,
	"expire":   paymock.StatusExpired,
}

// builtin reads the built-in names: complete, fail, expire, and their
// delayed forms such as complete_after_5s, fail_after_2m, expire_after_1h.
var builtin = regexp.MustCompile(`^(complete|fail|expire)(?:_after_([0-9]+)(ms|s|m|h))?$`)

func builtinScenario(name string) (Scenario, bool) {
	m := builtin.FindStringSubmatch(name)
	if m == nil {
		return Scenario{}, false
	}
	var after time.Duration
	if m[2] != "" {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return Scenario{}, false
		}
		d, err := time.ParseDuration(strconv.Itoa(n) + m[3])
		if err != nil {
			return Scenario{}, false
		}
		after = d
	}
	return Scenario{Name: name, Steps: []Step{{After: after, Do: actions[m[1]]}}, Source: "built-in"}, true
}

// Test cards: numbers that select an outcome the way test cards do at
// other providers. Every one of them passes the Luhn check.
const (
	Card3DSSucceeds    = "4000000000003220" // 3DS page: approve completes, decline fails
	Card3DSDeclined    = "4000008400001629" // 3DS page: declined whatever the customer does
	CardDeclinedAtOnce = "4000000000000002" // fails right after creation, no 3DS
)

// CardOutcome describes a test card for the docs and the 3DS page.
type CardOutcome struct {
	Number      string
	Description string
	// DeclineOn3DS: the 3DS page fails the payment even on approve.
	DeclineOn3DS bool
	// Scenario runs at creation, when set.
	Scenario *Scenario
}

// Cards is the test-card table.
var Cards = []CardOutcome{
	{Number: "4242424242424242", Description: "succeeds: the 3DS page completes on approve, fails on decline"},
	{Number: Card3DSSucceeds, Description: "3DS required, succeeds: approve completes, decline fails"},
	{Number: Card3DSDeclined, Description: "3DS required, declined: the payment fails whatever the customer chooses", DeclineOn3DS: true},
	{Number: CardDeclinedAtOnce, Description: "declined at once: the payment fails right after creation",
		Scenario: &Scenario{Name: "card_declined", Steps: []Step{{After: 0, Do: paymock.StatusFailed}}, Source: "test card"}},
}

// CardFor returns the table row of a card number, if it has one.
func CardFor(number string) (CardOutcome, bool) {
	for _, c := range Cards {
		if c.Number == number {
			return c, true
		}
	}
	return CardOutcome{}, false
}

// Set is every scenario the server knows: files' ones in order, then the
// built-ins.
type Scenarios struct {
	scenarios []Scenario
	byName    map[string]int
}

// Select picks the scenario of a new payment, if any: metadata.scenario
// first (a file's name or a built-in), then the first file scenario whose
// match agrees, then the test-card table.
func (s *Scenarios) Select(p paymock.Payment, t Trigger) (Scenario, bool) {
	if t.MetadataScenario != "" {
		if s != nil {
			if i, ok := s.byName[t.MetadataScenario]; ok {
				return s.scenarios[i], true
			}
		}
		if sc, ok := builtinScenario(t.MetadataScenario); ok {
			return sc, true
		}
	}
	if s != nil {
		for _, sc := range s.scenarios {
			if sc.Match != nil && sc.Match.matches(p, t) {
				return sc, true
			}
		}
	}
	if c, ok := CardFor(t.CardNumber); ok && c.Scenario != nil {
		return *c.Scenario, true
	}
	return Scenario{}, false
}

func (m *Match) matches(p paymock.Payment, t Trigger) bool {
	return (m.Amount == nil || *m.Amount == p.Amount) &&
		(m.Currency == "" || m.Currency == p.Currency) &&
		(m.Email == "" || strings.EqualFold(m.Email, p.Customer.Email)) &&
		(m.Card == "" || m.Card == t.CardNumber)
}

// Names lists the scenarios from files, in order.
func (s *Scenarios) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.scenarios))
	for i, sc := range s.scenarios {
		names[i] = sc.Name
	}
	return names
}

// fileFormat is a scenario file: see scenarios/README or the project README.
type fileFormat struct {
	Scenarios []struct {
		Name  string `yaml:"name"`
		Match *struct {
			Amount   yaml.Node `yaml:"amount"`
			Currency string    `yaml:"currency"`
			Email    string    `yaml:"email"`
			Card     string    `yaml:"card"`
		} `yaml:"match"`
		Steps []struct {
			After yaml.Node `yaml:"after"`
			Do    yaml.Node `yaml:"do"`
		} `yaml:"steps"`
		Line int `yaml:"-"`
	} `yaml:"scenarios"`
}

// FileError is a scenario file refused at start, with where and why.
type FileError struct {
	File   string
	Line   int
	Reason string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// Load reads a scenario file, or every *.yaml / *.yml file of a folder in
// name order. Any error names the file and line.
func LoadScenarios(path string) (*Scenarios, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	files := []string{path}
	if info.IsDir() {
		files = nil
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("scenarios: %w", err)
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		slices.Sort(files)
	}
	set := &Scenarios{byName: map[string]int{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("scenarios: %w", err)
		}
		if err := set.parse(f, data); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// Parse reads one scenario file's content; name is used in errors.
func ParseScenarios(name string, data []byte) (*Scenarios, error) {
	set := &Scenarios{byName: map[string]int{}}
	if err := set.parse(name, data); err != nil {
		return nil, err
	}
	return set, nil
}

var yamlLine = regexp.MustCompile(`line ([0-9]+): (.*)`)

func (s *Scenarios) parse(file string, data []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return yamlError(file, err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var ff fileFormat
	if err := dec.Decode(&ff); err != nil && !errors.Is(err, io.EOF) {
		return yamlError(file, err)
	}
	lines := scenarioLines(&root)
	if len(ff.Scenarios) == 0 {
		return &FileError{File: file, Line: 1, Reason: "no scenarios: the file must have a top-level 'scenarios:' list"}
	}
	for i, raw := range ff.Scenarios {
		line := 1
		if i < len(lines) {
			line = lines[i]
		}
		fail := func(l int, format string, args ...any) error {
			if l == 0 {
				l = line
			}
			return &FileError{File: file, Line: l, Reason: fmt.Sprintf("scenario %d: ", i+1) + fmt.Sprintf(format, args...)}
		}
		sc := Scenario{Name: raw.Name, Source: fmt.Sprintf("%s:%d", file, line)}
		switch {
		case raw.Name == "":
			return fail(0, "name is required")
		case !validName(raw.Name):
			return fail(0, "name %q: use letters, digits, '-' and '_' only", raw.Name)
		}
		if _, dup := s.byName[raw.Name]; dup {
			return fail(0, "name %q is used by another scenario (%s)", raw.Name, s.scenarios[s.byName[raw.Name]].Source)
		}
		if _, ok := builtinScenario(raw.Name); ok {
			return fail(0, "name %q is a built-in scenario", raw.Name)
		}
		if m := raw.Match; m != nil {
			sc.Match = &Match{Currency: paymock.Currency(m.Currency), Email: m.Email, Card: m.Card}
			if m.Amount.Kind != 0 {
				a, err := paymock.ParseAmount(m.Amount.Value)
				if err != nil {
					return fail(m.Amount.Line, "match.amount %q %v", m.Amount.Value, err)
				}
				sc.Match.Amount = &a
			}
			if m.Currency != "" && !sc.Match.Currency.Valid() {
				return fail(0, "match.currency %q: must be one of USD, EUR, GBP, CAD", m.Currency)
			}
			if m.Email != "" && !paymock.ValidEmail(m.Email) {
				return fail(0, "match.email %q is not a valid email address", m.Email)
			}
			if m.Card != "" && !paymock.Luhn(m.Card) {
				return fail(0, "match.card is not a Luhn-valid card number")
			}
			if *sc.Match == (Match{}) {
				return fail(0, "match needs at least one of amount, currency, email, card")
			}
		}
		if len(raw.Steps) == 0 {
			return fail(0, "steps: at least one step is required")
		}
		for j, st := range raw.Steps {
			d, err := time.ParseDuration(st.After.Value)
			if st.After.Value == "" {
				return fail(0, "steps[%d].after is required (a duration such as 0s, 30s or 2m)", j)
			}
			if err != nil || d < 0 {
				return fail(st.After.Line, "steps[%d].after %q: want a duration such as 0s, 30s or 2m", j, st.After.Value)
			}
			to, ok := actions[st.Do.Value]
			if !ok {
				return fail(st.Do.Line, "steps[%d].do %q: want complete, fail or expire", j, st.Do.Value)
			}
			sc.Steps = append(sc.Steps, Step{After: d, Do: to})
		}
		s.byName[sc.Name] = len(s.scenarios)
		s.scenarios = append(s.scenarios, sc)
	}
	return nil
}

func validName(n string) bool {
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// scenarioLines finds the line of each item of the top-level scenarios list.
func scenarioLines(root *yaml.Node) []int {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "scenarios" && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, item := range m.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

func yamlError(file string, err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FileError{File: file, Line: line, Reason: m[2]}
	}
	return &FileError{File: file, Line: 1, Reason: strings.TrimPrefix(msg, "yaml: ")}
}
