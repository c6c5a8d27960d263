// Tests of the in-process server as a merchant's test would use it.

package paymocktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/sandbox"
)

// createBody is a create request that passes every rule.
const createBody = `{"amount":10.5,"currency":"USD","customer":{"email":"jane@example.com","name":"Jane Doe"},` +
	`"description":"Order 1234","expires_in":3600,"metadata":{"order_id":"ord_1234"},` +
	`"success_url":"https://shop.example.com/success","cancel_url":"https://shop.example.com/cancel","mcc":5732}`

// call sends one service API request as the code under test would.
func call(t testing.TB, base, key, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// create makes a payment and returns its id.
func create(t testing.TB, s *paymocktest.Server, body string) string {
	t.Helper()
	status, b := call(t, s.URL, s.APIKey, http.MethodPost, "/api/v1/payments", body)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, b)
	}
	var p struct{ ID string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// fakeTB stands in for a test so that what New reports can be observed:
// the real t is embedded for everything else.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	fatal    string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// runFake runs body as a test of its own, as the testing package would:
// on its own goroutine (Fatalf ends it), then the cleanups, last first.
func runFake(t *testing.T, body func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	return f
}

func TestNew_FailsATestWhoseClientBrokeTheContract(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []paymocktest.Option
		send       func(tb testing.TB, s *paymocktest.Server)
		wantErrors []string // substrings of the one failure; none: no failure
	}{
		{
			name: "a bad create is listed with its violations",
			send: func(tb testing.TB, s *paymocktest.Server) {
				create(tb, s, createBody)
				bad := strings.Replace(createBody, `"USD"`, `"XXX"`, 1)
				bad = strings.Replace(bad, `"jane@example.com"`, `"jane"`, 1)
				call(tb, s.URL, s.APIKey, http.MethodPost, "/api/v1/payments", bad)
				call(tb, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", "")
				call(tb, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments?per_page=500", "")
			},
			wantErrors: []string{
				"sent 2 request(s) that break the contract",
				"POST /api/v1/payments -> 400\n      currency: currency must be one of USD, EUR, GBP, CAD (parameter_invalid)\n      customer.email: ",
				"GET /api/v1/payments?per_page=500 -> 400\n      per_page: ",
				"paymocktest.AllowViolations() turns this check off",
			},
		},
		{
			name: "good requests pass",
			send: func(tb testing.TB, s *paymocktest.Server) {
				id := create(tb, s, createBody)
				call(tb, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments/"+id, "")
				call(tb, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments/pay_unknown", "") // a 404 is no violation
			},
		},
		{
			name: "AllowViolations turns the check off",
			opts: []paymocktest.Option{paymocktest.AllowViolations()},
			send: func(tb testing.TB, s *paymocktest.Server) {
				call(tb, s.URL, s.APIKey, http.MethodPost, "/api/v1/payments", `{"amount":"ten"}`)
			},
		},
		{
			name: "the test's own control calls answer for themselves",
			send: func(tb testing.TB, s *paymocktest.Server) {
				if err := s.Advance(context.Background(), 2*366*24*time.Hour); err == nil {
					tb.Errorf("advancing two years passed")
				}
			},
		},
		{
			name: "a configured merchant's bad request is listed too",
			opts: []paymocktest.Option{paymocktest.WithConfig("testdata/merchants.yaml")},
			send: func(tb testing.TB, s *paymocktest.Server) {
				call(tb, s.URL, "sk_test_globex_1", http.MethodGet, "/api/v1/payments?page=0", "")
			},
			wantErrors: []string{"sent 1 request(s)", "GET /api/v1/payments?page=0 -> 400\n      page: "},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := runFake(t, func(tb testing.TB) { tc.send(tb, paymocktest.New(tb, tc.opts...)) })
			if f.fatal != "" {
				t.Fatalf("Fatalf: %s", f.fatal)
			}
			if len(tc.wantErrors) == 0 {
				if len(f.errors) != 0 {
					t.Fatalf("want no failure, got %q", f.errors)
				}
				return
			}
			if len(f.errors) != 1 {
				t.Fatalf("want one failure, got %q", f.errors)
			}
			t.Logf("the failure reads:\n%s", f.errors[0])
			for _, want := range tc.wantErrors {
				if !strings.Contains(f.errors[0], want) {
					t.Errorf("the failure does not say %q:\n%s", want, f.errors[0])
				}
			}
		})
	}
}

func TestNew_FailsAtOnceOnABadOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  paymocktest.Option
		want string
	}{
		{"config typo", paymocktest.WithConfig("testdata/typo.yaml"), "field api_key not found"},
		{"no config", paymocktest.WithConfig("testdata/nothing.yaml"), "no such file"},
		{"variants", paymocktest.WithVariants("amount=words"), "variants"},
		{"scenarios", paymocktest.WithScenarios("testdata/nothing.yaml"), "nothing.yaml"},
		{"clock", paymocktest.WithClock("sundial", time.Time{}), "sundial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := runFake(t, func(tb testing.TB) {
				paymocktest.New(tb, tc.opt)
				tb.Errorf("New returned")
			})
			if !strings.Contains(f.fatal, tc.want) || len(f.errors) != 0 {
				t.Errorf("fatal %q, errors %q; want a fatal saying %q", f.fatal, f.errors, tc.want)
			}
		})
	}
}

