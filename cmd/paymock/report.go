// "paymock report": a running server's contract report, printed and
// gated for CI.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/mockserver"
)

// The environment variables of "paymock report". They are not
// PAYMOCK_URL/PAYMOCK_API_KEY: PAYMOCK_API_KEY is the server's list of
// merchant keys, and a CI job often sets both.
const (
	reportURLEnv = "PAYMOCK_REPORT_URL"
	reportKeyEnv = "PAYMOCK_REPORT_API_KEY"
)

// defaultReportTimeout bounds the whole report command (both requests).
const defaultReportTimeout = 10 * time.Second

// defaultMinCalls is --min-calls unless told otherwise: a report of no
// calls at all cannot vouch for anything.
const defaultMinCalls = 1

// reportOptions is the validated configuration of "paymock report".
type reportOptions struct {
	url              string // base URL, without trailing slash
	apiKey           string
	keySource        string // "--api-key" or PAYMOCK_REPORT_API_KEY, for messages
	failOnViolations bool
	minCalls         int      // 0: no check
	minCoverage      *float64 // nil: no operations coverage gate
	minStatus        *float64 // nil: no status coverage gate
	junitPath        string
	timeout          time.Duration
}

// reportFlags is every flag of "paymock report".
var reportFlags = []flagSpec{
	{name: "url", arg: "URL"},
	{name: "api-key", arg: "KEY"},
	{name: "fail-on-violations", isBool: true},
	{name: "min-calls", arg: "N"},
	{name: "min-coverage", arg: "F"},
	{name: "min-status-coverage", arg: "F"},
	{name: "junit", arg: "FILE"},
	{name: "timeout", arg: "D"},
}

// printReportHint follows the main help text: report has its own flags
// and environment variables, not the PAYMOCK_<NAME> scheme of serve.
func printReportHint(w io.Writer) {
	fmt.Fprintf(w, `
Command report (a CI gate; its own flags, see "paymock report -h"):
  paymock report --url URL --api-key KEY [--fail-on-violations] [--min-calls N]
                 [--min-coverage F] [--min-status-coverage F] [--junit FILE] [--timeout D]
      prints the contract report of the server at URL (GET /_sandbox/report)
      and exits 1 when a gate fails. --url and --api-key are also read from
      %s and %s.
`, reportURLEnv, reportKeyEnv)
}

// printReportUsage writes the help text of "paymock report".
func printReportUsage(w io.Writer) {
	fmt.Fprintf(w, `paymock report checks a running paymock's contract report: a CI gate.

Usage:
  paymock report --url URL --api-key KEY [flags]

It reads GET URL/_sandbox/report as the merchant of KEY, prints a table of
the operations, their calls, statuses and contract violations, and exits:
  0  every gate passes
  1  a gate failed (one line per failed gate on stderr), or the server could
     not be reached, or it answered with an error (a key it does not know,
     or no report because it keeps no journal: --journal-size 0)
  2  a usage error (a missing or invalid flag), or a --junit file that
     cannot be written

Flags:
  --url URL                 base URL of the paymock server, e.g. http://localhost:8080,
                            not the API's (.../api/v1) (env %s)
  --api-key KEY             the merchant's API key, sent as Authorization: Bearer KEY
                            (env %s)
  --min-calls N             fail when the report counts fewer than N calls of the
                            service API (default %d; 0 turns it off). It guards the
                            other gates: a report of no calls passes them all.
  --fail-on-violations      fail when any call violated the contract
  --min-coverage F          fail when the share of operations exercised is below F (0..1)
  --min-status-coverage F   fail when the share of declared statuses seen is below F (0..1)
  --junit FILE              also write the report as JUnit XML (GET ...?format=junit) to FILE
  --timeout D               bound on the whole command (default %s)

Only --url and --api-key are read from the environment, and only from the
variables above: PAYMOCK_API_KEY is the server's own list of keys.
A flag on the command line wins over the environment.
`, reportURLEnv, reportKeyEnv, defaultMinCalls, defaultReportTimeout)
}

