// The report of a run: contract violations, then drift, then the paymock
// settings that come closest; as text, JSON or JUnit XML.

package verify

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/paymock/paymock/contract"
)

// Drift is an open point where the deployment answered otherwise than
// paymock.
type Drift struct {
	Point      string `json:"point"`
	Topic      string `json:"topic"`
	Paymock    string `json:"paymock"`
	Deployment string `json:"deployment"`
	// Variant is the --variants setting that makes paymock answer as the
	// deployment did; "" when none does.
	Variant string `json:"variant,omitempty"`
}

// Unobserved is an open point the run could not compare.
type Unobserved struct {
	Point string `json:"point"`
	Topic string `json:"topic"`
	Needs string `json:"needs"`
}

// Settings are the paymock settings that bring the twin closest.
type Settings struct {
	// Variants is the --variants value to run paymock with; "" when the
	// run compared none of the points a setting changes (NotCompared).
	Variants string `json:"variants"`
	// NotCompared are the points a setting changes that the run saw
	// nothing to compare on, when it compared none of them.
	NotCompared []string `json:"not_compared,omitempty"`
	// Unmatched are the drifting points no setting changes.
	Unmatched []string `json:"unmatched"`
}

// Report is what a run found.
type Report struct {
	RunID  string `json:"run_id"`
	Target string `json:"target"`
	Notice string `json:"notice"`
	// Problems are checks that got no usable answer; the first one may
	// have stopped the run. The report is then partial.
	Problems   []string     `json:"problems"`
	Checks     []*Exchange  `json:"checks"`
	Skipped    []Skip       `json:"skipped"`
	Violations []Violation  `json:"violations"`
	Drift      []Drift      `json:"drift"`
	Unobserved []Unobserved `json:"not_compared"`
	Settings   Settings     `json:"settings"`
	Webhooks   string       `json:"webhooks"`
}

// Failed reports whether the run found anything: a problem, a violation
// or drift.
func (r *Report) Failed() bool {
	return len(r.Problems) > 0 || len(r.Violations) > 0 || len(r.Drift) > 0
}

