// The conformance report: per operation of the service contract, what the
// client exercised and where it broke the contract; as JSON or JUnit XML.

package mockserver

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
)

// ReportStatus is how often an operation answered one status.
type ReportStatus struct {
	Status   int  `json:"status"`
	Declared bool `json:"declared"`
	Count    int  `json:"count"`
}

// ReportViolation is one distinct violation and how often it was made.
type ReportViolation struct {
	// Side is who broke the contract, in a proxy's report: "client" (the
	// request) or "upstream" (the answer). A server's own report leaves
	// it out: there only the client can.
	Side    string `json:"side,omitempty"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// ReportOperation is what the client did with one operation.
type ReportOperation struct {
	OperationID    string         `json:"operation_id"`
	Method         string         `json:"method"`
	Path           string         `json:"path"`
	Calls          int            `json:"calls"`
	ViolatingCalls int            `json:"violating_calls"`
	Statuses       []ReportStatus `json:"statuses"`
	// Violations are the distinct violations of ViolatingCalls, at most
	// paymock.MaxDistinctViolations: the first made.
	Violations []ReportViolation `json:"violations"`
	// UnlistedViolations counts the violations of ViolatingCalls past
	// those: made, counted, and not told apart. ViolatingCalls counts
	// every violating call whatever this says.
	UnlistedViolations int `json:"unlisted_violations,omitempty"`
}

// ReportCoverage is how much of the contract the client exercised.
type ReportCoverage struct {
	Operations          float64 `json:"operations"`
	OperationsExercised int     `json:"operations_exercised"`
	OperationsTotal     int     `json:"operations_total"`
	Statuses            float64 `json:"statuses"`
	StatusesExercised   int     `json:"statuses_exercised"`
	StatusesTotal       int     `json:"statuses_total"`
}

// ReportUnmatched is how often the client called one path with one
// method the contract does not have (a route with a typo, the API's base
// URL pasted where the server's was wanted): violations of no operation.
type ReportUnmatched struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"` // 404 route_not_found or 405 method_not_allowed
	Code   string `json:"code"`
	// Message is the answer's, with its guess at the route meant.
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Report is the answer of GET /_sandbox/report, as `paymock report` reads it.
type Report struct {
	Calls          int `json:"calls"`
	ViolatingCalls int `json:"violating_calls"`
	// UnmatchedCalls are the violating calls that matched no operation,
	// so that no operation lists their violations: Unmatched does.
	UnmatchedCalls int `json:"unmatched_calls"`
	// Unmatched lists those of UnmatchedCalls the journal still holds, by
	// method and path, most frequent first, at most maxUnmatchedListed;
	// the rest (trimmed from the journal, or past the list's end) are
	// counted only.
	Unmatched []ReportUnmatched `json:"unmatched,omitempty"`
	// InjectedCalls are calls whose answer a fault the client asked for
	// replaced; they count nowhere else.
	InjectedCalls int               `json:"injected_calls"`
	Coverage      ReportCoverage    `json:"coverage"`
	Operations    []ReportOperation `json:"operations"`
}

// UnlistedUnmatched is how many of r's unmatched calls Unmatched does not
// list.
func (r Report) UnlistedUnmatched() int {
	n := r.UnmatchedCalls
	for _, u := range r.Unmatched {
		n -= u.Count
	}
	return max(n, 0)
}

// ResetStatus is the status a report counts a connection reset by a fault
// under: no answer at all, never one the contract declares.
const ResetStatus = 0

// CompareStatuses orders statuses as a report lists them: by number, a
// reset last.
func CompareStatuses(a, b int) int {
	switch {
	case a == b:
		return 0
	case a == ResetStatus:
		return 1
	case b == ResetStatus:
		return -1
	}
	return cmp.Compare(a, b)
}

// StatusText is a status as a report prints it: "201", or "reset".
func StatusText(status int) string {
	if status == ResetStatus {
		return "reset"
	}
	return strconv.Itoa(status)
}

// OperationCounts are the counters a report is made of for one operation,
// as the server's journal and the proxy's both keep them.
type OperationCounts struct {
	Calls, ViolatingCalls int
	Statuses              map[int]int // calls by the status answered
	// Violations counts each distinct violation; a key's Count is 0.
	Violations map[ReportViolation]int
	// Unlisted counts the violations not told apart (see
	// paymock.JournalCounts.Unlisted).
	Unlisted int
}

// NewOperationCounts returns counts with nothing counted yet.
func NewOperationCounts() *OperationCounts {
	return &OperationCounts{Statuses: map[int]int{}, Violations: map[ReportViolation]int{}}
}

// FillReport sets r's Operations and Coverage from counts, by operation
// id: one entry for each of ops (a contract's operations, in its order),
// exercised or not, with the declared statuses first counted and any other
// status seen after. An operation lists at most
// paymock.MaxDistinctViolations distinct violations, the most frequent
// when counts tell apart more (a proxy's do), and counts the others'
// among its unlisted ones: a violation names what the client sent, so
// the report, its JUnit form and the dashboard's page stay bounded
// however many a client makes up.
func FillReport(r *Report, ops []contract.Operation, counts map[string]*OperationCounts) {
	r.Operations = []ReportOperation{}
	for _, d := range ops {
		ro := ReportOperation{OperationID: d.ID, Method: d.Method, Path: d.Path, Statuses: []ReportStatus{}, Violations: []ReportViolation{}}
		oc := counts[d.ID]
		if oc == nil {
			oc = &OperationCounts{}
		}
		ro.Calls, ro.ViolatingCalls = oc.Calls, oc.ViolatingCalls
		r.Coverage.OperationsTotal++
		if oc.Calls > 0 {
			r.Coverage.OperationsExercised++
		}
		for _, st := range d.Statuses {
			ro.Statuses = append(ro.Statuses, ReportStatus{Status: st, Declared: true, Count: oc.Statuses[st]})
			r.Coverage.StatusesTotal++
			if oc.Statuses[st] > 0 {
				r.Coverage.StatusesExercised++
			}
		}
		for st, n := range oc.Statuses {
			if !slices.Contains(d.Statuses, st) {
				ro.Statuses = append(ro.Statuses, ReportStatus{Status: st, Count: n})
			}
		}
		slices.SortFunc(ro.Statuses, func(a, b ReportStatus) int { return CompareStatuses(a.Status, b.Status) })
		for v, n := range oc.Violations {
			v.Count = n
			ro.Violations = append(ro.Violations, v)
		}
		ro.UnlistedViolations = oc.Unlisted
		if len(ro.Violations) > paymock.MaxDistinctViolations {
			slices.SortFunc(ro.Violations, func(a, b ReportViolation) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), compareViolations(a, b))
			})
			for _, v := range ro.Violations[paymock.MaxDistinctViolations:] {
				ro.UnlistedViolations += v.Count
			}
			ro.Violations = ro.Violations[:paymock.MaxDistinctViolations]
		}
		slices.SortFunc(ro.Violations, compareViolations)
		r.Operations = append(r.Operations, ro)
	}
	r.Coverage.Operations = fraction(r.Coverage.OperationsExercised, r.Coverage.OperationsTotal)
	r.Coverage.Statuses = fraction(r.Coverage.StatusesExercised, r.Coverage.StatusesTotal)
}

