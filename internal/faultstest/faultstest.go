// Package faultstest is the conformance suite of paymock.FaultRules: every
// backend runs the same tests through Run, each a faults.Set over the
// backend's store, so that a merchant's rules add, list, count down and
// draw the same on memory and on PostgreSQL.
package faultstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/memory"
)

// Run runs the suite. open returns an empty store for one subtest; it
// registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, open func(t *testing.T) paymock.FaultRules)
	}{
		{"AddListsInMatchingOrder", addListsInMatchingOrder},
		{"DeleteRemovesOneRuleOfOneMerchant", deleteOne},
		{"ClearRemovesEveryRuleUntilReset", clearUntilReset},
		{"TimesCountExactlyAcrossConcurrentMatches", timesUnderConcurrency},
		{"UntilRemovedCountsHits", untilRemovedCountsHits},
		{"MatchTriesSpecificBeforeAnyNewestFirst", matchOrder},
		{"WebhookRulesMatchByEventType", webhookRules},
		{"ProbabilityDrawsAreTheSeedsOnEveryBackend", seededDraws},
		{"FileRulesCountPerMerchant", fileRulesPerMerchant},
		{"MerchantsAreIsolated", merchantsIsolated},
		{"LimitCountsFileRulesAndFreesOnDelete", limits},
		{"ResetForgetsRulesCountsAndDraws", reset},
		{"NoRuleForACallMatchesNothing", noRule},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
}

// seqIDs makes predictable rule ids, as a seeded run does.
type seqIDs struct{ n atomic.Int64 }

func (s *seqIDs) New(context.Context, string) (string, error) {
	return fmt.Sprintf("flt_%024d", s.n.Add(1)), nil
}

func newSet(t *testing.T, store paymock.FaultRules, cfg faults.Config) *faults.Set {
	t.Helper()
	cfg.Store = store
	if cfg.IDs == nil {
		cfg.IDs = (&seqIDs{}).New
	}
	s, err := faults.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func add(t *testing.T, s *faults.Set, merchant string, r faults.Rule) faults.Rule {
	t.Helper()
	got, err := s.Add(t.Context(), merchant, r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return got
}

func list(t *testing.T, s *faults.Set, merchant string) []faults.Rule {
	t.Helper()
	got, err := s.List(t.Context(), merchant)
	if err != nil {
		t.Fatalf("List(%s): %v", merchant, err)
	}
	return got
}

func matchAPI(t *testing.T, s *faults.Set, merchant, op string) (faults.Rule, bool) {
	t.Helper()
	r, ok, err := s.MatchAPI(t.Context(), merchant, op)
	if err != nil {
		t.Fatalf("MatchAPI(%s, %s): %v", merchant, op, err)
	}
	return r, ok
}

func ids(rules []faults.Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.ID)
	}
	return out
}

// fileRules are four rules a --faults file could hold.
func fileRules() []faults.Rule {
	return []faults.Rule{
		{Operation: "createPayment", Status: 503, Times: ptr(2), Source: "f.yaml:1"},
		{Status: 500, Source: "f.yaml:4"},
		{Operation: "retrievePayment", Status: 502, Probability: ptr(0.5), Source: "f.yaml:7"},
		{Target: faults.TargetWebhooks, Duplicate: 2, Times: ptr(1), Source: "f.yaml:10"},
	}
}

func addListsInMatchingOrder(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{})
	anyOld := add(t, s, "m1", faults.Rule{Status: 500, Times: ptr(3)})
	create := add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503})
	hook := add(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, BadSignature: true})
	anyNew := add(t, s, "m1", faults.Rule{DelayMS: 10, Probability: ptr(0.25)})
	if create.Source != "api" || create.Target != faults.TargetAPI || create.When != faults.WhenBefore || *create.Probability != 1 {
		t.Errorf("added rule = %+v, want its defaults filled", create)
	}
	got := list(t, s, "m1")
	if want := []string{create.ID, anyNew.ID, anyOld.ID, hook.ID}; !slices.Equal(ids(got), want) {
		t.Fatalf("listed %v, want %v", ids(got), want)
	}
	if r := got[2]; r.Times == nil || *r.Times != 3 || r.Remaining == nil || *r.Remaining != 3 || r.Hits != 0 {
		t.Errorf("listed %+v, want times 3, remaining 3, no hits", r)
	}
	if r := got[1]; *r.Probability != 0.25 || r.DelayMS != 10 || r.Remaining != nil {
		t.Errorf("listed %+v, want the rule as added", r)
	}
	if l := list(t, s, "m2"); l == nil || len(l) != 0 {
		t.Errorf("another merchant lists %v, want an empty list", l)
	}
}

