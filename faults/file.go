// Rule files (--faults FILE): a YAML list of rules for every merchant,
// refused at start with file:line on any error.

package faults

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	yaml "github.com/oasdiff/yaml3"
)

// FileError is a rule file refused at start, with where and why.
type FileError struct {
	File   string
	Line   int
	Reason string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// LoadFile reads a rule file: a YAML list whose items are rules with the
// fields of the control API. Operations are the operation ids rules may
// name (none given: DefaultOperations). Every problem is reported, each as
// a *FileError naming the file and line, joined with errors.Join. The rules
// come back normalized, with Source set to file:line and no ID (New gives
// them one).
func LoadFile(path string, operations ...string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return Parse(path, data, operations...)
}

// Parse is LoadFile for content already read; name is used in errors.
func Parse(name string, data []byte, operations ...string) ([]Rule, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	if len(root.Content) == 0 {
		return nil, &FileError{File: name, Line: 1, Reason: "no fault rules: the file must be a YAML list of rules"}
	}
	doc := root.Content[0]
	if doc.Kind != yaml.SequenceNode {
		return nil, &FileError{File: name, Line: doc.Line,
			Reason: "the file must be a YAML list of fault rules, each item starting with '- '"}
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{File: name, Line: doc.Line, Reason: "no fault rules: the list is empty"}
	}
	var ops []string
	if len(operations) > 0 {
		ops = operations
	}
	var rules []Rule
	var errs []error
	for i, item := range doc.Content {
		r, itemErrs := parseRule(name, i+1, item, ops)
		errs = append(errs, itemErrs...)
		rules = append(rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rules, nil
}

// ruleField is one field a rule file may give, decoded into the rule.
type ruleField struct {
	name string
	dest any
	want string
}

func ruleFields(r *Rule) []ruleField {
	return []ruleField{
		{"target", &r.Target, "api or webhooks"},
		{"operation", &r.Operation, "an operation id or *"},
		{"status", &r.Status, "a whole number"},
		{"retry_after", &r.RetryAfter, "a whole number of seconds"},
		{"delay_ms", &r.DelayMS, "a whole number of milliseconds"},
		{"reset", &r.Reset, "true or false"},
		{"when", &r.When, "before or after"},
		{"event_type", &r.EventType, "an event type"},
		{"duplicate", &r.Duplicate, "a whole number"},
		{"bad_signature", &r.BadSignature, "true or false"},
		{"timestamp_skew_s", &r.TimestampSkewS, "a whole number of seconds"},
		{"reorder", &r.Reorder, "true or false"},
		{"window_ms", &r.WindowMS, "a whole number of milliseconds"},
		{"unknown_type", &r.UnknownType, "true or false"},
		{"extra_fields", &r.ExtraFields, "true or false"},
		{"times", &r.Times, "a whole number"},
		{"probability", &r.Probability, "a number between 0 and 1"},
	}
}

func parseRule(file string, n int, item *yaml.Node, ops []string) (Rule, []error) {
	fail := func(line int, format string, args ...any) error {
		return &FileError{File: file, Line: line, Reason: fmt.Sprintf("fault rule %d: ", n) + fmt.Sprintf(format, args...)}
	}
	if item.Kind != yaml.MappingNode {
		return Rule{}, []error{fail(item.Line, "want a mapping of fields such as operation: createPayment and status: 503")}
	}
	var r Rule
	fields := ruleFields(&r)
	var names []string
	for _, f := range fields {
		names = append(names, f.name)
	}
	lines := map[string]int{}
	var errs []error
	for i := 0; i+1 < len(item.Content); i += 2 {
		key, val := item.Content[i], item.Content[i+1]
		if _, dup := lines[key.Value]; dup {
			errs = append(errs, fail(key.Line, "%s is given twice", key.Value))
			continue
		}
		lines[key.Value] = key.Line
		k := -1
		for j, f := range fields {
			if f.name == key.Value {
				k = j
			}
		}
		if k < 0 {
			errs = append(errs, &FileError{File: file, Line: key.Line,
				Reason: fmt.Sprintf("unknown field %q in a fault rule (want %s)", key.Value, strings.Join(names, ", "))})
			continue
		}
		if err := val.Decode(fields[k].dest); err != nil {
			errs = append(errs, fail(val.Line, "%s: want %s, found %s", key.Value, fields[k].want, describeNode(val)))
		}
	}
	if len(errs) > 0 {
		return Rule{}, errs
	}
	for _, v := range r.ValidateFor(ops) {
		line := item.Line
		if l, ok := lines[v.Param]; ok {
			line = l
		}
		errs = append(errs, fail(line, "%s", v.Message))
	}
	r.Source = file + ":" + strconv.Itoa(item.Line)
	return r.Normalize(), errs
}

// describeNode names what the file holds where a value did not fit.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!bool":
		return n.Value
	case "!!int", "!!float":
		return "the number " + n.Value
	}
	return strconv.Quote(clip(n.Value, 40))
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
