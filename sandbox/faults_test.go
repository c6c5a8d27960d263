// Failure on purpose, over real HTTP: every effect, every way of asking,
// before and after the call.

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// withFault sends one API call with a Paymock-Fault header.
func (e *testEnv) withFault(fault, method, path, key string, body any) (int, map[string]any, http.Header) {
	e.t.Helper()
	req := e.request(method, path, key, body)
	req.Header.Set("Paymock-Fault", fault)
	return e.send(req)
}

// addFault sets a fault rule through the control API.
func (e *testEnv) addFault(key string, rule map[string]any) map[string]any {
	e.t.Helper()
	st, body, _ := e.do("POST", "/_sandbox/faults", key, rule)
	if st != http.StatusCreated {
		e.t.Fatalf("add fault %v: %d %v", rule, st, body)
	}
	return body
}

func (e *testEnv) total(key string) int {
	e.t.Helper()
	st, body, _ := e.do("GET", "/api/v1/payments", key, nil)
	if st != http.StatusOK {
		e.t.Fatalf("list: %d %v", st, body)
	}
	return int(body["pagination"].(map[string]any)["total_items"].(float64))
}

func TestFaults_HeaderStatusesAnswerInTheErrorShape(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		fault, typ, code string
		status           int
	}{
		{"status=503", "api_error", "injected_fault", 503},
		{"status=500", "api_error", "injected_fault", 500},
		{"status=502", "api_error", "injected_fault", 502},
		{"status=504", "api_error", "injected_fault", 504},
		{"status=429; retry_after=3", "rate_limit_error", "rate_limited", 429},
	}
	for _, tc := range tests {
		st, body, h := env.withFault(tc.fault, "POST", "/api/v1/payments", keyA, validCreate())
		if st != tc.status {
			t.Fatalf("%s: %d %v", tc.fault, st, body)
		}
		e := errorOf(t, body)
		if e["type"] != tc.typ || e["code"] != tc.code {
			t.Errorf("%s: error %v", tc.fault, e)
		}
		if tc.status == 429 && h.Get("Retry-After") != "3" {
			t.Errorf("%s: Retry-After %q", tc.fault, h.Get("Retry-After"))
		}
	}
	if n := env.total(keyA); n != 0 {
		t.Errorf("%d payments stored by calls failed before they were carried out", n)
	}
}

func TestFaults_AfterCarriesTheCallOutAndLosesTheAnswer(t *testing.T) {
	rcv := newReceiver(t, nil)
	env := newEnv(t, withWebhooks(nil, webhookEndpoint(rcv)))
	b := validCreate()
	b["metadata"] = map[string]any{"order_id": "ord_after"}
	st, body, _ := env.withFault("status=503; when=after", "POST", "/api/v1/payments", keyA, b)
	if st != http.StatusServiceUnavailable {
		t.Fatalf("create: %d %v", st, body)
	}
	// Reconcile as a client must after a lost answer: list, match by metadata.
	_, list, _ := env.do("GET", "/api/v1/payments", keyA, nil)
	items := list["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("the create was not carried out: %v", list)
	}
	p := items[0].(map[string]any)
	if p["metadata"].(map[string]any)["order_id"] != "ord_after" {
		t.Fatalf("stored %v", p)
	}
	id := p["id"].(string)
	if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
		t.Fatalf("complete: %d %v", st, body)
	}
	select {
	case d := <-rcv.notify:
		if !strings.Contains(string(d.Body), id) {
			t.Errorf("webhook for another payment: %s", d.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook for the payment created behind the fault")
	}
}

func TestFaults_DelayHoldsTheAnswer(t *testing.T) {
	env := newEnv(t)
	start := time.Now()
	st, body, _ := env.withFault("delay=300ms", "GET", "/api/v1/payments", keyA, nil)
	if st != http.StatusOK {
		t.Fatalf("%d %v", st, body)
	}
	if held := time.Since(start); held < 300*time.Millisecond {
		t.Errorf("answered after %s, before the delay", held)
	}
	start = time.Now()
	st, _, _ = env.withFault("delay=200ms; status=504", "GET", "/api/v1/payments", keyA, nil)
	if st != http.StatusGatewayTimeout || time.Since(start) < 200*time.Millisecond {
		t.Errorf("delay and status: %d after %s", st, time.Since(start))
	}
}

func TestFaults_ResetDropsTheConnection(t *testing.T) {
	env := newEnv(t)
	for _, when := range []string{"before", "after"} {
		req := env.request("POST", "/api/v1/payments", keyA, validCreate())
		req.Header.Set("Paymock-Fault", "reset; when="+when)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("%s: answered %d %s, want a dropped connection", when, resp.StatusCode, b)
		}
		if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
			t.Errorf("%s: %v", when, err)
		}
	}
	if n := env.total(keyA); n != 1 {
		t.Errorf("%d payments: want only the one reset after it was stored", n)
	}
}