func deleteOne(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{})
	a := add(t, s, "m1", faults.Rule{Status: 500})
	b := add(t, s, "m1", faults.Rule{Status: 503})
	other := add(t, s, "m2", faults.Rule{Status: 502})
	if err := s.Delete(t.Context(), "m1", a.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ merchant, id string }{{"m1", a.ID}, {"m1", other.ID}, {"m1", "flt_nope"}, {"m3", b.ID}} {
		var pe *paymock.Error
		if err := s.Delete(t.Context(), c.merchant, c.id); !errors.As(err, &pe) || pe.Type != paymock.NotFound {
			t.Errorf("Delete(%s, %s) = %v, want not found", c.merchant, c.id, err)
		}
	}
	if got := ids(list(t, s, "m1")); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("m1 lists %v, want %v", got, []string{b.ID})
	}
	if got := ids(list(t, s, "m2")); !slices.Equal(got, []string{other.ID}) {
		t.Errorf("m2 lists %v, want its rule untouched", got)
	}
	if r, ok := matchAPI(t, s, "m1", "createPayment"); !ok || r.ID != b.ID {
		t.Errorf("matched %q, %v, want the rule left", r.ID, ok)
	}
}

func clearUntilReset(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{FileRules: fileRules()})
	add(t, s, "m1", faults.Rule{Status: 500})
	if err := s.Clear(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	if l := list(t, s, "m1"); len(l) != 0 {
		t.Errorf("after Clear m1 lists %v", ids(l))
	}
	if _, ok := matchAPI(t, s, "m1", "createPayment"); ok {
		t.Error("a rule fired after Clear")
	}
	if l := list(t, s, "m2"); len(l) != len(fileRules()) {
		t.Errorf("another merchant lists %d rules, want the %d file rules", len(l), len(fileRules()))
	}
	if err := s.Reset(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	if l := list(t, s, "m1"); len(l) != len(fileRules()) {
		t.Errorf("after Reset m1 lists %d rules, want the %d file rules back", len(l), len(fileRules()))
	}
}

func timesUnderConcurrency(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{FileRules: fileRules()[3:]})
	add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(25)})
	add(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, EventType: "payment.failed", Duplicate: 2, Times: ptr(7)})
	var apiHits, hookHits, fileHits atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if _, ok, err := s.MatchAPI(t.Context(), "m1", "createPayment"); err != nil {
					t.Error(err)
				} else if ok {
					apiHits.Add(1)
				}
				r, ok, err := s.MatchWebhook(t.Context(), "m1", "payment.failed")
				switch {
				case err != nil:
					t.Error(err)
				case ok && r.Source == "api":
					hookHits.Add(1)
				case ok:
					fileHits.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if apiHits.Load() != 25 || hookHits.Load() != 7 || fileHits.Load() != 1 {
		t.Errorf("%d API hits, %d webhook hits, %d file rule hits; want exactly 25, 7 and 1",
			apiHits.Load(), hookHits.Load(), fileHits.Load())
	}
	if l := list(t, s, "m1"); len(l) != 0 {
		t.Errorf("spent rules are still listed: %v", ids(l))
	}
}

func untilRemovedCountsHits(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{})
	r := add(t, s, "m1", faults.Rule{Operation: "listPayments", Status: 500, Times: ptr(2)})
	for i := range 2 {
		got, ok := matchAPI(t, s, "m1", "listPayments")
		if !ok || got.ID != r.ID || got.Hits != i+1 || *got.Remaining != 1-i {
			t.Fatalf("match %d = %+v, %v; want hit %d with %d remaining", i+1, got, ok, i+1, 1-i)
		}
	}
	if _, ok := matchAPI(t, s, "m1", "listPayments"); ok {
		t.Error("a rule fired past its times")
	}
	forever := add(t, s, "m1", faults.Rule{Operation: "listPayments", Status: 500})
	for range 5 {
		matchAPI(t, s, "m1", "listPayments")
	}
	if l := list(t, s, "m1"); len(l) != 1 || l[0].ID != forever.ID || l[0].Hits != 5 || l[0].Remaining != nil {
		t.Errorf("listed %+v, want the lasting rule with 5 hits", l)
	}
}

