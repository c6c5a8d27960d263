// The webhook dispatcher's adapters: its reads of the merchants' clocks
// and its asks of the fault rules, each under the caller's context.

package sandbox

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/internal/pgbackendtest"
	"github.com/paymock/paymock/lifecycle"
)

// TestWebhookClock_ReadsWithTheCallersContext reads a frozen clock kept in
// PostgreSQL, whose reads honour their context: a live one gives the
// merchant's time; one already done fails the read, which is logged and
// answered with the real time, so the read runs under the caller's
// context and no other.
func TestWebhookClock_ReadsWithTheCallersContext(t *testing.T) {
	backend := pgbackendtest.Backend(t)
	clocks, err := lifecycle.NewClocks(lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart, Store: backend.Clocks})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		real    bool // the real time stands in, and the failure is logged
		logLine string
	}{
		{"live context: the merchant's clock", context.Background(), false, ""},
		{"context done: the real time, logged", done, true, "merchant's clock not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuffer{}
			w := webhookClock{clocks: clocks, log: slog.New(slog.NewTextHandler(logs, nil))}
			before := time.Now()
			got := w.Now(tc.ctx, "m_1")
			switch {
			case !tc.real && !got.Equal(testStart):
				t.Errorf("got %s, want the frozen clock's %s", got, testStart)
			case tc.real && (got.Before(before) || got.After(time.Now())):
				t.Errorf("got %s, want the real time", got)
			case !strings.Contains(logs.String(), tc.logLine) || tc.logLine == "" && logs.String() != "":
				t.Errorf("logged %q, want %q", logs.String(), tc.logLine)
			}
		})
	}
}

// TestWebhookFaults_AskWithTheCallersContext asks rules kept in
// PostgreSQL for a webhook fault: a live context finds the merchant's
// rule; one already done fails the match, which shapes no delivery, so
// the ask runs under the caller's context and no other.
func TestWebhookFaults_AskWithTheCallersContext(t *testing.T) {
	backend := pgbackendtest.Backend(t)
	rules, err := faults.New(faults.Config{Store: backend.Faults})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := rules.Add(context.Background(), "m_1", faults.Rule{Target: faults.TargetWebhooks, Duplicate: 2})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	w := webhookFaults{rules: rules}
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		shape bool
	}{
		{"live context: the rule shapes the delivery", context.Background(), true},
		{"context done: no rule is matched", done, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := w.WebhookFault(tc.ctx, "m_1", paymock.EventCompleted)
			switch {
			case ok != tc.shape:
				t.Errorf("shaped %v, want %v", ok, tc.shape)
			case ok && (f.RuleID != rule.ID || f.Duplicate != 2):
				t.Errorf("fault %+v, want rule %s's two copies", f, rule.ID)
			}
		})
	}
}
