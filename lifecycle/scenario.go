// Scripted scenarios: which payments get which outcome, and when. Built-in
// ones are always there; files add more.

package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "github.com/oasdiff/yaml3"
	"github.com/paymock/paymock"
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

// Scenarios is every scenario the server knows: files' ones in order, then the
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

// FileError is a scenario file refused at start, with where and why.
type FileError struct {
	File   string
	Line   int
	Reason string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// LoadScenarios reads a scenario file, or every *.yaml / *.yml file of a
// folder in name order. Every problem of a file is reported, each as a
// *FileError naming the file and line, joined with errors.Join.
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
	claimed := map[string]string{}
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("scenarios: %w", err)
		}
		// Every file is read, whatever the ones before it held, so that one
		// run shows every mistake of the folder.
		if err := set.parse(f, data, claimed); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// ParseScenarios reads one scenario file's content; name is used in errors.
func ParseScenarios(name string, data []byte) (*Scenarios, error) {
	set := &Scenarios{byName: map[string]int{}}
	if err := set.parse(name, data, map[string]string{}); err != nil {
		return nil, err
	}
	return set, nil
}

// The fields of each mapping of a scenario file, in the order the
// messages list them.
var (
	topFields      = []string{"scenarios"}
	scenarioFields = []string{"name", "match", "steps"}
	matchFields    = []string{"amount", "currency", "email", "card"}
	stepFields     = []string{"after", "do"}
)

// fileParser collects every problem of one scenario file.
type fileParser struct {
	file string
	errs []error
}

func (fp *fileParser) fail(line int, format string, args ...any) {
	fp.errs = append(fp.errs, &FileError{File: fp.file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// fields reads mapping n (what names it in messages: "a scenario") and
// returns its values by key. Unknown and repeated keys are reported, in
// the user's words rather than the YAML library's Go types. ok is false
// when n is not a mapping at all.
func (fp *fileParser) fields(n *yaml.Node, what, prefix string, known []string) (map[string]*yaml.Node, bool) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		fp.fail(n.Line, "%swant %s, a mapping of %s; found %s", prefix, what, strings.Join(known, ", "), describe(n))
		return nil, false
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], resolve(n.Content[i+1])
		switch {
		case !slices.Contains(known, key.Value):
			fp.fail(key.Line, "unknown field %q in %s (want %s)", key.Value, what, strings.Join(known, ", "))
		case out[key.Value] != nil:
			fp.fail(key.Line, "%s%s is given twice", prefix, key.Value)
		default:
			out[key.Value] = val
		}
	}
	return out, true
}

// text is the value of scalar n, or reports that n is not one.
func (fp *fileParser) text(n *yaml.Node, prefix, field, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		fp.fail(n.Line, "%s%s: want %s, found %s", prefix, field, want, describe(n))
		return "", false
	}
	return n.Value, true
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names what a file holds where something else was wanted.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	v := n.Value
	if r := []rune(v); len(r) > 40 {
		v = string(r[:40]) + "..."
	}
	return strconv.Quote(v)
}

// parse adds the scenarios of one file to s. claimed holds the names
// given so far, with where, by the files read before too: a name a
// refused scenario gave is still taken.
func (s *Scenarios) parse(file string, data []byte, claimed map[string]string) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return yamlError(file, err)
	}
	const noScenarios = "no scenarios: the file must have a top-level 'scenarios:' list"
	if len(root.Content) == 0 {
		return &FileError{File: file, Line: 1, Reason: noScenarios}
	}
	fp := &fileParser{file: file}
	top, ok := fp.fields(root.Content[0], "the top level", "", topFields)
	if !ok {
		return errors.Join(fp.errs...)
	}
	list := top["scenarios"]
	switch {
	case list == nil:
		fp.fail(root.Content[0].Line, noScenarios)
	case list.Kind != yaml.SequenceNode:
		fp.fail(list.Line, "scenarios: want a list of scenarios, found %s", describe(list))
	case len(list.Content) == 0:
		fp.fail(list.Line, "no scenarios: the scenarios list is empty")
	}
	if len(fp.errs) > 0 {
		return errors.Join(fp.errs...)
	}
	// Names are checked for duplicates whether or not the rest of their
	// scenario is right, so a duplicate is named in the same run as the
	// other mistakes.
	for i, item := range list.Content {
		sc, ok := fp.scenario(i, resolve(item))
		if sc.Name == "" || !validName(sc.Name) {
			continue
		}
		if _, builtIn := builtinScenario(sc.Name); builtIn {
			continue // reported as such
		}
		if other, dup := claimed[sc.Name]; dup {
			fp.fail(resolve(item).Line, "scenario %q: the name is used by another scenario (%s)", sc.Name, other)
			continue
		}
		claimed[sc.Name] = sc.Source
		if ok {
			s.byName[sc.Name] = len(s.scenarios)
			s.scenarios = append(s.scenarios, sc)
		}
	}
	return fp.joined()
}

// joined is every problem found, in line order (the order they are found
// in follows the file's structure, not its lines: a scenario's missing
// steps are noticed after its other fields). Problems on one line keep
// the order they were found in.
func (fp *fileParser) joined() error {
	slices.SortStableFunc(fp.errs, func(a, b error) int {
		var fa, fb *FileError
		if !errors.As(a, &fa) || !errors.As(b, &fb) {
			return 0
		}
		return fa.Line - fb.Line
	})
	return errors.Join(fp.errs...)
}