// compare fills drift, the points not compared, and the settings.
func (r *Report) compare(pm, dep *observations) {
	variants := map[string]bool{}
	var settable, settableUnseen []string
	for _, p := range Points() {
		a, b := p.answers(pm, dep)
		if p.suggest != nil {
			settable = append(settable, p.ID)
		}
		if a == "" || b == "" {
			r.Unobserved = append(r.Unobserved, Unobserved{Point: p.ID, Topic: p.Topic, Needs: p.Needs})
			if p.suggest != nil {
				settableUnseen = append(settableUnseen, p.ID)
			}
			continue
		}
		if a == b {
			continue
		}
		d := Drift{Point: p.ID, Topic: p.Topic, Paymock: a, Deployment: b}
		if p.suggest != nil {
			d.Variant = p.suggest(a, b)
		}
		if d.Variant != "" {
			variants[d.Variant] = true
		} else {
			r.Settings.Unmatched = append(r.Settings.Unmatched, p.ID)
		}
		r.Drift = append(r.Drift, d)
	}
	switch {
	// "default" would claim paymock's forms match a deployment whose
	// forms the run never saw (one that stopped at its first check).
	case len(settableUnseen) == len(settable):
		r.Settings.NotCompared = settableUnseen
	case variants["all"]:
		r.Settings.Variants = "all"
	case len(variants) == 0:
		r.Settings.Variants = "default"
	default:
		var vs []string
		for v := range variants {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		r.Settings.Variants = strings.Join(vs, ",")
	}
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	// The command leaves the notice out of a report on the terminal
	// that showed it on stderr before the run.
	if r.Notice != "" {
		fmt.Fprintln(&b, r.Notice)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(&b, "problems (the report below is partial):")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	fmt.Fprintf(&b, "checks: %d run, %d left out\n", len(r.Checks), len(r.Skipped))
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  left out %s: %s\n", s.Check, s.Reason)
	}
	fmt.Fprintf(&b, "\ncontract violations: %d\n", len(r.Violations))
	for _, g := range groupViolations(r.Violations) {
		v := g.Violation
		where := v.Param
		if where == "" {
			where = "(answer)"
		}
		times := ""
		if g.count > 1 {
			times = fmt.Sprintf(" (%d×)", g.count)
		}
		fmt.Fprintf(&b, "  %s: %s %s -> %d: %s %s: %s%s\n", v.Check, v.Method, v.Path, v.Status, where, v.Code, v.Message, times)
	}
	fmt.Fprintf(&b, "\ndrift: %d\n", len(r.Drift))
	if len(r.Drift) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  POINT\tPAYMOCK\tDEPLOYMENT")
		for _, d := range r.Drift {
			pm, dep := wrapList(d.Paymock, driftCellWidth), wrapList(d.Deployment, driftCellWidth)
			for i := range max(len(pm), len(dep)) {
				point := ""
				if i == 0 {
					point = d.Point
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", point, at(pm, i), at(dep, i))
			}
		}
		tw.Flush()
	}
	if len(r.Unobserved) > 0 {
		var ids []string
		for _, u := range r.Unobserved {
			ids = append(ids, u.Point)
		}
		fmt.Fprintf(&b, "not compared (nothing to compare on one side): %s\n", strings.Join(ids, ", "))
	}
	if r.Settings.Variants == "" {
		fmt.Fprintf(&b, "\nclosest paymock: not known: the run compared none of the points a setting changes (%s)\n",
			strings.Join(r.Settings.NotCompared, ", "))
	} else {
		fmt.Fprintf(&b, "\nclosest paymock: --variants %s\n", r.Settings.Variants)
	}
	if len(r.Settings.Unmatched) > 0 {
		fmt.Fprintf(&b, "  no setting changes: %s\n", strings.Join(r.Settings.Unmatched, ", "))
	}
	fmt.Fprintf(&b, "webhooks: %s\n", r.Webhooks)
	_, err := io.WriteString(w, b.String())
	return err
}

// driftCellWidth is where the text report wraps an answer of the drift
// table: a list of header names or fields, one per line, would
// otherwise push the deployment's column off a terminal.
const driftCellWidth = 40

// wrapList cuts s after the ", " of a list into lines of at most width
// bytes; an item longer than width is a line of its own.
func wrapList(s string, width int) []string {
	var lines []string
	line := ""
	for item := range strings.SplitAfterSeq(s, ", ") {
		if line != "" && len(line)+len(strings.TrimSuffix(item, " ")) > width {
			lines = append(lines, strings.TrimSuffix(line, " "))
			line = ""
		}
		line += item
	}
	return append(lines, line)
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	cp := *r
	for _, s := range []*[]string{&cp.Problems, &cp.Settings.Unmatched} {
		if *s == nil {
			*s = []string{}
		}
	}
	if cp.Checks == nil {
		cp.Checks = []*Exchange{}
	}
	if cp.Skipped == nil {
		cp.Skipped = []Skip{}
	}
	if cp.Violations == nil {
		cp.Violations = []Violation{}
	}
	if cp.Drift == nil {
		cp.Drift = []Drift{}
	}
	if cp.Unobserved == nil {
		cp.Unobserved = []Unobserved{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(cp)
}

// JUnit XML: a suite of the checks (a failure per violation) and a suite
// of the open points (a failure per drift, skipped when not compared).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Failures  []junitFailure `xml:"failure"`
	Skipped   *junitSkipped  `xml:"skipped"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	checks := junitSuite{Name: "paymock verify contract"}
	for _, p := range r.Problems {
		checks.Cases = append(checks.Cases, junitCase{Name: "run", ClassName: "paymock.verify",
			Failures: []junitFailure{{Message: "a check got no usable answer", Type: "problem", Text: p}}})
	}
	for _, x := range r.Checks {
		// Named by check and operation, never by the payment the run
		// made: a nightly job's history would see new tests every night.
		// The request itself is the case's output.
		tc := junitCase{Name: x.Check + " " + operationOf(x.Method, x.Path), ClassName: "paymock.verify.contract",
			SystemOut: x.Method + " " + x.Path}
		if x.Error != "" {
			tc.Failures = append(tc.Failures, junitFailure{Message: "no answer", Type: "problem", Text: x.Error})
		}
		for _, v := range r.Violations {
			if v.Check == x.Check {
				tc.Failures = append(tc.Failures, junitFailure{Message: strings.TrimPrefix(v.Param+": "+v.Code, ": "), Type: v.Code, Text: v.Message})
			}
		}
		checks.Cases = append(checks.Cases, tc)
	}
	for _, s := range r.Skipped {
		checks.Cases = append(checks.Cases, junitCase{Name: s.Check, ClassName: "paymock.verify.contract", Skipped: &junitSkipped{Message: s.Reason}})
	}
	points := junitSuite{Name: "paymock verify drift"}
	for _, p := range Points() {
		tc := junitCase{Name: p.ID + ": " + p.Topic, ClassName: "paymock.verify.drift"}
		for _, d := range r.Drift {
			if d.Point == p.ID {
				msg := "paymock: " + d.Paymock + "; deployment: " + d.Deployment
				if d.Variant != "" {
					msg += "; paymock --variants " + d.Variant + " answers as the deployment"
				}
				tc.Failures = append(tc.Failures, junitFailure{Message: "drift", Type: "drift", Text: msg})
			}
		}
		for _, u := range r.Unobserved {
			if u.Point == p.ID {
				tc.Skipped = &junitSkipped{Message: "not compared: needs " + u.Needs}
			}
		}
		points.Cases = append(points.Cases, tc)
	}
	doc := junitSuites{Name: "paymock verify"}
	for _, s := range []*junitSuite{&checks, &points} {
		for _, c := range s.Cases {
			s.Tests++
			if len(c.Failures) > 0 {
				s.Failures++
			}
			if c.Skipped != nil {
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, *s)
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err = io.WriteString(w, xml.Header+string(out)+"\n")
	return err
}

// PointsMarkdown is the table of open points as docs/verify.md shows it.
func PointsMarkdown() string {
	var b strings.Builder
	b.WriteString("| point | compared | the spec | compared when the run saw | `--variants` |\n|---|---|---|---|---|\n")
	for _, p := range Points() {
		v := "none"
		if p.Variant != "" {
			v = "`" + p.Variant + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", p.ID, p.Topic, p.Spec, p.Needs, v)
	}
	return b.String()
}

