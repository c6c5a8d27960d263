// Tests of per-merchant rule books: adding, listing, removing, matching
// order, countdowns, seeded draws, concurrency and the cost of no rules.

package faults_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
)

// seqIDs makes readable, predictable ids: flt_1, flt_2, ...
type seqIDs struct {
	mu sync.Mutex
	n  int
}

func (s *seqIDs) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("%s_%d", prefix, s.n)
}

func newSet(t testing.TB, cfg faults.Config) *faults.Set {
	t.Helper()
	if cfg.IDs == nil {
		cfg.IDs = &seqIDs{}
	}
	s, err := faults.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustAdd(t testing.TB, s *faults.Set, merchant string, r faults.Rule) faults.Rule {
	t.Helper()
	got, err := s.Add(merchant, r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return got
}

func ids(rules []faults.Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.ID)
	}
	return out
}

func TestAdd_AssignsIDAndFillsDefaults(t *testing.T) {
	s := newSet(t, faults.Config{IDs: paymock.NewIDs(nil)})
	r := mustAdd(t, s, "m1", faults.Rule{Status: 503, Times: ptr(2), ID: "flt_mine", Hits: 7, Remaining: ptr(9)})
	if !strings.HasPrefix(r.ID, "flt_") || len(r.ID) != 4+paymock.IDLength || r.Source != "api" {
		t.Errorf("id %q source %q", r.ID, r.Source)
	}
	if r.Operation != "*" || r.When != faults.WhenBefore || *r.Probability != 1 || *r.Remaining != 2 || r.Hits != 0 {
		t.Errorf("added rule %+v", r)
	}
	if got := s.List("m1"); len(got) != 1 || got[0].ID != r.ID {
		t.Errorf("List = %+v", got)
	}
	if got := s.List("m2"); got == nil || len(got) != 0 {
		t.Errorf("another merchant's List = %#v, want an empty, non-nil list", got)
	}
}

func TestAdd_RefusesInvalidRulesAndChangesNothing(t *testing.T) {
	s := newSet(t, faults.Config{Operations: []string{"createPayment"}})
	_, err := s.Add("m1", faults.Rule{Operation: "listPayments", Status: 418, Probability: ptr(2.0)})
	e, ok := paymock.AsError(err)
	if !ok || e.Type != paymock.InvalidRequest || len(e.Violations) != 3 {
		t.Fatalf("err = %+v, want an invalid_request_error with 3 violations", err)
	}
	if got := []string{e.Violations[0].Param, e.Violations[1].Param, e.Violations[2].Param}; !slices.Equal(got, []string{"probability", "operation", "status"}) {
		t.Errorf("params %v", got)
	}
	if got := s.List("m1"); len(got) != 0 {
		t.Errorf("a refused rule was kept: %+v", got)
	}
}

func TestAdd_LimitsRulesPerMerchant(t *testing.T) {
	s := newSet(t, faults.Config{MaxRules: 2})
	mustAdd(t, s, "m1", faults.Rule{Status: 503})
	mustAdd(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, Reorder: true})
	_, err := s.Add("m1", faults.Rule{Status: 500})
	if e, ok := paymock.AsError(err); !ok || e.Code != "fault_limit_reached" || !strings.Contains(e.Message, "at most 2") {
		t.Errorf("third rule: %v", err)
	}
	mustAdd(t, s, "m2", faults.Rule{Status: 500})
}

func TestMatchAPI_CountsDownTimes(t *testing.T) {
	s := newSet(t, faults.Config{})
	mustAdd(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(2)})
	var got []string
	for range 4 {
		r, ok := s.MatchAPI("m1", "createPayment")
		if !ok {
			got = append(got, "none")
			continue
		}
		got = append(got, fmt.Sprintf("%d remaining=%d hits=%d", r.Status, *r.Remaining, r.Hits))
	}
	want := []string{"503 remaining=1 hits=1", "503 remaining=0 hits=2", "none", "none"}
	if !slices.Equal(got, want) {
		t.Errorf("matches %q, want %q", got, want)
	}
	if l := s.List("m1"); len(l) != 0 {
		t.Errorf("a rule whose times ran out is still listed: %+v", l)
	}
}