func matchOrder(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	file := []faults.Rule{{Operation: "createPayment", Status: 502, Source: "f:1"}, {Status: 504, Source: "f:2"}}
	s := newSet(t, open(t), faults.Config{FileRules: file})
	oldAny := add(t, s, "m1", faults.Rule{Status: 500, Times: ptr(1)})
	oldCreate := add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(1)})
	newAny := add(t, s, "m1", faults.Rule{Status: 429, Times: ptr(1)})
	newCreate := add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(1)})
	l := list(t, s, "m1")
	if len(l) != 6 || l[4].Source != "f:1" || l[5].Source != "f:2" {
		t.Fatalf("listed %+v, want four API rules then the file rules in file order", l)
	}
	want := []string{newCreate.ID, oldCreate.ID, newAny.ID, oldAny.ID, l[4].ID, l[4].ID}
	for i, w := range want {
		if r, _ := matchAPI(t, s, "m1", "createPayment"); r.ID != w {
			t.Errorf("match %d fired %s, want %s", i+1, r.ID, w)
		}
	}
	if r, _ := matchAPI(t, s, "m1", "listPayments"); r.ID != l[5].ID {
		t.Errorf("listPayments fired %s, want the file rule for any", r.ID)
	}
}

func webhookRules(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{})
	anyEvent := add(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, Reorder: true})
	failed := add(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, EventType: "payment.failed", Duplicate: 3})
	for _, c := range []struct{ event, want string }{{"payment.failed", failed.ID}, {"payment.completed", anyEvent.ID}} {
		r, ok, err := s.MatchWebhook(t.Context(), "m1", c.event)
		if err != nil || !ok || r.ID != c.want {
			t.Errorf("MatchWebhook(%s) = %q, %v, %v; want %s", c.event, r.ID, ok, err, c.want)
		}
	}
	if r, ok := matchAPI(t, s, "m1", "createPayment"); ok {
		t.Errorf("a webhook rule fired for an API call: %+v", r)
	}
	if _, ok, _ := s.MatchWebhook(t.Context(), "m2", "payment.failed"); ok {
		t.Error("another merchant's webhook rule fired")
	}
}

// hits records which of n calls of createPayment a rule fired for.
func hits(t *testing.T, s *faults.Set, merchant string, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		_, out[i] = matchAPI(t, s, merchant, "createPayment")
	}
	return out
}

func seededDraws(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	var runs [][]bool
	for _, store := range []paymock.FaultRules{open(t), open(t), memory.NewFaultRules()} {
		s := newSet(t, store, faults.Config{Seed: 42, FileRules: []faults.Rule{{Status: 500, Probability: ptr(0.3)}}})
		add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.5)})
		add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 502, Probability: ptr(0.0)})
		runs = append(runs, hits(t, s, "m1", 200))
	}
	fired := 0
	for _, h := range runs[0] {
		if h {
			fired++
		}
	}
	// 1 - 0.5 * 0.7 of 200 calls are expected to fire: 130.
	if fired < 90 || fired > 170 {
		t.Errorf("%d of 200 calls fired, want about 130", fired)
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Error("two runs with one seed fired for different calls")
	}
	if !slices.Equal(runs[0], runs[2]) {
		t.Error("this backend fired for other calls than the memory backend with the same seed")
	}
	s := newSet(t, open(t), faults.Config{Seed: 43, FileRules: []faults.Rule{{Status: 500, Probability: ptr(0.3)}}})
	add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.5)})
	if slices.Equal(hits(t, s, "m1", 200), runs[0]) {
		t.Error("another seed fired for the same calls")
	}
}

func fileRulesPerMerchant(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	store := open(t)
	s := newSet(t, store, faults.Config{FileRules: fileRules()})
	again := newSet(t, store, faults.Config{FileRules: fileRules()})
	inMemory := newSet(t, memory.NewFaultRules(), faults.Config{FileRules: fileRules()})
	if a, b, c := ids(list(t, s, "m1")), ids(list(t, again, "m1")), ids(list(t, inMemory, "m1")); !slices.Equal(a, b) || !slices.Equal(a, c) {
		t.Fatalf("file rule ids %v, %v and in memory %v differ for one file", a, b, c)
	}
	for _, m := range []string{"m1", "m2"} {
		for i, want := range []string{"f.yaml:1", "f.yaml:1", "f.yaml:4"} {
			r, ok := matchAPI(t, s, m, "createPayment")
			if !ok || r.Source != want || (i < 2 && *r.Remaining != 1-i) {
				t.Errorf("%s match %d = %+v, %v; want %s (the first while it has times)", m, i+1, r, ok, want)
			}
		}
	}
	l := list(t, again, "m1")
	if len(l) != 3 {
		t.Fatalf("m1 lists %d rules on another Set, want the 3 file rules left", len(l))
	}
	if err := again.Delete(t.Context(), "m1", l[0].ID); err != nil {
		t.Fatal(err)
	}
	if len(list(t, s, "m1")) != 2 || len(list(t, s, "m3")) != 4 {
		t.Error("deleting a file rule for one merchant changed another's")
	}
}