// violationGroup is one line of the text report: the violations of one
// answer that differ only in the index of a list item.
type violationGroup struct {
	Violation
	count int
}

// groupViolations folds violations that differ only in list indices
// (items.0.created_at, items.1.created_at...) into one, items.*.created_at,
// in the order they first appear: a deployment that gets one field of a
// payment wrong gets it wrong in every item of every list, and a hundred
// lines of it would bury the drift below. The JSON and JUnit reports keep
// every violation.
func groupViolations(vs []Violation) []violationGroup {
	var out []violationGroup
	at := map[Violation]int{}
	for _, v := range vs {
		if p := starIndices(v.Param); p != v.Param {
			v.Message = strings.ReplaceAll(v.Message, v.Param, p)
			v.Param = p
		}
		if i, ok := at[v]; ok {
			out[i].count++
			continue
		}
		at[v] = len(out)
		out = append(out, violationGroup{Violation: v, count: 1})
	}
	return out
}

// starIndices writes each numeric segment of a dotted path as "*".
func starIndices(param string) string {
	segs := strings.Split(param, ".")
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, ".")
}

// operationOf names the operation of openapi.yaml a request path is of,
// as "GET /api/v1/payments/{id}"; a path of none is kept as sent.
func operationOf(method, path string) string {
	docs, err := contract.Embedded()
	if err != nil {
		return method + " " + path
	}
	r, err := http.NewRequest(method, path, nil)
	if err != nil {
		return method + " " + path
	}
	rt, err := docs.Service.Match(r)
	if err != nil {
		return method + " " + path
	}
	for _, op := range docs.Service.Operations() {
		if op.ID == rt.OperationID() {
			return op.Method + " " + op.Path
		}
	}
	return method + " " + path
}
