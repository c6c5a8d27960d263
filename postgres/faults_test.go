// Tests of fault rules shared through PostgreSQL: several faults.Sets on
// one database, as several replicas hold them, behave as one rule book.

package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/internal/faultstest"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/memory"
)

func TestFaultRules_Conformance(t *testing.T) {
	faultstest.Run(t, func(t *testing.T) paymock.FaultRules {
		s, _ := openStore(t)
		return s
	})
}

// seqIDs makes predictable rule ids, as a seeded run does: every replica
// seeded alike makes the same ones.
type seqIDs struct {
	mu sync.Mutex
	n  int
}

func (s *seqIDs) New(context.Context, string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("flt_%024d", s.n), nil
}

// ruleBooks opens n Sets on one new database, each through its own Store,
// as n replicas would, with cfg (its Store set for each, and IDs when nil).
// It returns the database's URL too, for more replicas.
func ruleBooks(t *testing.T, n int, cfg faults.Config) ([]*faults.Set, string) {
	t.Helper()
	_, url := openStore(t)
	return ruleBooksOn(t, url, n, cfg), url
}

func ruleBooksOn(t *testing.T, url string, n int, cfg faults.Config) []*faults.Set {
	t.Helper()
	out := make([]*faults.Set, n)
	for i := range out {
		st, err := Open(t.Context(), Config{URL: url, MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		c := cfg
		c.Store = st
		if c.IDs == nil {
			c.IDs = (&seqIDs{}).New
		}
		if out[i], err = faults.New(c); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func mustAdd(t *testing.T, s *faults.Set, merchant string, r faults.Rule) faults.Rule {
	t.Helper()
	got, err := s.Add(t.Context(), merchant, r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return got
}

func mustList(t *testing.T, s *faults.Set, merchant string) []faults.Rule {
	t.Helper()
	l, err := s.List(t.Context(), merchant)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fires reports whether a call of the operation matched a rule, and which.
func fires(t *testing.T, s *faults.Set, merchant, operation string) string {
	t.Helper()
	r, ok, err := s.MatchAPI(t.Context(), merchant, operation)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "none"
	}
	return r.ID
}

// summary is a listed rule's id and counts.
func summary(r faults.Rule) string {
	s := fmt.Sprintf("%s %s hits=%d", r.ID, r.Source, r.Hits)
	if r.Remaining != nil {
		s += fmt.Sprintf(" remaining=%d", *r.Remaining)
	}
	return s
}

func summaries(rs []faults.Rule) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, summary(r))
	}
	return out
}

func TestFaultRules_AddedOnOneReplicaListedMatchedAndDeletedOnAnother(t *testing.T) {
	books, _ := ruleBooks(t, 2, faults.Config{})
	a, b := books[0], books[1]
	until := mustAdd(t, a, "m1", faults.Rule{Operation: "listPayments", Status: 503, RetryAfter: 0, DelayMS: 5})
	twice := mustAdd(t, a, "m1", faults.Rule{Operation: "createPayment", Status: 429, Times: ptr(2)})
	hook := mustAdd(t, a, "m1", faults.Rule{Target: faults.TargetWebhooks, EventType: "payment.failed", BadSignature: true})

	got := mustList(t, b, "m1")
	if want := []faults.Rule{twice, until, hook}; len(got) != len(want) {
		t.Fatalf("B lists %v, want %v", summaries(got), summaries(want))
	}
	// B lists what A answered, field for field.
	for i, want := range []faults.Rule{twice, until, hook} {
		if deref(got[i]) != deref(want) {
			t.Errorf("B lists\n%+v\nA added\n%+v", deref(got[i]), deref(want))
		}
	}
	if l := mustList(t, b, "m2"); l == nil || len(l) != 0 {
		t.Errorf("another merchant lists %#v, want an empty list", l)
	}

	if id := fires(t, b, "m1", "createPayment"); id != twice.ID {
		t.Errorf("B's first create: %s", id)
	}
	r, ok, err := a.MatchAPI(t.Context(), "m1", "createPayment")
	if err != nil || !ok || r.Hits != 2 || *r.Remaining != 0 || r.RetryAfter != 1 {
		t.Errorf("A's create: %+v %v %v, want the rule's second and last hit", deref(r), ok, err)
	}
	if id := fires(t, b, "m1", "createPayment"); id != "none" {
		t.Errorf("a spent rule fired on B: %s", id)
	}
	if h, ok, err := b.MatchWebhook(t.Context(), "m1", "payment.failed"); err != nil || !ok || h.ID != hook.ID {
		t.Errorf("B's delivery: %s %v %v", h.ID, ok, err)
	}
	if _, ok, _ := b.MatchWebhook(t.Context(), "m1", "payment.completed"); ok {
		t.Error("a payment.failed rule shaped a payment.completed delivery")
	}
	if id := fires(t, a, "m2", "listPayments"); id != "none" {
		t.Errorf("m1's rule fired for m2: %s", id)
	}

	if err := b.Delete(t.Context(), "m1", until.ID); err != nil {
		t.Fatal(err)
	}
	if id := fires(t, a, "m1", "listPayments"); id != "none" {
		t.Errorf("a rule deleted on B fired on A: %s", id)
	}
	for _, tc := range []struct{ merchant, id string }{
		{"m1", until.ID}, {"m1", twice.ID}, {"m2", hook.ID}, {"m1", "flt_unknown"}, {"m1", "flt_\x00"}, {"m1", "\xff"},
	} {
		err := a.Delete(t.Context(), tc.merchant, tc.id)
		if e, ok := paymock.AsError(err); !ok || e.Type != paymock.NotFound {
			t.Errorf("Delete(%s, %q) = %v, want not found", tc.merchant, tc.id, err)
		}
	}
	if got := summaries(mustList(t, a, "m1")); !slices.Equal(got, []string{hook.ID + " api hits=1"}) {
		t.Errorf("A lists %q", got)
	}
}

// deref shows a rule with its pointer fields by value, to compare rules.
func deref(r faults.Rule) string {
	var extra string
	if r.Times != nil {
		extra += fmt.Sprintf(" times=%d", *r.Times)
	}
	if r.Remaining != nil {
		extra += fmt.Sprintf(" remaining=%d", *r.Remaining)
	}
	if r.Probability != nil {
		extra += fmt.Sprintf(" probability=%v", *r.Probability)
	}
	r.Times, r.Remaining, r.Probability = nil, nil, nil
	return fmt.Sprintf("%+v", r) + extra
}

func TestFaultRules_TimesCountOnceAcrossReplicasUnderConcurrency(t *testing.T) {
	file := []faults.Rule{{Operation: "retrievePayment", Status: 502, Times: ptr(30), Source: "f.yaml:1"}}
	books, _ := ruleBooks(t, 2, faults.Config{FileRules: file})
	mustAdd(t, books[0], "m1", faults.Rule{Operation: "createPayment", Status: 503, Times: ptr(50)})
	mustAdd(t, books[1], "m1", faults.Rule{Target: faults.TargetWebhooks, Reorder: true, Times: ptr(40)})
	var mu sync.Mutex
	hits := map[string]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		s := books[g%2]
		wg.Go(func() {
			for range 8 {
				for _, call := range []struct {
					op   string
					hook bool
				}{{"createPayment", false}, {"retrievePayment", false}, {"payment.completed", true}} {
					var ok bool
					var err error
					if call.hook {
						_, ok, err = s.MatchWebhook(context.Background(), "m1", call.op)
					} else {
						_, ok, err = s.MatchAPI(context.Background(), "m1", call.op)
					}
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						mu.Lock()
						hits[call.op]++
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	// 128 calls of each kind, half on each replica.
	want := map[string]int{"createPayment": 50, "retrievePayment": 30, "payment.completed": 40}
	if fmt.Sprint(hits) != fmt.Sprint(want) {
		t.Errorf("hits %v, want exactly %v", hits, want)
	}
	for _, s := range books {
		if l := mustList(t, s, "m1"); len(l) != 0 {
			t.Errorf("spent rules still listed: %v", summaries(l))
		}
	}
	// The file rule's times are m1's: m2 has its own, whole.
	if l := mustList(t, books[1], "m2"); len(l) != 1 || *l[0].Remaining != 30 {
		t.Errorf("m2 lists %v, want the file rule with 30 remaining", summaries(l))
	}
}

// pattern is which of n calls of createPayment fired, each on the replica
// on(i) picks.
func pattern(t *testing.T, books []*faults.Set, n int, on func(i int) int) string {
	var b strings.Builder
	for i := range n {
		if fires(t, books[on(i)], "m1", "createPayment") == "none" {
			b.WriteByte('.')
		} else {
			b.WriteByte('x')
		}
	}
	return b.String()
}

func TestFaultRules_ProbabilityDrawsAreTheSameWhicheverReplicaDraws(t *testing.T) {
	run := func(seed uint64, on func(i int) int) string {
		file := []faults.Rule{{Operation: "createPayment", Status: 500, Probability: ptr(0.2), Source: "f.yaml:1"}}
		books, _ := ruleBooks(t, 3, faults.Config{Seed: seed, FileRules: file})
		mustAdd(t, books[0], "m1", faults.Rule{Operation: "createPayment", Status: 503, Probability: ptr(0.3)})
		return pattern(t, books, 150, on)
	}
	one := run(42, func(int) int { return 0 })
	spread := run(42, func(i int) int { return (i * 7 / 3) % 3 })
	if one != spread {
		t.Errorf("the same calls spread over replicas gave other hits:\n%s\n%s", one, spread)
	}
	if other := run(43, func(int) int { return 0 }); other == one {
		t.Error("another seed gave the same hits")
	}
	// Both rules draw: about 0.3 + 0.7*0.2 = 44% of calls fire.
	if n := strings.Count(one, "x"); n < 40 || n > 95 {
		t.Errorf("%d hits in 150 calls, want about 66: %s", n, one)
	}

	// A reset restarts the draws: the same rule added again (by a
	// replica started afresh, whose seeded ids start over) fires as
	// before.
	books, url := ruleBooks(t, 2, faults.Config{Seed: 9})
	mustAdd(t, books[0], "m1", faults.Rule{Status: 503, Probability: ptr(0.5)})
	first := pattern(t, books, 60, func(i int) int { return i % 2 })
	if err := books[1].Reset(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	if l := mustList(t, books[0], "m1"); len(l) != 0 {
		t.Fatalf("after a reset on another replica: %v", summaries(l))
	}
	again := ruleBooksOn(t, url, 1, faults.Config{Seed: 9})[0]
	mustAdd(t, again, "m1", faults.Rule{Status: 503, Probability: ptr(0.5)})
	if second := pattern(t, []*faults.Set{again}, 60, func(int) int { return 0 }); second != first {
		t.Errorf("draws after a reset differ:\n%s\n%s", first, second)
	}
}

func TestFaultRules_FileRulesCountPerMerchantOnEveryReplica(t *testing.T) {
	file := []faults.Rule{
		{Operation: "retrievePayment", Status: 502, Times: ptr(2), Source: "/etc/paymock/faults.yaml:1"},
		{Target: faults.TargetWebhooks, Duplicate: 2, Source: "/etc/paymock/faults.yaml:4"},
	}
	books, url := ruleBooks(t, 1, faults.Config{FileRules: file})
	// Another host keeps the same file elsewhere: the ids are the same.
	moved := slices.Clone(file)
	moved[0].Source, moved[1].Source = "faults.yaml:1", "faults.yaml:4"
	books = append(books, ruleBooksOn(t, url, 1, faults.Config{FileRules: moved})...)
	a, b := books[0], books[1]
	la, lb := mustList(t, a, "m1"), mustList(t, b, "m1")
	if len(la) != 2 || la[0].ID != lb[0].ID || la[1].ID != lb[1].ID || la[0].ID == la[1].ID {
		t.Fatalf("A lists %v, B lists %v: want the same two ids", summaries(la), summaries(lb))
	}
	retrieve, dup := la[0].ID, la[1].ID

	if fires(t, a, "m1", "retrievePayment") != retrieve || fires(t, b, "m1", "retrievePayment") != retrieve {
		t.Error("the file rule did not fire on each replica in turn")
	}
	if id := fires(t, a, "m1", "retrievePayment"); id != "none" {
		t.Errorf("times 2 fired a third time: %s", id)
	}
	if l := summaries(mustList(t, b, "m2")); l[0] != retrieve+" /etc/paymock/faults.yaml:1 hits=0 remaining=2" &&
		l[0] != retrieve+" faults.yaml:1 hits=0 remaining=2" {
		t.Errorf("m2 lists %q: its countdown is its own", l)
	}

	// Deleting a file rule on B removes it for m1 on A, not for m2.
	if err := b.Delete(t.Context(), "m1", dup); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.MatchWebhook(t.Context(), "m1", "payment.completed"); ok {
		t.Error("a file rule deleted on B shaped a delivery on A")
	}
	if _, ok, _ := a.MatchWebhook(t.Context(), "m2", "payment.completed"); !ok {
		t.Error("m1's delete removed the file rule for m2")
	}
	if err := a.Delete(t.Context(), "m1", dup); !isNotFound(err) {
		t.Errorf("deleting it again: %v, want not found", err)
	}
	if err := a.Delete(t.Context(), "m1", retrieve); !isNotFound(err) {
		t.Errorf("deleting a spent file rule: %v, want not found", err)
	}

	// Clear on A removes m1's own rules and the file rules; a reset on B
	// brings the file rules back with fresh counts.
	mustAdd(t, b, "m1", faults.Rule{Status: 500})
	if err := a.Clear(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	if l := mustList(t, b, "m1"); len(l) != 0 {
		t.Errorf("after a clear on A, B lists %v", summaries(l))
	}
	if id := fires(t, b, "m1", "createPayment"); id != "none" {
		t.Errorf("a cleared rule fired: %s", id)
	}
	if err := b.Reset(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	if got := summaries(mustList(t, a, "m1")); len(got) != 2 || !strings.HasSuffix(got[0], "hits=0 remaining=2") {
		t.Errorf("after a reset: %q, want both file rules, fresh", got)
	}
	if len(mustList(t, a, "m2")) != 2 {
		t.Error("m1's clear and reset touched m2")
	}
}

func isNotFound(err error) bool {
	e, ok := paymock.AsError(err)
	return ok && e.Type == paymock.NotFound
}

// TestFaultRules_ListAndMatchInTheMemoryBooksOrder gives a memory Set and a
// shared one the same rules and calls: they list and fire alike.
func TestFaultRules_ListAndMatchInTheMemoryBooksOrder(t *testing.T) {
	file := []faults.Rule{
		{Operation: "*", Status: 500, Source: "f.yaml:1"},
		{Operation: "createPayment", Status: 502, Times: ptr(1), Source: "f.yaml:3"},
		{Target: faults.TargetWebhooks, BadSignature: true, Source: "f.yaml:6"},
	}
	adds := []faults.Rule{
		{Operation: "*", Status: 503, Times: ptr(1)},
		{Operation: "createPayment", Status: 504, Times: ptr(2)},
		{Target: faults.TargetWebhooks, EventType: "payment.failed", Duplicate: 3, Times: ptr(1)},
		{Operation: "createPayment", DelayMS: 1, When: faults.WhenAfter, Times: ptr(1)},
	}
	inMemory, err := faults.New(faults.Config{Store: memory.NewFaultRules(), FileRules: file, IDs: (&seqIDs{}).New})
	if err != nil {
		t.Fatal(err)
	}
	shared, _ := ruleBooks(t, 1, faults.Config{FileRules: file})
	trace := func(s *faults.Set) []string {
		var out []string
		// Ids differ (file rules' are made from the file on a shared
		// store): compare what each rule is.
		show := func(r faults.Rule) string {
			return fmt.Sprintf("%s/%s/%s%s status=%d delay=%d dup=%d hits=%d", r.Source, r.Target, r.Operation, r.EventType,
				r.Status, r.DelayMS, r.Duplicate, r.Hits)
		}
		for _, r := range adds {
			mustAdd(t, s, "m1", r)
		}
		for range 6 {
			for _, l := range mustList(t, s, "m1") {
				out = append(out, "list "+show(l))
			}
			for _, op := range []string{"createPayment", "listPayments"} {
				r, ok, err := s.MatchAPI(t.Context(), "m1", op)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%s %v %s", op, ok, show(r)))
			}
			r, ok, err := s.MatchWebhook(t.Context(), "m1", "payment.failed")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("hook %v %s", ok, show(r)))
		}
		return out
	}
	want, got := trace(inMemory), trace(shared[0])
	if !slices.Equal(got, want) {
		t.Errorf("the shared book differs from the memory one:\n%s\n\nmemory:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFaultRules_LimitHoldsAcrossReplicasAddingAtOnce(t *testing.T) {
	file := []faults.Rule{{Operation: "listPayments", Status: 500, Source: "f.yaml:1"}}
	books, _ := ruleBooks(t, 2, faults.Config{MaxRules: 6, FileRules: file, IDs: ruleIDs(paymock.NewIDs(nil))})
	var mu sync.Mutex
	added, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := books[i%2].Add(context.Background(), "m1", faults.Rule{Status: 503, Times: ptr(1)})
			mu.Lock()
			defer mu.Unlock()
			if e, ok := paymock.AsError(err); ok && e.Code == "fault_limit_reached" && strings.Contains(e.Message, "at most 6") {
				refused++
			} else if err != nil {
				t.Error(err)
			} else {
				added++
			}
		})
	}
	wg.Wait()
	// The file rule takes one of the six places.
	if added != 5 || refused != 15 {
		t.Errorf("%d added and %d refused, want 5 and 15", added, refused)
	}
	// A spent rule frees its place.
	if fires(t, books[0], "m1", "createPayment") == "none" {
		t.Fatal("no rule fired")
	}
	mustAdd(t, books[1], "m1", faults.Rule{Status: 503})
	if _, err := books[0].Add(t.Context(), "m1", faults.Rule{Status: 503}); err == nil {
		t.Error("a seventh rule was added")
	}
	if _, err := books[0].Add(t.Context(), "m2", faults.Rule{Status: 503}); err != nil {
		t.Errorf("another merchant: %v", err)
	}
}

func TestFaultRules_ReplicasSeededAlikeAddRulesUnderTheirOwnIDs(t *testing.T) {
	seed := uint64(5)
	books, url := ruleBooks(t, 1, faults.Config{IDs: ruleIDs(paymock.NewIDs(&seed))})
	books = append(books, ruleBooksOn(t, url, 1, faults.Config{IDs: ruleIDs(paymock.NewIDs(&seed))})...)
	x := mustAdd(t, books[0], "m1", faults.Rule{Operation: "listPayments", Status: 503})
	y := mustAdd(t, books[1], "m1", faults.Rule{Operation: "createPayment", Status: 504})
	if x.ID == y.ID {
		t.Fatalf("both replicas' rules are %s", x.ID)
	}
	if got := summaries(mustList(t, books[0], "m1")); len(got) != 2 {
		t.Errorf("lists %q, want both rules", got)
	}
}

// TestFaultRules_RequestValuesAreParameters keeps rules for merchants and
// finds rule ids that would break SQL built by concatenation.
func TestFaultRules_RequestValuesAreParameters(t *testing.T) {
	books, _ := ruleBooks(t, 1, faults.Config{})
	s := books[0]
	for _, m := range []string{`o'brien`, `x"; DROP TABLE fault_rules; --`, `%_`, `$1`} {
		r := mustAdd(t, s, m, faults.Rule{Status: 503})
		if id := fires(t, s, m, "listPayments"); id != r.ID {
			t.Errorf("%q: fired %s, want %s", m, id, r.ID)
		}
		for _, id := range []string{`' OR '1'='1`, `%`, r.ID + `'; --`} {
			if err := s.Delete(t.Context(), m, id); !isNotFound(err) {
				t.Errorf("%q: Delete(%q) = %v", m, id, err)
			}
		}
	}
	if err := s.Reset(t.Context(), `%_`); err != nil {
		t.Fatal(err)
	}
	for m, want := range map[string]int{`o'brien`: 1, `%_`: 0, `$1`: 1} {
		if l := mustList(t, s, m); len(l) != want {
			t.Errorf("%q lists %d rules after another's reset, want %d", m, len(l), want)
		}
	}
}

func TestFaultRules_DatabaseGoneIsUnavailableNeverAHang(t *testing.T) {
	s, url := openStore(t)
	set, err := faults.New(faults.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	r := mustAdd(t, set, "m1", faults.Rule{Status: 503})
	pgtest.CutOff(t, url)
	ctx := t.Context()
	for _, call := range []struct {
		name string
		run  func() error
	}{
		{"MatchAPI", func() error { _, _, err := set.MatchAPI(ctx, "m1", "listPayments"); return err }},
		{"MatchWebhook", func() error { _, _, err := set.MatchWebhook(ctx, "m1", "payment.failed"); return err }},
		{"Add", func() error { _, err := set.Add(ctx, "m1", faults.Rule{Status: 500}); return err }},
		{"List", func() error { _, err := set.List(ctx, "m1"); return err }},
		{"Delete", func() error { return set.Delete(ctx, "m1", r.ID) }},
		{"Clear", func() error { return set.Clear(ctx, "m1") }},
		{"Reset", func() error { return set.Reset(ctx, "m1") }},
	} {
		start := time.Now()
		err := call.run()
		if !errors.Is(err, paymock.ErrUnavailable) {
			t.Errorf("%s with the database gone = %v, want ErrUnavailable", call.name, err)
		}
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("%s took %s to fail", call.name, took)
		}
	}
	if l, _ := set.List(ctx, "m1"); l == nil || len(l) != 0 {
		t.Errorf("List = %#v, want an empty list beside the error", l)
	}
}

// BenchmarkFaultRules_Match is what a call pays on a shared store: one
// query when no rule fires, one more for the hit when one does.
func BenchmarkFaultRules_Match(b *testing.B) {
	cases := []struct {
		name  string
		setup func(*faults.Set)
	}{
		{"no_rules", func(*faults.Set) {}},
		{"100_rules_other_operations", func(s *faults.Set) {
			for range 100 {
				if _, err := s.Add(context.Background(), "m1", faults.Rule{Operation: "listPayments", Status: 500}); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"hit_until_removed", func(s *faults.Set) {
			if _, err := s.Add(context.Background(), "m1", faults.Rule{Operation: "createPayment", Status: 503}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			st := benchStore(b)
			s, err := faults.New(faults.Config{Store: st})
			if err != nil {
				b.Fatal(err)
			}
			c.setup(s)
			ctx := context.Background()
			for b.Loop() {
				if _, _, err := s.MatchAPI(ctx, "m1", "createPayment"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ruleIDs makes rule ids from g, whatever the merchant.
func ruleIDs(g *paymock.IDs) func(context.Context, string) (string, error) {
	return func(context.Context, string) (string, error) { return g.New("flt"), nil }
}