func TestMatchAPI_UntilRemovedCountsHits(t *testing.T) {
	s := newSet(t, faults.Config{})
	r := mustAdd(t, s, "m1", faults.Rule{Operation: "listPayments", DelayMS: 10})
	for range 3 {
		if _, ok := s.MatchAPI("m1", "listPayments"); !ok {
			t.Fatal("no match")
		}
	}
	if _, ok := s.MatchAPI("m1", "createPayment"); ok {
		t.Error("a listPayments rule matched createPayment")
	}
	if _, ok := s.MatchAPI("m2", "listPayments"); ok {
		t.Error("m1's rule matched m2")
	}
	l := s.List("m1")
	if len(l) != 1 || l[0].Hits != 3 || l[0].Remaining != nil {
		t.Errorf("List = %+v, want hits 3 and no remaining", l)
	}
	if err := s.Delete("m1", r.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.MatchAPI("m1", "listPayments"); ok {
		t.Error("a deleted rule matched")
	}
}

func TestMatchAPI_MostSpecificFirst(t *testing.T) {
	s := newSet(t, faults.Config{FileRules: []faults.Rule{
		{Status: 500}, // flt_1: file, any operation
		{Operation: "createPayment", Status: 502}, // flt_2: file, createPayment
	}})
	oldAny := mustAdd(t, s, "m1", faults.Rule{Status: 503, Times: ptr(1)})
	oldCreate := mustAdd(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 504, Times: ptr(1)})
	newCreate := mustAdd(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 429, Times: ptr(1)})
	newAny := mustAdd(t, s, "m1", faults.Rule{DelayMS: 5, Times: ptr(1)})

	want := []string{newCreate.ID, oldCreate.ID, newAny.ID, oldAny.ID, "flt_2", "flt_2", "flt_2"}
	if l := ids(s.List("m1")); !slices.Equal(l, []string{newCreate.ID, oldCreate.ID, newAny.ID, oldAny.ID, "flt_2", "flt_1"}) {
		t.Errorf("List order %v", l)
	}
	var got []string
	for range want {
		r, _ := s.MatchAPI("m1", "createPayment")
		got = append(got, r.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("createPayment matched %v, want %v", got, want)
	}
	if r, _ := s.MatchAPI("m1", "listPayments"); r.ID != "flt_1" {
		t.Errorf("listPayments matched %q, want the file's any-operation rule flt_1", r.ID)
	}
}

func TestMatchAPI_FileRulesCountPerMerchant(t *testing.T) {
	rules, err := faults.LoadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := newSet(t, faults.Config{FileRules: rules})
	for _, m := range []string{"m1", "m2"} {
		for i := range 3 {
			r, ok := s.MatchAPI(m, "createPayment")
			if i < 2 && (!ok || r.Status != 503 || r.Source != "testdata/good.yaml:2") {
				t.Errorf("%s call %d: %+v %v, want the file's 503", m, i, r, ok)
			}
			if i == 2 && ok && r.Status == 503 {
				t.Errorf("%s call 3: the times=2 file rule fired again", m)
			}
		}
	}

	s.Clear("m1")
	if l := s.List("m1"); len(l) != 0 {
		t.Errorf("after Clear: %+v", l)
	}
	if _, ok := s.MatchAPI("m1", "retrievePayment"); ok {
		t.Error("a cleared file rule matched")
	}
	if _, ok := s.MatchAPI("m3", "retrievePayment"); !ok {
		t.Error("clearing m1 removed the file rules of m3")
	}

	s.Reset("m1")
	l := s.List("m1")
	if len(l) != 5 || *l[0].Remaining != 2 || l[0].Hits != 0 {
		t.Errorf("after Reset: %+v, want the 5 file rules at full count", l)
	}
	other := s.List("m3")
	if err := s.Delete("m3", other[0].ID); err != nil {
		t.Fatalf("deleting a file rule for one merchant: %v", err)
	}
	if len(s.List("m3")) != 4 || len(s.List("m1")) != 5 {
		t.Error("deleting a file rule for m3 changed another merchant")
	}
}

