// Tests of the Paymock-Fault header.

package faults_test

import (
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
)

func TestParseHeader_ReadsEachForm(t *testing.T) {
	cases := []struct {
		value string
		want  faults.Rule // compared on the effect fields and When
	}{
		{"status=503", faults.Rule{Status: 503, When: faults.WhenBefore}},
		{"status=429; retry_after=3", faults.Rule{Status: 429, RetryAfter: 3, When: faults.WhenBefore}},
		{"status=429", faults.Rule{Status: 429, RetryAfter: 1, When: faults.WhenBefore}},
		{"delay=1500ms", faults.Rule{DelayMS: 1500, When: faults.WhenBefore}},
		{"delay=2s; status=504", faults.Rule{DelayMS: 2000, Status: 504, When: faults.WhenBefore}},
		{"delay=1.5s", faults.Rule{DelayMS: 1500, When: faults.WhenBefore}},
		{"reset", faults.Rule{Reset: true, When: faults.WhenBefore}},
		{"status=503; when=after", faults.Rule{Status: 503, When: faults.WhenAfter}},
		{"reset; when=after", faults.Rule{Reset: true, When: faults.WhenAfter}},
		{"  when=before ;status=500  ", faults.Rule{Status: 500, When: faults.WhenBefore}},
		{"delay=100ms; reset", faults.Rule{DelayMS: 100, Reset: true, When: faults.WhenBefore}},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			got, err := faults.ParseHeader(c.value)
			if err != nil {
				t.Fatalf("ParseHeader: %v", err)
			}
			if got.Status != c.want.Status || got.RetryAfter != c.want.RetryAfter || got.DelayMS != c.want.DelayMS ||
				got.Reset != c.want.Reset || got.When != c.want.When {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if got.ID != "header" || got.Target != faults.TargetAPI || got.Operation != "*" || *got.Probability != 1 || got.Times != nil {
				t.Errorf("header rule identity or defaults: %+v", got)
			}
		})
	}
}

func TestParseHeader_RefusesMalformedValues(t *testing.T) {
	cases := []struct{ value, problem string }{
		{"", "the value is empty"},
		{"status=418", "status 418 cannot be injected"},
		{"status=abc", `status "abc" is not a number`},
		{"status", "status needs a value"},
		{"status=", "status needs a value"},
		{"status=503; status=500", "status is given twice"},
		{"status=503;", "empty setting"},
		{"retry_after=3", "retry_after goes with status 429 only; no effect: give status, delay or reset"},
		{"status=503; retry_after=3", "retry_after goes with status 429 only"},
		{"status=429; retry_after=-1", "not a whole number of seconds"},
		{"status=429; retry_after=3s", "not a whole number of seconds"},
		{"delay=1500", "not a duration such as 1500ms or 2s"},
		{"delay=-5ms", "must not be negative"},
		{"delay=11m", "at most 10m"},
		{"delay=1500us", "whole milliseconds"},
		{"reset=true", "reset takes no value"},
		{"reset; status=503", "cannot be combined with status"},
		{"when=after", "no effect"},
		{"status=503; when=later", `when "later" is not a moment`},
		{"timeout=5s", `unknown setting "timeout"`},
		{"status:503", `unknown setting "status:503"`},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			_, err := faults.ParseHeader(c.value)
			e, ok := paymock.AsError(err)
			if !ok {
				t.Fatalf("err = %v, want a *paymock.Error", err)
			}
			if e.Type != paymock.InvalidRequest || e.Param != "Paymock-Fault" || len(e.Violations) != 1 || e.Violations[0].Param != "Paymock-Fault" {
				t.Errorf("error %+v: want invalid_request_error with param Paymock-Fault", e)
			}
			if !strings.Contains(e.Message, c.problem) || !strings.Contains(e.Message, "accepted: status=503") {
				t.Errorf("message %q: want %q and the accepted forms", e.Message, c.problem)
			}
		})
	}
}