// compareViolations orders violations as a report lists them: by side,
// param, code and message.
func compareViolations(a, b ReportViolation) int {
	return strings.Compare(a.Side+"\x00"+a.Param+"\x00"+a.Code+"\x00"+a.Message, b.Side+"\x00"+b.Param+"\x00"+b.Code+"\x00"+b.Message)
}

// reportOf is the report of a merchant's counters, over every operation
// of the service contract.
func (s *Server) reportOf(snap merchantJournal) Report {
	r := Report{Calls: snap.calls, ViolatingCalls: snap.violating, UnmatchedCalls: snap.unmatched, InjectedCalls: snap.injected}
	FillReport(&r, s.docs.Service.Operations(), snap.ops)
	return r
}

// maxUnmatchedListed bounds the distinct unmatched calls a report lists:
// their paths are the client's, as many as it cares to send.
const maxUnmatchedListed = 50

// listUnmatched groups the journal's entries of service API calls that
// matched no operation by method, path and answer, most frequent first.
// A list read from the journal rather than from counters that outlive
// it: counted per path, the counters would grow with every path a client
// makes up.
func listUnmatched(entries []JournalEntry) []ReportUnmatched {
	type key struct {
		method, path string
		status       int
	}
	at := map[key]int{}
	var out []ReportUnmatched
	for _, e := range entries {
		if e.Operation != "" || len(e.Violations) == 0 || !strings.HasPrefix(e.Path, "/api/") {
			continue // an operation's call, or a control API call: not counted
		}
		k := key{e.Method, e.Path, e.Status}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, ReportUnmatched{Method: e.Method, Path: e.Path, Status: e.Status,
				Code: e.Violations[0].Code, Message: e.Violations[0].Message})
		}
		out[i].Count++
	}
	slices.SortStableFunc(out, func(a, b ReportUnmatched) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Method+" "+a.Path, b.Method+" "+b.Path)
	})
	return out[:min(len(out), maxUnmatchedListed)]
}

