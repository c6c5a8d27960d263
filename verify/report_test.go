// Tests of the reports: what a person reads of a deployment that gets
// one field wrong in every payment, and the JUnit cases CI history keys on.

package verify

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/paymock/paymock/internal/upstreamtest"
	"github.com/paymock/paymock/paymocktest"
)

// fractionalSeconds is a deployment that answers as paymock does but
// writes every timestamp with a fraction of a second, as Prism's dynamic
// mode does: each payment of every list breaks the contract four times.
func fractionalSeconds(t *testing.T) (*httptest.Server, *paymocktest.Server) {
	t.Helper()
	s := paymocktest.New(t, paymocktest.AllowViolations(), paymocktest.WithFakePayments(20))
	stamp := regexp.MustCompile(`("[a-z_]+_at":"[0-9-]+T[0-9:]+)Z"`)
	fractions := upstreamtest.Layer{Answer: func(_ *http.Request, _ http.Header, body []byte) []byte {
		return stamp.ReplaceAll(body, []byte(`$1.0Z"`))
	}}
	return fractions.Serve(t, s.URL), s
}

func TestWriteText_TheSameViolationInEveryListItemIsOneLineWithItsCount(t *testing.T) {
	srv, s := fractionalSeconds(t)
	rep := runAgainst(t, Config{BaseURL: srv.URL, APIKey: s.APIKey})
	out := text(t, rep)
	// The JSON report keeps each one; the text counts them.
	want := map[string]int{}
	for _, v := range rep.Violations {
		if strings.HasPrefix(v.Param, "items.") {
			want[v.Check+" "+starIndices(v.Param)]++
		}
	}
	if n := want["list.per_page_100 items.*.created_at"]; n < 20 {
		t.Fatalf("the list of 100 found %d items with a fractional created_at, want at least the 20 fake payments:\n%s", n, out)
	}
	if strings.Contains(out, "items.0.") || strings.Contains(out, "items.1.") {
		t.Errorf("the text lists item by item:\n%s", out)
	}
	for key, n := range want {
		check, param, _ := strings.Cut(key, " ")
		line := fmt.Sprintf("  %s: GET ", check)
		suffix := fmt.Sprintf("%s parameter_invalid: %s must be a UTC time in whole seconds, YYYY-MM-DDThh:mm:ssZ\n", param, param)
		if n > 1 {
			suffix = fmt.Sprintf("%s parameter_invalid: %s must be a UTC time in whole seconds, YYYY-MM-DDThh:mm:ssZ (%d×)\n", param, param, n)
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `\S+ -> 200: ` + regexp.QuoteMeta(suffix)).MatchString(out) {
			t.Errorf("no line %q...%q in:\n%s", line, suffix, out)
		}
	}
	if got := strings.Count(out, "\n  "); got >= len(rep.Violations) {
		t.Errorf("%d indented lines for %d violations: nothing was folded", got, len(rep.Violations))
	}
}

func TestWriteText_ALongAnswerOfTheDriftTableWrapsAtItsListItems(t *testing.T) {
	long := "Cf-Cache-Status, Cf-Ray, Nel, Report-To, Server, Strict-Transport-Security, Vary, X-Envoy-Upstream-Service-Time"
	rep := &Report{Drift: []Drift{
		{Point: "headers.deployment_only", Paymock: "absent", Deployment: long},
		{Point: "amount.form", Paymock: "number", Deployment: "string"},
	}}
	out := text(t, rep)
	_, table, _ := strings.Cut(out, "drift: 2\n")
	table, _, _ = strings.Cut(table, "\n\n")
	lines := strings.Split(table, "\n")
	column := strings.Index(lines[0], "DEPLOYMENT")
	var deployment []string
	for _, line := range lines[1:] {
		if len(line) > 80 {
			t.Errorf("a drift line of %d columns: %q", len(line), line)
		}
		if !strings.HasPrefix(line, "  amount.form") && len(line) > column {
			deployment = append(deployment, line[column:])
		}
	}
	if got := strings.Join(deployment, " "); got != long || len(deployment) < 2 {
		t.Errorf("the deployment's column reads %q, want %q over several lines:\n%s", got, long, out)
	}
	if !regexp.MustCompile(`(?m)^  amount\.form +number +string$`).MatchString(out) {
		t.Errorf("a short row is not one line:\n%s", out)
	}
}

func TestWriteJUnit_CasesAreNamedByCheckAndOperationNeverByThePaymentMade(t *testing.T) {
	// A nightly job's history keys on test names: one that held the
	// payment made that night would be a new test every night.
	for _, tc := range []struct {
		check, method, path string
		want                string
	}{
		{checkRetrieve, "GET", "/api/v1/payments/pay_dENfirstNight0000000", "retrieve GET /api/v1/payments/{id}"},
		{checkCreate, "POST", "/api/v1/payments", "create.checkout POST /api/v1/payments"},
		{checkPerPage101, "GET", "/api/v1/payments?per_page=101", "per_page_101 GET /api/v1/payments"},
		{"odd", "GET", "/not/an/operation", "odd GET /not/an/operation"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			rep := &Report{Checks: []*Exchange{{Check: tc.check, Method: tc.method, Path: tc.path, Status: 200}}}
			var b bytes.Buffer
			if err := rep.WriteJUnit(&b); err != nil {
				t.Fatal(err)
			}
			var doc junitSuites
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			c := doc.Suites[0].Cases[0]
			if c.Name != tc.want || c.SystemOut != tc.method+" "+tc.path {
				t.Errorf("case %q, system-out %q; want %q and the request %q", c.Name, c.SystemOut, tc.want, tc.method+" "+tc.path)
			}
		})
	}
}