// parseReportOptions reads the flags of "paymock report", then
// PAYMOCK_REPORT_URL and PAYMOCK_REPORT_API_KEY for those not given, and
// returns every mistake at once. help is true when -h or --help was asked
// for.
func parseReportOptions(args []string, getenv func(string) string) (o *reportOptions, help bool, err error) {
	specs := make([]argSpec, len(reportFlags))
	for i, f := range reportFlags {
		specs[i] = argSpec{name: f.name, isBool: f.isBool}
	}
	p := parseArgs("paymock report", args, specs)
	if p.help {
		return nil, true, nil
	}
	errs := p.errs
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	o = &reportOptions{url: p.last("url"), apiKey: p.last("api-key"), junitPath: p.last("junit")}
	urlSrc, keySrc := "--url", "--api-key"
	if !p.set("url") {
		o.url, urlSrc = getenv(reportURLEnv), reportURLEnv
	}
	if !p.set("api-key") {
		o.apiKey, keySrc = getenv(reportKeyEnv), reportKeyEnv
	}
	o.keySource = keySrc
	if o.url == "" {
		fail("--url (or %s) is required", reportURLEnv)
	} else if u, err := parsePublicURL(o.url); err != nil {
		fail("invalid %s: %v", urlSrc, err)
	} else if base, ok := strings.CutSuffix(u, "/api/v1"); ok || strings.HasSuffix(u, "/api") {
		// The client's base URL, pasted: the report is not under it, and
		// asking there would itself count as a call of no operation.
		if !ok {
			base = strings.TrimSuffix(u, "/api")
		}
		fail("invalid %s: %q is the API's base URL, which the client is given; give the server's base URL, not the API's: --url %s",
			urlSrc, o.url, base)
	} else {
		o.url = u
	}
	switch {
	case o.apiKey == "":
		fail("--api-key (or %s) is required", reportKeyEnv)
	case !paymock.WellFormedKey(o.apiKey):
		// Never repeat the key.
		fail("invalid %s: not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)", keySrc)
	}
	if p.set("fail-on-violations") {
		o.failOnViolations, _ = strconv.ParseBool(p.last("fail-on-violations")) // checked by parseArgs
	}
	o.minCalls = defaultMinCalls
	if p.set("min-calls") {
		text := p.last("min-calls")
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil || n < 0 {
			fail("invalid --min-calls: %q: want a whole number of calls, or 0 to turn the check off", text)
		}
		o.minCalls = n
	}
	parseShare := func(name string) *float64 {
		if !p.set(name) {
			return nil
		}
		text := p.last(name)
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			fail("invalid --%s: %q: want a number from 0 to 1, e.g. 0.8", name, text)
			return nil
		}
		return &f
	}
	o.minCoverage = parseShare("min-coverage")
	o.minStatus = parseShare("min-status-coverage")
	if p.set("junit") && o.junitPath == "" {
		fail("invalid --junit: want a file name")
	}
	tmoStr := defaultReportTimeout.String()
	if p.set("timeout") {
		tmoStr = p.last("timeout")
	}
	if d, err := time.ParseDuration(tmoStr); err != nil || d <= 0 {
		fail("invalid --timeout: %q: want a duration greater than 0, e.g. 10s", tmoStr)
	} else {
		o.timeout = d
	}
	if len(errs) > 0 {
		return nil, false, &usageError{err: fmt.Errorf("report: %w", errors.Join(errs...)), cmd: "report"}
	}
	return o, false, nil
}

// gateError is a report whose gates did not all pass; main exits 1.
type gateError struct {
	failed    []string
	notJudged []string // gates left unjudged because --min-calls failed
}

func (e *gateError) Error() string {
	gates := "gates"
	if len(e.failed) == 1 {
		gates = "gate"
	}
	msg := fmt.Sprintf("report: %d %s failed:\n  %s", len(e.failed), gates, strings.Join(e.failed, "\n  "))
	if len(e.notJudged) > 0 {
		msg += "\n  not judged without the calls: " + strings.Join(e.notJudged, ", ")
	}
	return msg
}