func TestServer_DrivesOutcomes(t *testing.T) {
	s := paymocktest.New(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func(context.Context, string) (paymock.Payment, error)
		want paymock.Status
	}{
		{"complete", s.Complete, paymock.StatusCompleted},
		{"fail", s.Fail, paymock.StatusFailed},
		{"expire", s.Expire, paymock.StatusExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := create(t, s, createBody)
			p, err := tc.call(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != id || p.Status != tc.want || p.Amount != 1050 {
				t.Errorf("got %s %s %v", p.ID, p.Status, p.Amount)
			}
			if _, err := tc.call(ctx, id); err == nil {
				t.Error("a second outcome passed")
			}
		})
	}
	_, err := s.Complete(ctx, "pay_unknown")
	var apiErr *sandbox.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("unknown payment: %v", err)
	}
}

func TestServer_AdvanceMovesTheFrozenClock(t *testing.T) {
	start := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	s := paymocktest.New(t, paymocktest.WithClock("frozen", start))
	ctx := t.Context()
	id := create(t, s, strings.Replace(createBody, `"expires_in":3600`, `"expires_in":120`, 1))
	// Frozen: real time passing changes nothing.
	time.Sleep(1100 * time.Millisecond)
	if err := s.Advance(ctx, 119*time.Second); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, id); st != "pending" {
		t.Fatalf("after 119s: %s", st)
	}
	if err := s.Advance(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, id); st != "expired" {
		t.Errorf("after 120s: %s", st)
	}
	d, err := s.Webhooks().Next(ctx)
	if err != nil || d.Type != "payment.expired" {
		t.Errorf("webhook %+v %v", d, err)
	}
	p, err := d.Payment()
	if err != nil || p.ID != id || !p.UpdatedAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("the expired payment: %+v %v", p, err)
	}
	if err := s.Advance(ctx, 1500*time.Millisecond); err == nil || !strings.Contains(err.Error(), "whole seconds") {
		t.Errorf("sub-second advance: %v", err)
	}
}

// status is the payment's status as the API shows it.
func status(t *testing.T, s *paymocktest.Server, id string) string {
	t.Helper()
	_, b := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments/"+id, "")
	var p struct{ Status string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

func TestNew_ParallelServersShareNothing(t *testing.T) {
	type seen struct {
		key, id string
		now     time.Time
	}
	results := make([]seen, 4)
	t.Run("group", func(t *testing.T) {
		for i := range results {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				s := paymocktest.New(t)
				ctx := t.Context()
				id := create(t, s, createBody)
				// Each server moves its own clock by a different amount.
				if err := s.Advance(ctx, time.Duration(i+1)*time.Minute); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Complete(ctx, id); err != nil {
					t.Fatal(err)
				}
				d, err := s.Webhooks().Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				p, err := d.Payment()
				if err != nil || p.ID != id {
					t.Fatalf("got the webhook of %s (%v), want %s's", p.ID, err, id)
				}
				// Exactly one event reached this server's receiver.
				short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				if extra, err := s.Webhooks().Next(short); err == nil {
					t.Errorf("a second delivery: %s", extra.Body)
				}
				_, list := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", "")
				if !strings.Contains(string(list), `"total_items":1`) {
					t.Errorf("list: %s", list)
				}
				results[i] = seen{key: s.APIKey, id: id, now: p.UpdatedAt}
			})
		}
	})
	if t.Failed() {
		return
	}
	keys, ids := map[string]bool{}, map[string]bool{}
	for i, r := range results {
		keys[r.key], ids[r.id] = true, true
		// Real clocks start where New found them: compare to the minute.
		if i > 0 && r.now.Sub(results[0].now).Round(time.Minute) != time.Duration(i)*time.Minute {
			t.Errorf("server %d's clock moved %v past server 0's, want %dm", i, r.now.Sub(results[0].now), i)
		}
	}
	if len(keys) != len(results) || len(ids) != len(results) {
		t.Errorf("keys %v, ids %v: want all distinct", keys, ids)
	}
}