func TestDelete_UnknownOrAnotherMerchantsRuleIsNotFound(t *testing.T) {
	s := newSet(t, faults.Config{})
	r := mustAdd(t, s, "m1", faults.Rule{Status: 503})
	for _, c := range []struct{ merchant, id string }{{"m2", r.ID}, {"m1", "flt_nope"}, {"m3", "flt_nope"}} {
		err := s.Delete(c.merchant, c.id)
		e, ok := paymock.AsError(err)
		if !ok || e.Type != paymock.NotFound || e.Code != "resource_missing" || !strings.Contains(e.Message, c.id) {
			t.Errorf("Delete(%s, %s) = %v, want not_found_error", c.merchant, c.id, err)
		}
	}
	if len(s.List("m1")) != 1 {
		t.Error("a failed delete removed a rule")
	}
}

func TestMatchWebhook_ByEventType(t *testing.T) {
	s := newSet(t, faults.Config{})
	anyEvent := mustAdd(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, BadSignature: true})
	completed := mustAdd(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, EventType: "payment.completed", Duplicate: 2, Times: ptr(1)})
	mustAdd(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503})

	cases := []struct{ event, want string }{
		{"payment.completed", completed.ID},
		{"payment.completed", anyEvent.ID},
		{"payment.failed", anyEvent.ID},
	}
	for _, c := range cases {
		if r, ok := s.MatchWebhook("m1", c.event); !ok || r.ID != c.want {
			t.Errorf("MatchWebhook(%s) = %q %v, want %q", c.event, r.ID, ok, c.want)
		}
	}
	if r, ok := s.MatchAPI("m1", "retrievePayment"); ok {
		t.Errorf("a webhook rule matched an API call: %+v", r)
	}
	if _, ok := s.MatchWebhook("m2", "payment.failed"); ok {
		t.Error("m1's webhook rule matched m2")
	}
}