// report is "paymock report": it fetches the contract report of a running
// server, prints it, writes the JUnit form when asked and checks the gates.
func report(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	o, help, err := parseReportOptions(args, getenv)
	if help {
		printReportUsage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	client := &http.Client{
		// A redirect would be a misconfigured --url; say so rather than
		// follow it (and possibly drop the Authorization header).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	body, err := fetchReport(ctx, client, o, "", "application/json")
	if err != nil {
		return err
	}
	var rep mockserver.Report
	if err := json.Unmarshal(body, &rep); err != nil {
		return fmt.Errorf("report: GET %s: the answer is not a contract report: %v", o.url+"/_sandbox/report", err)
	}
	printReport(stdout, &rep)

	if o.junitPath != "" {
		doc, err := fetchReport(ctx, client, o, "junit", "application/xml")
		if err != nil {
			return err
		}
		if err := writeOutputFile(o.junitPath, doc); err != nil {
			return fmt.Errorf("report: writing the JUnit report: %w", err)
		}
		fmt.Fprintf(stdout, "junit: wrote %s\n", o.junitPath)
	}

	return checkGates(stdout, o, &rep)
}

// fetchReport GETs /_sandbox/report (with ?format= when format is not
// empty) and returns the body of a 200 answer. Any other answer is an
// error that carries the server's own message and, for the answers a CI
// job meets (an unknown key, no journal), what to do about it.
func fetchReport(ctx context.Context, client *http.Client, o *reportOptions, format, accept string) ([]byte, error) {
	target := o.url + "/_sandbox/report"
	if format != "" {
		target += "?format=" + url.QueryEscape(format)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+o.apiKey)
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("report: cannot reach paymock: GET %s: no answer within %s", target, o.timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("report: cannot reach paymock: GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("report: GET %s: reading the answer: %w", target, err)
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	msg := fmt.Sprintf("report: GET %s: %s: %s", target, resp.Status, serverMessage(body))
	switch code := errorCode(body); {
	case resp.StatusCode == http.StatusUnauthorized:
		msg += fmt.Sprintf("\n  the server does not know the key of %s: give it the key your tests used", o.keySource)
	case resp.StatusCode == http.StatusNotFound: // paymock's report is never one
		msg += "\n  no report at that URL: give --url the paymock server's base URL (where /_sandbox/ and /api/v1/ are)," +
			" e.g. http://localhost:8080, not the API's"
	case code == "journal_disabled":
		msg += "\n  no gate can pass without a report: start the server with a journal" +
			" (leave out --journal-size 0 and PAYMOCK_JOURNAL_SIZE=0)"
	}
	return nil, errors.New(msg)
}

// errorCode is the error.code of paymock's error shape, or "".
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// serverMessage is the message of an error answer: "type (code): message"
// from paymock's error shape, else the start of the body as text.
func serverMessage(body []byte) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		var kind []string
		if e.Error.Type != "" {
			kind = append(kind, e.Error.Type)
		}
		if e.Error.Code != "" {
			kind = append(kind, e.Error.Code)
		}
		if len(kind) == 0 {
			return e.Error.Message
		}
		return strings.Join(kind, "/") + ": " + e.Error.Message
	}
	text := strings.Join(strings.Fields(string(body)), " ")
	if text == "" {
		return "(empty body)"
	}
	if r := []rune(text); len(r) > 200 {
		text = string(r[:200]) + "..."
	}
	return text
}

// printReport writes the table of operations, the coverage line and the
// violations.
func printReport(w io.Writer, rep *mockserver.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tMETHOD\tPATH\tCALLS\tVIOLATIONS\tSTATUSES (seen/declared)")
	undeclared := false
	for _, op := range rep.Operations {
		var seen, declared []int
		notDeclared := map[int]bool{}
		for _, s := range op.Statuses {
			if s.Count > 0 {
				seen = append(seen, s.Status)
				// A reset is no status at all: it shows as one, unmarked.
				if !s.Declared && s.Status != mockserver.ResetStatus {
					notDeclared[s.Status] = true
					undeclared = true
				}
			}
			if s.Declared {
				declared = append(declared, s.Status)
			}
		}
		slices.SortFunc(seen, mockserver.CompareStatuses)
		slices.Sort(declared)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s / %s\n",
			op.OperationID, op.Method, op.Path, op.Calls, op.ViolatingCalls,
			statusList(seen, notDeclared), statusList(declared, nil))
	}
	tw.Flush()
	if undeclared {
		fmt.Fprintln(w, "* a status the contract does not declare for the operation")
	}

	c := rep.Coverage
	line := fmt.Sprintf("coverage: operations %d/%d (%s), statuses %d/%d (%s); %d of %d %s violated the contract",
		c.OperationsExercised, c.OperationsTotal, percent(c.Operations),
		c.StatusesExercised, c.StatusesTotal, percent(c.Statuses),
		rep.ViolatingCalls, rep.Calls, plural(rep.Calls, "call", "calls"))
	if rep.UnmatchedCalls > 0 {
		line += fmt.Sprintf("; %d %s matched no operation", rep.UnmatchedCalls, plural(rep.UnmatchedCalls, "call", "calls"))
	}
	if rep.InjectedCalls > 0 {
		// Answers of faults the tests asked for: the client had to handle
		// them, and they are never its violations.
		line += fmt.Sprintf("; %d %s injected by faults asked for", rep.InjectedCalls, plural(rep.InjectedCalls, "answer", "answers"))
	}
	fmt.Fprintln(w, line)

	var lines []string
	for _, op := range rep.Operations {
		for _, v := range op.Violations {
			where := op.OperationID
			if v.Side != "" {
				where += " [" + v.Side + "]"
			}
			if v.Param != "" {
				where += " " + v.Param
			}
			lines = append(lines, fmt.Sprintf("  %s %s: %s (%d×)", where, v.Code, v.Message, v.Count))
		}
		if n := op.UnlistedViolations; n > 0 {
			// Counted, not told apart: the gate still counts every
			// violating call, from ViolatingCalls.
			lines = append(lines, fmt.Sprintf("  %s %s", op.OperationID, mockserver.UnlistedText(n)))
		}
	}
	// Calls of no operation violate the contract too: the gate counts
	// them, so they are listed with the rest.
	for _, u := range rep.Unmatched {
		lines = append(lines, fmt.Sprintf("  %s %s (no operation) %s: %s (%d×)", u.Method, u.Path, u.Code, u.Message, u.Count))
	}
	if n := rep.UnlistedUnmatched(); n > 0 {
		// Trimmed from the journal, past the list's end, or from a
		// report that lists none (the proxy's).
		lines = append(lines, fmt.Sprintf("  %d more %s of no operation, not listed by path", n, plural(n, "call", "calls")))
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "violations:")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// statusList is "201 400", with "*" after each status in mark; "-" when empty.
func statusList(codes []int, mark map[int]bool) string {
	if len(codes) == 0 {
		return "-"
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = mockserver.StatusText(c)
		if mark[c] {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, " ")
}

// percent formats a share from 0 to 1 as "66.7%".
func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkGates checks every gate asked for. It says on stdout which passed
// and returns a gateError naming, with the figures, each that failed. When
// the report counts fewer calls than --min-calls, no other gate is judged:
// they would pass or fail on calls the report has not seen.
func checkGates(stdout io.Writer, o *reportOptions, rep *mockserver.Report) error {
	var passed, failed, others []string
	if o.failOnViolations {
		others = append(others, "--fail-on-violations")
	}
	if o.minCoverage != nil {
		others = append(others, "--min-coverage "+strconv.FormatFloat(*o.minCoverage, 'f', -1, 64))
	}
	if o.minStatus != nil {
		others = append(others, "--min-status-coverage "+strconv.FormatFloat(*o.minStatus, 'f', -1, 64))
	}
	if o.minCalls > 0 {
		name := "--min-calls " + strconv.Itoa(o.minCalls)
		if rep.Calls < o.minCalls {
			return &gateError{failed: []string{fmt.Sprintf("%s: the report counts %d %s of the service API, fewer than %d,"+
				" so it cannot vouch for the calls of your tests. Likely causes:\n"+
				"    - the tests made no calls to this server (check the URL they were given);\n"+
				"    - they used another API key than %s (in open mode every key is a merchant of its own, with its own report);\n"+
				"    - the server was restarted between the tests and this gate (the report is kept in memory),"+
				" or the merchant was forgotten after --merchant-idle-ttl without requests.",
				name, rep.Calls, plural(rep.Calls, "call", "calls"), o.minCalls, o.keySource)},
				notJudged: others}
		}
		passed = append(passed, name)
	}
	if o.failOnViolations {
		if rep.ViolatingCalls > 0 {
			failed = append(failed, fmt.Sprintf("--fail-on-violations: %d of %d %s violated the contract",
				rep.ViolatingCalls, rep.Calls, plural(rep.Calls, "call", "calls")))
		} else {
			passed = append(passed, "--fail-on-violations")
		}
	}
	c := rep.Coverage
	for _, g := range []struct {
		flag, what    string
		min           *float64
		got           float64
		exercised, of int
	}{
		{"--min-coverage", "operations", o.minCoverage, c.Operations, c.OperationsExercised, c.OperationsTotal},
		{"--min-status-coverage", "status", o.minStatus, c.Statuses, c.StatusesExercised, c.StatusesTotal},
	} {
		if g.min == nil {
			continue
		}
		name := g.flag + " " + strconv.FormatFloat(*g.min, 'f', -1, 64)
		if g.got < *g.min {
			failed = append(failed, fmt.Sprintf("%s: %s coverage is %s (%d/%d), below %s",
				name, g.what, percent(g.got), g.exercised, g.of, percent(*g.min)))
		} else {
			passed = append(passed, name)
		}
	}
	if len(passed) > 0 {
		fmt.Fprintf(stdout, "gates passed: %s\n", strings.Join(passed, ", "))
	}
	if len(failed) > 0 {
		return &gateError{failed: failed}
	}
	return nil
}