func merchantsIsolated(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{Seed: 7})
	r := add(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.5)})
	add(t, s, "m2", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.5)})
	var mixed []bool
	for range 50 {
		hits(t, s, "m2", 3)
		mixed = append(mixed, hits(t, s, "m1", 1)...)
	}
	if _, ok := matchAPI(t, s, "m3", "createPayment"); ok {
		t.Error("a merchant without rules matched another's")
	}
	ref := newSet(t, memory.NewFaultRules(), faults.Config{Seed: 7, IDs: fixedID(r.ID).New})
	add(t, ref, "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.5)})
	if want := hits(t, ref, "m1", 50); !slices.Equal(mixed, want) {
		t.Error("another merchant's calls changed this merchant's draws")
	}
}

// fixedID gives every rule one id.
type fixedID string

func (f fixedID) New(context.Context, string) (string, error) { return string(f), nil }

func limits(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{MaxRules: 3, FileRules: fileRules()[:1]})
	a := add(t, s, "m1", faults.Rule{Status: 500})
	add(t, s, "m1", faults.Rule{Status: 503})
	_, err := s.Add(t.Context(), "m1", faults.Rule{Status: 502})
	var pe *paymock.Error
	if !errors.As(err, &pe) || pe.Type != paymock.InvalidRequest || len(pe.Violations) != 1 || pe.Violations[0].Code != "fault_limit_reached" {
		t.Fatalf("third rule: %v, want fault_limit_reached", err)
	}
	add(t, s, "m2", faults.Rule{Status: 502})
	if err := s.Delete(t.Context(), "m1", a.ID); err != nil {
		t.Fatal(err)
	}
	add(t, s, "m1", faults.Rule{Status: 502})
	if _, err := s.Add(t.Context(), "m1", faults.Rule{Status: 999}); !errors.As(err, &pe) || pe.Violations[0].Param != "status" {
		t.Errorf("invalid rule: %v, want a violation of status", err)
	}
	if l := list(t, s, "m1"); len(l) != 3 {
		t.Errorf("m1 lists %d rules, want 3", len(l))
	}
}

func reset(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	file := []faults.Rule{{Status: 500, Probability: ptr(0.5), Times: ptr(20)}}
	s := newSet(t, open(t), faults.Config{Seed: 3, FileRules: file})
	add(t, s, "m1", faults.Rule{Operation: "listPayments", Status: 503})
	before := hits(t, s, "m1", 30)
	if err := s.Reset(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	l := list(t, s, "m1")
	if len(l) != 1 || l[0].Hits != 0 || *l[0].Remaining != 20 {
		t.Fatalf("after Reset m1 lists %+v, want the file rule alone with full counts", l)
	}
	if after := hits(t, s, "m1", 30); !slices.Equal(before, after) {
		t.Error("the draws did not restart with the reset")
	}
}

func noRule(t *testing.T, open func(t *testing.T) paymock.FaultRules) {
	s := newSet(t, open(t), faults.Config{FileRules: []faults.Rule{{Operation: "retrievePayment", Status: 500}}})
	add(t, s, "busy", faults.Rule{Operation: "listPayments", Status: 500})
	for _, m := range []string{"quiet", "busy"} {
		if r, ok := matchAPI(t, s, m, "createPayment"); ok {
			t.Errorf("%s matched %+v for an operation no rule names", m, r)
		}
		if r, ok, err := s.MatchWebhook(t.Context(), m, "payment.completed"); ok || err != nil {
			t.Errorf("%s matched %+v, %v for a delivery", m, r, err)
		}
	}
	if err := s.Forget(t.Context(), "quiet"); err != nil {
		t.Error(err)
	}
}