// hitPattern records which of n calls a rule with probability p fired on.
func hitPattern(t *testing.T, seed uint64, merchant string, n int) string {
	s := newSet(t, faults.Config{Seed: seed})
	mustAdd(t, s, merchant, faults.Rule{Status: 503, Probability: ptr(0.25)})
	var b strings.Builder
	for range n {
		if _, ok := s.MatchAPI(merchant, "createPayment"); ok {
			b.WriteByte('x')
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func TestMatchAPI_ProbabilityIsReproducibleFromTheSeed(t *testing.T) {
	a := hitPattern(t, 42, "m1", 400)
	b := hitPattern(t, 42, "m1", 400)
	if a != b {
		t.Errorf("same seed, different hits:\n%s\n%s", a, b)
	}
	if c := hitPattern(t, 43, "m1", 400); c == a {
		t.Error("another seed gave the same hits")
	}
	if d := hitPattern(t, 42, "m2", 400); d == a {
		t.Error("another merchant gave the same hits")
	}
	if n := strings.Count(a, "x"); n < 60 || n > 140 {
		t.Errorf("%d hits in 400 calls at probability 0.25", n)
	}
}

func TestMatchAPI_OneMerchantsCallsLeaveAnothersDrawsAlone(t *testing.T) {
	alone := hitPattern(t, 7, "m1", 200)
	// Same seed and rule for m1, but another client's calls for m2 come
	// between m1's calls, drawing at the same time.
	s := newSet(t, faults.Config{Seed: 7})
	mustAdd(t, s, "m2", faults.Rule{Status: 500, Probability: ptr(0.5)})
	mustAdd(t, s, "m1", faults.Rule{Status: 503, Probability: ptr(0.25)})
	var b strings.Builder
	for range 200 {
		s.MatchAPI("m2", "createPayment")
		if _, ok := s.MatchAPI("m1", "createPayment"); ok {
			b.WriteByte('x')
		} else {
			b.WriteByte('.')
		}
	}
	if b.String() != alone {
		t.Errorf("m2's traffic changed m1's hits:\n%s\n%s", alone, b.String())
	}
}

func TestReset_ForgetsRulesCountsAndRestartsDraws(t *testing.T) {
	s := newSet(t, faults.Config{Seed: 1})
	pattern := func() string {
		var b strings.Builder
		for range 50 {
			if _, ok := s.MatchAPI("m1", "createPayment"); ok {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	mustAdd(t, s, "m1", faults.Rule{Status: 503, Probability: ptr(0.5)})
	first := pattern()
	s.Reset("m1")
	if l := s.List("m1"); len(l) != 0 {
		t.Fatalf("after Reset: %+v", l)
	}
	mustAdd(t, s, "m1", faults.Rule{Status: 503, Probability: ptr(0.5)})
	if again := pattern(); again != first {
		t.Errorf("draws after a reset differ:\n%s\n%s", first, again)
	}
	s.Forget("m1")
	if _, ok := s.MatchAPI("m1", "createPayment"); ok {
		t.Error("a forgotten merchant's rule matched")
	}
}

func TestMatchAPI_ConcurrentCallsFireExactlyTimes(t *testing.T) {
	s := newSet(t, faults.Config{})
	mustAdd(t, s, "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(100)})
	mustAdd(t, s, "m1", faults.Rule{Target: faults.TargetWebhooks, Reorder: true, Times: ptr(100)})
	var wg sync.WaitGroup
	var mu sync.Mutex
	hits, hookHits := 0, 0
	for g := range 50 {
		wg.Go(func() {
			n, h := 0, 0
			for range 10 {
				if _, ok := s.MatchAPI("m1", "createPayment"); ok {
					n++
				}
				if _, ok := s.MatchWebhook("m1", "payment.failed"); ok {
					h++
				}
				if g%10 == 0 {
					s.List("m1")
					s.Add("m1", faults.Rule{Operation: "listPayments", Status: 500})
				}
			}
			mu.Lock()
			hits += n
			hookHits += h
			mu.Unlock()
		})
	}
	wg.Wait()
	if hits != 100 || hookHits != 100 {
		t.Errorf("%d API hits and %d webhook hits, want exactly 100 each", hits, hookHits)
	}
	for _, r := range s.List("m1") {
		if r.Operation != "listPayments" {
			t.Errorf("a spent rule is still listed: %+v", r)
		}
	}
}

func TestMatchAPI_NoRuleForTheCallAllocatesNothing(t *testing.T) {
	s := newSet(t, faults.Config{})
	for i := range 100 {
		mustAdd(t, s, "busy", faults.Rule{Operation: "listPayments", Status: 500})
		mustAdd(t, s, fmt.Sprintf("other%d", i), faults.Rule{Status: 503})
	}
	for _, m := range []string{"quiet", "busy"} {
		if n := testing.AllocsPerRun(1000, func() { s.MatchAPI(m, "createPayment") }); n != 0 {
			t.Errorf("MatchAPI for %s allocates %.1f times per call", m, n)
		}
	}
}

func TestNew_RefusesFileRulesTheContractLacks(t *testing.T) {
	_, err := faults.New(faults.Config{Operations: []string{"createPayment"},
		FileRules: []faults.Rule{{Operation: "listPayments", Status: 503, Source: "f.yaml:3"}}})
	if err == nil || !strings.Contains(err.Error(), "f.yaml:3") || !strings.Contains(err.Error(), `"listPayments"`) {
		t.Errorf("err = %v, want the rule's source and operation named", err)
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
			b.ReportAllocs()
			for b.Loop() {
				s.MatchAPI("m1", "createPayment")
			}
		})
	}
}