func TestNew_Options(t *testing.T) {
	t.Run("WithSeed makes ids reproducible", func(t *testing.T) {
		a := paymocktest.New(t, paymocktest.WithSeed(42), paymocktest.WithConfig("testdata/merchants.yaml"))
		b := paymocktest.New(t, paymocktest.WithSeed(42), paymocktest.WithConfig("testdata/merchants.yaml"))
		c := paymocktest.New(t, paymocktest.WithSeed(43), paymocktest.WithConfig("testdata/merchants.yaml"))
		if ia, ib, ic := create(t, a, createBody), create(t, b, createBody), create(t, c, createBody); ia != ib || ia == ic {
			t.Errorf("ids %s %s %s: want the first two equal, the third different", ia, ib, ic)
		}
	})
	t.Run("WithConfig configures the merchants", func(t *testing.T) {
		s := paymocktest.New(t, paymocktest.WithConfig("testdata/merchants.yaml"))
		if s.APIKey != "sk_test_acme_1" {
			t.Errorf("APIKey %q, want the first merchant's", s.APIKey)
		}
		if st, _ := call(t, s.URL, "sk_test_someone_else", http.MethodGet, "/api/v1/payments", ""); st != http.StatusUnauthorized {
			t.Errorf("an unknown key: %d, want 401", st)
		}
		// acme is not PCI-approved and has no sandbox accounts.
		card := strings.Replace(createBody, `"mcc":5732`, `"account_id":"acct_acme_main"`, 1)
		create(t, s, card)
	})
	t.Run("WithVariants sends other wire forms", func(t *testing.T) {
		s := paymocktest.New(t, paymocktest.WithVariants("amount=string,status=succeeded"))
		id := create(t, s, createBody)
		p, err := s.Complete(t.Context(), id)
		if err != nil || p.Status != paymock.StatusCompleted || p.Amount != 1050 {
			t.Fatalf("%+v %v", p, err)
		}
		_, raw := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments/"+id, "")
		if !strings.Contains(string(raw), `"amount":"10.50"`) || !strings.Contains(string(raw), `"status":"succeeded"`) {
			t.Errorf("the wire form: %s", raw)
		}
	})
	t.Run("WithScenarios scripts outcomes", func(t *testing.T) {
		s := paymocktest.New(t, paymocktest.WithScenarios("testdata/scenarios.yaml"))
		body := strings.NewReplacer(`"amount":10.5`, `"amount":13.37`, `"USD"`, `"EUR"`).Replace(createBody)
		id := create(t, s, body)
		d, err := s.Webhooks().Next(t.Context())
		if err != nil || d.Type != "payment.failed" {
			t.Fatalf("webhook %+v %v", d, err)
		}
		if st := status(t, s, id); st != "failed" {
			t.Errorf("status %s", st)
		}
	})
	t.Run("WithFakePayments preloads the merchant", func(t *testing.T) {
		s := paymocktest.New(t, paymocktest.WithFakePayments(3), paymocktest.WithSeed(7))
		if _, list := call(t, s.URL, s.APIKey, http.MethodGet, "/api/v1/payments", ""); !strings.Contains(string(list), `"total_items":3`) {
			t.Errorf("list: %s", list)
		}
	})
}

func TestServer_Requests(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	create(t, s, createBody)
	call(t, s.URL, s.APIKey, http.MethodPost, "/api/v1/payments", `{}`)
	reqs, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Status != 400 || len(reqs[0].Violations) == 0 || reqs[1].Status != 201 {
		t.Errorf("journal, newest first: %+v", reqs)
	}
}

// BenchmarkNew measures starting a server ("start") and what a test pays
// in all ("start+cleanup": the contract check and the shutdown too).
func BenchmarkNew(b *testing.B) {
	run := func(b *testing.B, timeCleanup bool) {
		for b.Loop() {
			f := &fakeTB{TB: b}
			paymocktest.New(f)
			if !timeCleanup {
				b.StopTimer()
			}
			for i := len(f.cleanups) - 1; i >= 0; i-- {
				f.cleanups[i]()
			}
			if len(f.errors) > 0 {
				b.Fatal(f.errors)
			}
			if !timeCleanup {
				b.StartTimer()
			}
		}
	}
	b.Run("start", func(b *testing.B) { run(b, false) })
	b.Run("start+cleanup", func(b *testing.B) { run(b, true) })
}
