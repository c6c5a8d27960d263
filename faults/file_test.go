// Tests of rule files: what they hold, and how a bad one is refused.

package faults_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paymock/paymock/faults"
)

func TestLoadFile_ReadsRulesWithDefaultsAndSources(t *testing.T) {
	rules, err := faults.LoadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 7 {
		t.Fatalf("got %d rules, want 7", len(rules))
	}
	first := rules[0]
	if first.Operation != "createPayment" || first.Status != 503 || *first.Times != 2 || first.When != faults.WhenAfter ||
		first.Target != faults.TargetAPI || *first.Probability != 1 || first.Source != "testdata/good.yaml:2" || first.ID != "" {
		t.Errorf("rule 1 = %+v", first)
	}
	if r := rules[1]; r.Operation != "*" || r.RetryAfter != 5 || *r.Probability != 0.1 || r.Times != nil {
		t.Errorf("rule 2 = %+v", r)
	}
	if r := rules[2]; r.Operation != "*" || r.DelayMS != 1500 || r.When != faults.WhenBefore {
		t.Errorf("rule 3 = %+v", r)
	}
	if r := rules[3]; r.Target != faults.TargetWebhooks || r.EventType != "payment.completed" || r.Duplicate != 3 {
		t.Errorf("rule 4 = %+v", r)
	}
	if r := rules[4]; !r.Reorder || r.WindowMS != 1000 || r.Source != "testdata/good.yaml:14" {
		t.Errorf("rule 5 = %+v", r)
	}
	if r := rules[5]; !r.UnknownType || *r.Times != 1 || r.Source != "testdata/good.yaml:16" {
		t.Errorf("rule 6 = %+v", r)
	}
	if r := rules[6]; !r.ExtraFields || r.EventType != "payment.failed" {
		t.Errorf("rule 7 = %+v", r)
	}
}

func TestLoadFile_RefusesWithFileAndLine(t *testing.T) {
	cases := []struct {
		file string
		// want lists each expected error as "line|fragment".
		want []string
	}{
		{"unknown_field.yaml", []string{`4|unknown field "colour" in a fault rule (want target, operation, status,`}},
		{"bad_value.yaml", []string{
			"4|fault rule 2: status 418 cannot be injected: want 429, 500, 502, 503 or 504",
			"7|fault rule 3: probability must be between 0 and 1",
		}},
		{"wrong_type.yaml", []string{
			`2|fault rule 1: times: want a whole number, found "often"`,
			`3|fault rule 2: reset: want true or false, found "yes please"`,
		}},
		{"not_a_list.yaml", []string{"1|must be a YAML list of fault rules"}},
		{"empty.yaml", []string{"1|no fault rules"}},
		{"syntax.yaml", []string{"2|mapping values are not allowed"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := "testdata/" + c.file
			rules, err := faults.LoadFile(path)
			if err == nil {
				t.Fatalf("loaded %d rules, want an error", len(rules))
			}
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			} else {
				errs = []error{err}
			}
			if len(errs) != len(c.want) {
				t.Fatalf("got %d errors (%v), want %d", len(errs), err, len(c.want))
			}
			for i, w := range c.want {
				line, frag, _ := strings.Cut(w, "|")
				var fe *faults.FileError
				if !errors.As(errs[i], &fe) {
					t.Fatalf("error %d %v is not a *FileError", i, errs[i])
				}
				prefix := path + ":" + line + ": "
				if msg := errs[i].Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, frag) {
					t.Errorf("error %d = %q, want %q then %q", i, msg, prefix, frag)
				}
			}
		})
	}
}

func TestLoadFile_ChecksOperationsGiven(t *testing.T) {
	if _, err := faults.LoadFile("testdata/good.yaml", "listPayments"); err == nil ||
		!strings.Contains(err.Error(), "good.yaml:2: fault rule 1: operation \"createPayment\" is not an operation") {
		t.Errorf("err = %v, want createPayment refused at line 2", err)
	}
	if _, err := faults.LoadFile("testdata/missing.yaml"); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("err = %v, want the missing file named", err)
	}
}