// fraction is n/d to four places, 0 for nothing out of nothing.
func fraction(n, d int) float64 {
	if d == 0 {
		return 0
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(n)/float64(d), 'f', 4, 64), 64)
	return f
}

// getReport handles GET /_sandbox/report: the contract report, as JSON
// or JUnit XML.
func (s *Server) getReport(c *echo.Context) error {
	if s.journal == nil {
		// A report of nothing would pass every gate: say why there is none.
		return errJournalDisabled("report")
	}
	r, err := s.report(c.Request().Context(), merchantOf(c).ID)
	if err != nil {
		return err
	}
	if c.QueryParam("format") == "junit" {
		b, err := JUnit(r)
		if err != nil {
			return fmt.Errorf("junit report: %w", err)
		}
		return c.Blob(http.StatusOK, "application/xml", b)
	}
	return c.JSON(http.StatusOK, r)
}

// JUnit XML, the form CI systems display natively: one test case per
// operation, one failure per distinct violation, and a test case of the
// calls that matched no operation when there were any, so that every
// violating call the gate counts is a failure there too.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

// junitProperty carries the report's totals, for CI systems that chart
// them.
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value int    `xml:"value,attr"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Failures  []junitFailure `xml:"failure"`
	Skipped   *struct{}      `xml:"skipped"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit is a report as JUnit XML.