func TestFaults_RulesCountDownAndLeave(t *testing.T) {
	env := newEnv(t)
	r := env.addFault(keyA, map[string]any{"operation": "createPayment", "status": 503, "times": 2})
	if !strings.HasPrefix(r["id"].(string), "flt_") || r["remaining"] != 2.0 || r["hits"] != 0.0 {
		t.Fatalf("rule %v", r)
	}
	for i, want := range []int{503, 503, 201} {
		if st, body, _ := env.do("POST", "/api/v1/payments", keyA, validCreate()); st != want {
			t.Fatalf("create %d: %d %v", i+1, st, body)
		}
	}
	// Other operations and other merchants were never touched.
	if st, _, _ := env.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusOK {
		t.Errorf("list: %d", st)
	}
	if st, _, _ := env.do("POST", "/api/v1/payments", keyB, validCreate()); st != http.StatusCreated {
		t.Errorf("other merchant: %d", st)
	}
	_, list, _ := env.do("GET", "/_sandbox/faults", keyA, nil)
	if items := list["items"].([]any); len(items) != 0 {
		t.Errorf("a spent rule is still listed: %v", items)
	}
}

func TestFaults_DeleteAndClear(t *testing.T) {
	env := newEnv(t)
	a := env.addFault(keyA, map[string]any{"operation": "*", "status": 500})
	env.addFault(keyA, map[string]any{"operation": "listPayments", "delay_ms": 10})
	if st, _, _ := env.do("DELETE", "/_sandbox/faults/"+a["id"].(string), keyB, nil); st != http.StatusNotFound {
		t.Errorf("another merchant deleted a rule: %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/faults/"+a["id"].(string), keyA, nil); st != http.StatusNoContent {
		t.Errorf("delete: %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/faults/"+a["id"].(string), keyA, nil); st != http.StatusNotFound {
		t.Errorf("delete twice: %d", st)
	}
	if st, _, _ := env.do("DELETE", "/_sandbox/faults", keyA, nil); st != http.StatusNoContent {
		t.Errorf("clear: %d", st)
	}
	_, list, _ := env.do("GET", "/_sandbox/faults", keyA, nil)
	if items := list["items"].([]any); len(items) != 0 {
		t.Errorf("after clear: %v", items)
	}
	if st, _, _ := env.do("POST", "/api/v1/payments", keyA, validCreate()); st != http.StatusCreated {
		t.Errorf("create after clear: %d", st)
	}
}

func TestFaults_HeaderWinsOverRules(t *testing.T) {
	env := newEnv(t)
	env.addFault(keyA, map[string]any{"operation": "listPayments", "status": 503})
	if st, _, _ := env.withFault("status=504", "GET", "/api/v1/payments", keyA, nil); st != http.StatusGatewayTimeout {
		t.Errorf("header: %d, want 504", st)
	}
	if st, _, _ := env.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusServiceUnavailable {
		t.Errorf("rule: %d, want 503", st)
	}
}

func TestFaults_SeededProbabilityIsReproducible(t *testing.T) {
	run := func(seed uint64) string {
		env := newEnv(t, withSeed(seed))
		env.addFault(keyA, map[string]any{"operation": "listPayments", "status": 503, "probability": 0.5})
		var seq strings.Builder
		for range 40 {
			st, _, _ := env.do("GET", "/api/v1/payments", keyA, nil)
			if st == http.StatusServiceUnavailable {
				seq.WriteByte('x')
			} else {
				seq.WriteByte('.')
			}
		}
		return seq.String()
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Errorf("same seed, different hits:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("probability 0.5 hit all or nothing: %s", a)
	}
	if a == c {
		t.Errorf("another seed gave the same hits: %s", a)
	}
}

func TestFaults_BadInputIsRefusedAndChangesNothing(t *testing.T) {
	env := newEnv(t)
	bad := []struct {
		rule  map[string]any
		param string
	}{
		{map[string]any{"operation": "createPayment", "status": 418}, "status"},
		{map[string]any{"operation": "refundPayment", "status": 503}, "operation"},
		{map[string]any{"operation": "*", "status": 503, "probability": 1.5}, "probability"},
		{map[string]any{"operation": "*", "status": 503, "times": -1}, "times"},
		{map[string]any{"operation": "*", "delay_ms": -5}, "delay_ms"},
		{map[string]any{"operation": "*"}, ""},
		{map[string]any{"operation": "*", "effect": "explode"}, "effect"},
	}
	for _, tc := range bad {
		st, body, _ := env.do("POST", "/_sandbox/faults", keyA, tc.rule)
		if st != http.StatusBadRequest {
			t.Errorf("%v: %d %v", tc.rule, st, body)
			continue
		}
		if e := errorOf(t, body); tc.param != "" && !strings.Contains(e["param"].(string)+" "+e["message"].(string), tc.param) {
			t.Errorf("%v: error does not name %s: %v", tc.rule, tc.param, e)
		}
	}
	for _, h := range []string{"status=abc", "status=418", "delay=-1s", "when=later; status=503", "explode"} {
		st, body, _ := env.withFault(h, "GET", "/api/v1/payments", keyA, nil)
		if st != http.StatusBadRequest || errorOf(t, body)["param"] != "Paymock-Fault" {
			t.Errorf("header %q: %d %v", h, st, body)
		}
	}
	_, list, _ := env.do("GET", "/_sandbox/faults", keyA, nil)
	if items := list["items"].([]any); len(items) != 0 {
		t.Errorf("refused rules were kept: %v", items)
	}
}

func TestFaults_FileRulesApplyToEveryMerchant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(path, []byte("- operation: retrievePayment\n  status: 502\n  times: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, withFaultsFile(path))
	for _, key := range []string{keyA, keyB} {
		id := env.create(key, nil)
		if st, _, _ := env.do("GET", "/api/v1/payments/"+id, key, nil); st != http.StatusBadGateway {
			t.Errorf("%s first retrieve: %d", key, st)
		}
		if st, _, _ := env.do("GET", "/api/v1/payments/"+id, key, nil); st != http.StatusOK {
			t.Errorf("%s second retrieve: %d", key, st)
		}
	}
}

func TestFaults_JournalMarksThemAndTheReportCountsThemApart(t *testing.T) {
	env := newEnv(t)
	env.withFault("status=503", "POST", "/api/v1/payments", keyA, validCreate())
	env.create(keyA, nil)
	_, reqs, _ := env.do("GET", "/_sandbox/requests", keyA, nil)
	items := reqs["items"].([]any)
	marked := 0
	for _, it := range items {
		if it.(map[string]any)["injected_fault"] == "header" {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("%d journal entries marked injected, want 1: %v", marked, items)
	}
	_, rep, _ := env.do("GET", "/_sandbox/report", keyA, nil)
	if rep["calls"] != 2.0 || rep["injected_calls"] != 1.0 || rep["violating_calls"] != 0.0 {
		t.Errorf("report counts %v", rep)
	}
}

func TestFaults_ControlAPIIsNeverFaulted(t *testing.T) {
	env := newEnv(t)
	env.addFault(keyA, map[string]any{"operation": "*", "status": 503})
	if st, _, _ := env.withFault("status=503", "GET", "/_sandbox/clock", keyA, nil); st != http.StatusOK {
		t.Errorf("control API faulted: %d", st)
	}
	_ = context.Background()
}

// webhookFaultEnv is a sandbox whose merchants' events go to a raw
// receiver signed with testSecret.
func webhookFaultEnv(t *testing.T) (*testEnv, *rawReceiver) {
	rcv := newRawReceiver(t)
	env := newEnv(t, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	return env, rcv
}

func TestWebhookFaults_DuplicatesCarryOneIDAndEachVerifies(t *testing.T) {
	env, rcv := webhookFaultEnv(t)
	env.addFault(keyA, map[string]any{"target": "webhooks", "event_type": "payment.completed", "duplicate": 2, "times": 1})
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	a, b := rcv.next(t), rcv.next(t)
	if a.Header.Get("webhook-id") == "" || a.Header.Get("webhook-id") != b.Header.Get("webhook-id") {
		t.Errorf("ids %q and %q", a.Header.Get("webhook-id"), b.Header.Get("webhook-id"))
	}
	for _, d := range []rawDelivery{a, b} {
		if err := verify(t, testSecret, d); err != nil {
			t.Errorf("a duplicate does not verify: %v", err)
		}
	}
	// The journal says which rule shaped the attempts (advancing by 0
	// waits for the deliveries under way to be recorded).
	env.advance(keyA, 0)
	atts := env.events(keyA)[0]["deliveries"].([]any)[0].(map[string]any)["attempts"].([]any)
	if len(atts) != 2 || atts[0].(map[string]any)["fault"] == nil {
		t.Errorf("attempts %v", atts)
	}
	// times: 1 — the next event is sent once.
	id2 := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id2+"/complete", keyA, nil)
	rcv.next(t)
	rcv.none(t)
}

func TestWebhookFaults_BadSignatureFailsVerification(t *testing.T) {
	env, rcv := webhookFaultEnv(t)
	env.addFault(keyA, map[string]any{"target": "webhooks", "bad_signature": true, "times": 1})
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/fail", keyA, nil)
	d := rcv.next(t)
	if err := verify(t, testSecret, d); err == nil {
		t.Error("a delivery signed with a wrong secret verified")
	}
}

func TestWebhookFaults_SkewedTimestampFailsTheToleranceCheck(t *testing.T) {
	env, rcv := webhookFaultEnv(t)
	env.addFault(keyA, map[string]any{"target": "webhooks", "timestamp_skew_s": -600, "times": 1})
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	d := rcv.next(t)
	wh, _ := standardwebhooks.NewWebhook(testSecret)
	if err := wh.Verify(d.Body, d.Header); !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("skewed by -600 s: %v, want ErrMessageTooOld", err)
	}
	if err := wh.VerifyIgnoringTimestamp(d.Body, d.Header); err != nil {
		t.Errorf("the signature over the skewed timestamp is wrong: %v", err)
	}
}

func TestWebhookFaults_ReorderSendsNewestFirst(t *testing.T) {
	env, rcv := webhookFaultEnv(t)
	env.addFault(keyA, map[string]any{"target": "webhooks", "reorder": true, "window_ms": 1000})
	ids := []string{env.create(keyA, nil), env.create(keyA, nil), env.create(keyA, nil)}
	for _, id := range ids {
		env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	}
	rcv.none(t) // held in the window, on the merchant's frozen clock
	env.advance(keyA, 2)
	var order []string
	for range ids {
		d := rcv.next(t)
		for _, id := range ids {
			if bytes.Contains(d.Body, []byte(id)) {
				order = append(order, id)
			}
		}
	}
	if len(order) != 3 || order[0] != ids[2] || order[2] != ids[0] {
		t.Errorf("arrived %v, want newest first of %v", order, ids)
	}
}

func TestWebhookFaults_NoneLeavesDeliveryAsBefore(t *testing.T) {
	env, rcv := webhookFaultEnv(t)
	r := env.addFault(keyA, map[string]any{"target": "webhooks", "duplicate": 3})
	env.do("DELETE", "/_sandbox/faults/"+r["id"].(string), keyA, nil)
	id := env.create(keyA, nil)
	env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	if err := verify(t, testSecret, rcv.next(t)); err != nil {
		t.Error(err)
	}
	rcv.none(t)
	env.advance(keyA, 0)
	atts := env.events(keyA)[0]["deliveries"].([]any)[0].(map[string]any)["attempts"].([]any)
	if len(atts) != 1 || atts[0].(map[string]any)["fault"] != nil {
		t.Errorf("attempts %v", atts)
	}
}