// scenario reads the i-th item of the scenarios list. ok is false when
// anything in it was wrong (and reported).
func (fp *fileParser) scenario(i int, item *yaml.Node) (Scenario, bool) {
	before := len(fp.errs)
	prefix := fmt.Sprintf("scenario %d: ", i+1)
	if name := nameOf(item); name != "" && validName(name) {
		prefix = fmt.Sprintf("scenario %q: ", name)
	}
	f, ok := fp.fields(item, "a scenario", prefix, scenarioFields)
	if !ok {
		return Scenario{}, false
	}
	sc := Scenario{Source: fmt.Sprintf("%s:%d", fp.file, item.Line)}
	if n := f["name"]; n == nil {
		fp.fail(item.Line, "%sname is required", prefix)
	} else if name, ok := fp.text(n, prefix, "name", "a name of letters, digits, '-' and '_'"); ok {
		switch {
		case name == "":
			fp.fail(n.Line, "%sname is required", prefix)
		case !validName(name):
			fp.fail(n.Line, "%sname %q: use letters, digits, '-' and '_' only", prefix, name)
		default:
			if _, builtIn := builtinScenario(name); builtIn {
				fp.fail(n.Line, "%sname %q is a built-in scenario", prefix, name)
			}
		}
		sc.Name = name
	}
	if n := f["match"]; n != nil {
		sc.Match = fp.match(n, prefix)
	}
	steps := f["steps"]
	switch {
	case steps == nil:
		fp.fail(item.Line, "%ssteps: at least one step is required", prefix)
	case steps.Kind != yaml.SequenceNode:
		fp.fail(steps.Line, "%ssteps: want a list of steps such as - {after: 30s, do: complete}, found %s", prefix, describe(steps))
	case len(steps.Content) == 0:
		fp.fail(steps.Line, "%ssteps: at least one step is required", prefix)
	default:
		for j, st := range steps.Content {
			if step, ok := fp.step(resolve(st), j, prefix); ok {
				sc.Steps = append(sc.Steps, step)
			}
		}
	}
	return sc, len(fp.errs) == before
}

// nameOf is the name a scenario mapping gives itself, or "", so that
// messages can name the scenario rather than count it.
func nameOf(item *yaml.Node) string {
	if item.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if v := resolve(item.Content[i+1]); item.Content[i].Value == "name" && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

// match reads a scenario's match mapping; nil when it was wrong.
func (fp *fileParser) match(n *yaml.Node, prefix string) *Match {
	before := len(fp.errs)
	f, ok := fp.fields(n, "a match", prefix+"match: ", matchFields)
	if !ok {
		return nil
	}
	m := &Match{}
	if a := f["amount"]; a != nil {
		if v, ok := fp.text(a, prefix, "match.amount", "an amount such as 13.37"); ok {
			amt, err := paymock.ParseAmount(v)
			if err != nil {
				fp.fail(a.Line, "%smatch.amount %q %v", prefix, v, err)
			} else {
				m.Amount = &amt
			}
		}
	}
	if c := f["currency"]; c != nil {
		if v, ok := fp.text(c, prefix, "match.currency", "one of USD, EUR, GBP, CAD"); ok {
			m.Currency = paymock.Currency(v)
			if !m.Currency.Valid() {
				fp.fail(c.Line, "%smatch.currency %q: must be one of USD, EUR, GBP, CAD", prefix, v)
			}
		}
	}
	if e := f["email"]; e != nil {
		if v, ok := fp.text(e, prefix, "match.email", "an email address"); ok {
			m.Email = v
			if !paymock.ValidEmail(v) {
				fp.fail(e.Line, "%smatch.email %q is not a valid email address", prefix, v)
			}
		}
	}
	if c := f["card"]; c != nil {
		// Never quoted: it is a card number.
		if v, ok := fp.text(c, prefix, "match.card", "a card number in quotes"); ok {
			m.Card = v
			if !paymock.Luhn(v) {
				fp.fail(c.Line, "%smatch.card is not a Luhn-valid card number", prefix)
			}
		}
	}
	if len(fp.errs) > before {
		return nil
	}
	if *m == (Match{}) {
		fp.fail(n.Line, "%smatch needs at least one of amount, currency, email, card", prefix)
		return nil
	}
	return m
}

// step reads the j-th step of a scenario.
func (fp *fileParser) step(n *yaml.Node, j int, prefix string) (Step, bool) {
	before := len(fp.errs)
	where := fmt.Sprintf("steps[%d]", j)
	f, ok := fp.fields(n, "a step", prefix+where+": ", stepFields)
	if !ok {
		return Step{}, false
	}
	var st Step
	if a := f["after"]; a == nil {
		fp.fail(n.Line, "%s%s.after is required (a duration such as 0s, 30s or 2m)", prefix, where)
	} else if v, ok := fp.text(a, prefix, where+".after", "a duration such as 0s, 30s or 2m"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fp.fail(a.Line, "%s%s.after %q: want a duration such as 0s, 30s or 2m", prefix, where, v)
		}
		st.After = d
	}
	if d := f["do"]; d == nil {
		fp.fail(n.Line, "%s%s.do is required (complete, fail or expire)", prefix, where)
	} else if v, ok := fp.text(d, prefix, where+".do", "complete, fail or expire"); ok {
		to, known := actions[v]
		if !known {
			fp.fail(d.Line, "%s%s.do %q: want complete, fail or expire", prefix, where, v)
		}
		st.Do = to
	}
	return st, len(fp.errs) == before
}

func validName(n string) bool {
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// FileError at that line.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, reason, found := strings.Cut(rest, ": ")
		if line, convErr := strconv.Atoi(num); found && convErr == nil {
			return &FileError{File: file, Line: line, Reason: reason}
		}
	}
	return &FileError{File: file, Line: 1, Reason: msg}
}