func JUnit(r Report) ([]byte, error) {
	suite := junitSuite{Name: "paymock contract", SystemOut: reportSummary(r), Properties: []junitProperty{
		{"calls", r.Calls}, {"violating_calls", r.ViolatingCalls},
		{"unmatched_calls", r.UnmatchedCalls}, {"injected_calls", r.InjectedCalls},
	}}
	for _, op := range r.Operations {
		tc := junitCase{Name: op.OperationID + " " + op.Method + " " + op.Path, ClassName: "paymock.contract"}
		var seen []string
		for _, st := range op.Statuses {
			if st.Count > 0 {
				seen = append(seen, StatusText(st.Status))
			}
		}
		tc.SystemOut = fmt.Sprintf("%s, %d violating", count(op.Calls, "call", "calls"), op.ViolatingCalls)
		if len(seen) > 0 {
			tc.SystemOut += "; statuses seen: " + strings.Join(seen, " ")
		}
		for _, v := range op.Violations {
			name := v.Code
			if v.Param != "" {
				name = v.Param + ": " + v.Code
			}
			if v.Side != "" {
				name = v.Side + " " + name
			}
			tc.Failures = append(tc.Failures, junitFailure{Message: name, Type: v.Code,
				Text: fmt.Sprintf("%s (%d×)", v.Message, v.Count)})
		}
		if n := op.UnlistedViolations; n > 0 {
			tc.Failures = append(tc.Failures, junitFailure{Message: "more violations, not listed", Type: "more_violations",
				Text: UnlistedText(n)})
		}
		if op.Calls == 0 {
			tc.Skipped = &struct{}{}
			suite.Skipped++
		}
		if len(tc.Failures) > 0 {
			suite.Failures++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, tc)
	}
	if tc, ok := unmatchedCase(r); ok {
		suite.Tests++
		suite.Failures++
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: "paymock", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// unmatchedCase is the test case of the calls that matched no operation,
// one failure per method and path, and one for those not listed.
func unmatchedCase(r Report) (junitCase, bool) {
	if r.UnmatchedCalls == 0 {
		return junitCase{}, false
	}
	tc := junitCase{Name: "calls that matched no operation", ClassName: "paymock.contract",
		SystemOut: count(r.UnmatchedCalls, "call", "calls") + " to a path or method the contract does not have"}
	for _, u := range r.Unmatched {
		tc.Failures = append(tc.Failures, junitFailure{Message: u.Method + " " + u.Path + ": " + u.Code, Type: u.Code,
			Text: fmt.Sprintf("%s (%d×)", u.Message, u.Count)})
	}
	if n := r.UnlistedUnmatched(); n > 0 {
		tc.Failures = append(tc.Failures, junitFailure{Message: "calls that matched no operation, not listed by path", Type: "route_not_found",
			Text: count(n, "call", "calls") + " matched no operation: the report does not list them by path (trimmed from the journal, or past its list)"})
	}
	return tc, true
}

// UnlistedText says what an operation's unlisted violations are, as the
// JUnit form and `paymock report` print them: "12 more violations, not
// listed: a report tells apart at most 50 distinct ones per operation".
func UnlistedText(n int) string {
	return fmt.Sprintf("%s, not listed: a report tells apart at most %d distinct ones per operation",
		count(n, "more violation", "more violations"), paymock.MaxDistinctViolations)
}

// reportSummary is the report's totals in a sentence: "3 calls, 1
// violating; 1 call matched no operation; 2 answers injected by faults
// the client asked for".
func reportSummary(r Report) string {
	out := fmt.Sprintf("%s, %d violating", count(r.Calls, "call", "calls"), r.ViolatingCalls)
	if r.UnmatchedCalls > 0 {
		out += "; " + count(r.UnmatchedCalls, "call", "calls") + " matched no operation"
	}
	if r.InjectedCalls > 0 {
		out += "; " + count(r.InjectedCalls, "answer", "answers") + " injected by faults the client asked for"
	}
	return out
}

// count is n and the noun in the number n takes: "1 call", "2 calls".
func count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + plural(n, one, many)
}

// plural is the noun in the number n takes.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listRequests handles GET /_sandbox/requests: the merchant's journal.
func (s *Server) listRequests(c *echo.Context) error {
	if s.journal == nil {
		return errJournalDisabled("request journal")
	}
	pr, err := readPage(c)
	if err != nil {
		return err
	}
	var f requestFilter
	if _, ok := c.QueryParams()["status"]; ok {
		st, err := queryInt(c, "status", 0)
		if err != nil {
			return err
		}
		f.status = int(st)
	}
	f.violations = c.QueryParam("violations") == "true"
	if !s.acquireListPage(c) {
		return nil
	}
	defer s.releaseListPage(c)
	pg := pr.window()
	items, total, err := s.requests(c.Request().Context(), merchantOf(c).ID, f, pg.Offset, pg.Limit)
	if err != nil {
		return err
	}
	return listJSON(c, items, pr, total)
}

// errJournalDisabled is the answer of what needs the request journal on a
// server that keeps none.
func errJournalDisabled(what string) error {
	return &paymock.Error{Type: paymock.Conflict, Code: "journal_disabled",
		Message: "no " + what + ": this server keeps no request journal (--journal-size 0); start it with a journal to check the client's calls"}
}
