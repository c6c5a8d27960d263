// Tests of a Set's own checks and of the cost of a call no rule is for;
// what it keeps and counts is tested on every backend by
// internal/faultstest.

package faults_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/memory"
)

func newSet(t testing.TB, cfg faults.Config) *faults.Set {
	t.Helper()
	cfg.Store = memory.NewFaultRules()
	s, err := faults.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustAdd(t testing.TB, s *faults.Set, merchant string, r faults.Rule) faults.Rule {
	t.Helper()
	got, err := s.Add(context.Background(), merchant, r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return got
}

func TestAdd_RefusesInvalidRulesAndChangesNothing(t *testing.T) {
	s := newSet(t, faults.Config{Operations: []string{"createPayment"}})
	_, err := s.Add(t.Context(), "m1", faults.Rule{Operation: "listPayments", Status: 418, Probability: ptr(2.0)})
	var pe *paymock.Error
	if !errors.As(err, &pe) || pe.Type != paymock.InvalidRequest || len(pe.Violations) != 3 {
		t.Fatalf("err = %v, want an invalid_request_error with 3 violations", err)
	}
	if got, err := s.List(t.Context(), "m1"); err != nil || len(got) != 0 {
		t.Errorf("an invalid rule was kept: %v, %v", got, err)
	}
}

func TestAdd_IDsComeFromTheGeneratorGiven(t *testing.T) {
	ids := paymock.NewIDs(nil)
	s := newSet(t, faults.Config{IDs: func(context.Context, string) (string, error) { return ids.New("flt"), nil }})
	r := mustAdd(t, s, "m1", faults.Rule{Status: 500})
	if !strings.HasPrefix(r.ID, "flt_") || len(r.ID) != len("flt_")+paymock.IDLength {
		t.Errorf("id %q, want flt_ and %d characters", r.ID, paymock.IDLength)
	}
}

func TestNew_RefusesFileRulesTheContractLacks(t *testing.T) {
	_, err := faults.New(faults.Config{Store: memory.NewFaultRules(), Operations: []string{"createPayment"},
		FileRules: []faults.Rule{{Operation: "listPayments", Status: 503, Source: "f.yaml:3"}}})
	if err == nil || !strings.Contains(err.Error(), "f.yaml:3") || !strings.Contains(err.Error(), `"listPayments"`) {
		t.Errorf("err = %v, want the rule's source and operation named", err)
	}
}

func TestNew_RefusesNoStore(t *testing.T) {
	if _, err := faults.New(faults.Config{}); err == nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("err = %v, want the missing store named", err)
	}
}

func TestMatchAPI_NoRuleForTheCallAllocatesNothing(t *testing.T) {
	s := newSet(t, faults.Config{FileRules: []faults.Rule{{Operation: "listPayments", Status: 500}}})
	for i := range 100 {
		mustAdd(t, s, "busy", faults.Rule{Operation: "listPayments", Status: 500})
		mustAdd(t, s, fmt.Sprintf("other%d", i), faults.Rule{Status: 503})
	}
	ctx := context.Background()
	for _, m := range []string{"quiet", "busy"} {
		if n := testing.AllocsPerRun(1000, func() { _, _, _ = s.MatchAPI(ctx, m, "createPayment") }); n != 0 {
			t.Errorf("MatchAPI for %s allocates %.1f times per call", m, n)
		}
	}
}

func BenchmarkMatchAPI(b *testing.B) {
	cases := []struct {
		name  string
		setup func(*faults.Set)
	}{
		{"no_rules", func(*faults.Set) {}},
		{"100_rules_other_operations", func(s *faults.Set) {
			for range 100 {
				mustAdd(b, s, "m1", faults.Rule{Operation: "listPayments", Status: 500})
			}
		}},
		{"100_rules_other_merchants", func(s *faults.Set) {
			for i := range 100 {
				mustAdd(b, s, fmt.Sprintf("m%d", i+2), faults.Rule{Status: 503})
			}
		}},
		{"hit_until_removed", func(s *faults.Set) {
			mustAdd(b, s, "m1", faults.Rule{Operation: "createPayment", Status: 503})
		}},
		{"miss_probability_0", func(s *faults.Set) {
			mustAdd(b, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.0)})
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := newSet(b, faults.Config{})
			c.setup(s)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = s.MatchAPI(ctx, "m1", "createPayment")
			}
		})
	}
}
