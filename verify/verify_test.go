// Tests of a run against paymocks: clean, bounded, and with every
// variant; and against a deployment that differs.

package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/driftedtest"
	"github.com/paymock/paymock/internal/upstreamtest"
	"github.com/paymock/paymock/paymocktest"
	"github.com/paymock/paymock/sandbox"
)

// runAgainst runs verify with cfg's base URL and key and fails the test
// on a run that could not start.
func runAgainst(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func text(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func driftOf(rep *Report) map[string]Drift {
	out := map[string]Drift{}
	for _, d := range rep.Drift {
		out[d.Point] = d
	}
	return out
}

// controlClient is the control API of a paymocktest server.
func controlClient(t *testing.T, s *paymocktest.Server) *sandbox.Client {
	t.Helper()
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := sandbox.NewClient(sandbox.ClientConfig{URL: s.URL, APIKey: s.APIKey, Answers: docs})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// deployment is a paymock that stands for a deployment: one configured
// merchant (PCI-approved, with the active account of open mode), so that
// a key it does not know is refused as a real deployment refuses it; a
// paymock in open mode takes every well-formed key as a merchant of its
// own.
func deployment(t *testing.T, opts ...paymocktest.Option) *paymocktest.Server {
	t.Helper()
	m := paymock.Merchant{Name: "shop", APIKeys: []string{"sk_test_verify_shop"}, PCIApproved: true,
		Accounts: []paymock.Account{{ID: paymock.SandboxActiveAccount, Active: true}}}
	return paymocktest.New(t, append([]paymocktest.Option{paymocktest.AllowViolations(), paymocktest.WithMerchants(m)}, opts...)...)
}

func TestRun_TheBadKeyIsAWellFormedKeyTheDeploymentDoesNotKnow(t *testing.T) {
	// error.bad_key.* compare how a deployment refuses "a key it does not
	// know". A malformed token would compare another refusal (paymock's
	// api_key_malformed), and a deployment that answers such a key as
	// configured paymock answers an unknown one would drift.
	s := deployment(t)
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey})
	var bad *Exchange
	for _, x := range rep.Checks {
		if x.Check == checkBadKey {
			bad = x
		}
	}
	if bad == nil {
		t.Fatalf("no %s check ran:\n%s", checkBadKey, text(t, rep))
	}
	obs := &observations{exchanges: map[string]*Exchange{checkBadKey: bad}}
	if got := obs.errorCode(checkBadKey); bad.Status != 401 || got != "authentication_error/api_key_invalid" {
		t.Errorf("the bad key got %d %s, want 401 authentication_error/api_key_invalid (a well-formed key no merchant has)", bad.Status, got)
	}
	for _, d := range rep.Drift {
		if strings.HasPrefix(d.Point, "error.bad_key.") {
			t.Errorf("drift %+v against a paymock with configured merchants", d)
		}
	}
}

func TestRun_APaymockHasNoViolationAndNoDrift(t *testing.T) {
	s := deployment(t)
	var progress bytes.Buffer
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Card: true, AccountID: "acct_sandbox_active", Progress: &progress})
	out := text(t, rep)
	if rep.Failed() {
		t.Fatalf("a paymock fails verify:\n%s", out)
	}
	if !strings.HasPrefix(progress.String(), "paymock verify "+rep.RunID+" against ") ||
		!strings.Contains(progress.String(), "creates at most 10 payments, each with metadata paymock_verify="+rep.RunID) {
		t.Errorf("the run does not say first what it creates: %q", progress.String())
	}
	if len(rep.Checks) != 16 {
		t.Errorf("%d checks ran, want all 16 (no --listen):\n%s", len(rep.Checks), out)
	}
	// Every payment the run made carries its id.
	list, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, e := range list {
		if e.Method == "POST" && e.Status == 201 {
			creates++
		}
	}
	if creates != 3 {
		t.Errorf("the run created %d payments, want 3 (checkout, account, card)", creates)
	}
}

func TestRun_MaxCreatesBoundsThePaymentsMade(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey, Card: true, AccountID: "acct_sandbox_active", MaxCreates: 2})
	var posts int
	list, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		// The body_too_large check's POST (a 413) holds no payment a
		// deployment could make.
		if e.Method == "POST" && e.Status != http.StatusRequestEntityTooLarge {
			posts++
		}
	}
	if posts != 2 {
		t.Errorf("%d POSTs with --max-creates 2, want 2", posts)
	}
	var left []string
	for _, s := range rep.Skipped {
		left = append(left, s.Check)
	}
	if got := strings.Join(left, " "); got != "create.card missing_field mcc_and_account" {
		t.Errorf("left out %q, want create.card missing_field mcc_and_account", got)
	}
}

func TestRun_APaymockWithEveryVariantDriftsOnAmountAndStatusOnly(t *testing.T) {
	s := deployment(t, paymocktest.WithVariants("all"), paymocktest.WithSeed(3))
	// A payment in its successful status, as a merchant's sandbox holds
	// after a customer paid.
	cl := controlClient(t, s)
	ctx := context.Background()
	for range 3 {
		id := createPayment(t, s)
		if _, err := cl.Complete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	rep := runAgainst(t, Config{BaseURL: s.URL, APIKey: s.APIKey})
	out := text(t, rep)
	if len(rep.Violations) > 0 || len(rep.Problems) > 0 {
		t.Fatalf("violations against paymock --variants all:\n%s", out)
	}
	drift := driftOf(rep)
	for _, p := range []string{"amount.form", "status.success_name"} {
		if d, ok := drift[p]; !ok || d.Variant != "all" {
			t.Errorf("drift on %s: %+v, want one that --variants all gives:\n%s", p, d, out)
		}
	}
	if len(drift) != 2 {
		t.Errorf("drift on %d points, want 2 (amount.form, status.success_name):\n%s", len(drift), out)
	}
	if rep.Settings.Variants != "all" {
		t.Errorf("closest setting %q, want all", rep.Settings.Variants)
	}
}

func createPayment(t *testing.T, s *paymocktest.Server) string {
	t.Helper()
	sd := &side{base: s.URL, key: s.APIKey, client: &http.Client{}, timeout: 10 * time.Second, host: "test", runID: "test", obs: newObservations()}
	x := sd.call(context.Background(), "create", "POST", "/api/v1/payments", sd.createBody(map[string]any{"mcc": 5999}), "")
	var p struct {
		ID string `json:"id"`
	}
	if err := jsonBody(x, &p); err != nil || p.ID == "" {
		t.Fatalf("create: %v %s", err, x.body)
	}
	return p.ID
}

func TestRun_ADifferentUpstreamIsFoundAndNamed(t *testing.T) {
	srv := driftedtest.New(t)
	rep := runAgainst(t, Config{BaseURL: srv.URL, APIKey: driftedtest.Key})
	out := text(t, rep)
	t.Log(out)
	if !rep.Failed() {
		t.Fatalf("a different upstream passes verify:\n%s", out)
	}
	found := map[string]bool{}
	for _, v := range rep.Violations {
		found[v.Check+" "+v.Param+" "+v.Code] = true
	}
	for _, want := range []string{
		"missing_field  status_undeclared",             // 422 instead of 400
		"create.checkout livemode parameter_unknown",   // an undeclared field
		"create.checkout cancel_url parameter_missing", // a required field left out
		"unknown_id error parameter_missing",           // another error shape
		"unknown_id message parameter_unknown",
	} {
		if !found[want] {
			t.Errorf("no violation %q in:\n%s", want, out)
		}
	}
	for _, v := range rep.Violations {
		if p := starIndices(v.Param); p == "id" || p == "customer.id" || p == "items.*.id" || p == "items.*.customer.id" {
			t.Errorf("a UUID id is a contract violation: %+v", v)
		}
		if v.Check == checkRetrieve && v.Param == "cancel_url" {
			t.Errorf("a retrieve without cancel_url is a contract violation: %+v", v)
		}
		if strings.Contains(v.Param, "customer.phone") {
			t.Errorf("a customer's phone is a contract violation: %+v", v)
		}
	}
	drift := driftOf(rep)
	for point, want := range map[string][2]string{
		"error.missing_field.status": {"400", "422"},
		"error.per_page_101.status":  {"400", "422"},
		"amount.form":                {"number", "string"},
		"status.success_name":        {"completed", "succeeded"},
		"auth.www_authenticate":      {"Bearer", "absent"},
		"headers.deployment_only":    {"absent", "X-Request-Id"},
		"headers.paymock_only":       {"Cache-Control, Request-Id, X-Content-Type-Options", "absent"},
		"error.unknown_id.code":      {"not_found_error/resource_missing", "(no error.type or error.code)"},
		"error.unknown_id.shape":     {"{error:{code,message,param,type}}", "{message,status}"},
		// The spec fixes no form of ids: UUIDs are drift, not a violation,
		// and paymock's own ids are compared in their form.
		"id.payment":  {"pay_ and 24 base62 characters", "a UUID"},
		"id.customer": {"cus_ and 24 base62 characters", "a UUID"},
		// And so are a customer's fields beyond id, email and name, and
		// cancel_url outside a create's answer.
		"customer.fields":          {"none", "phone"},
		"cancel_url.retrieve_list": {"present", "absent, present"},
		// A request without a key, and one over paymock's body limit.
		"error.no_key.shape":           {"{error:{code,message,type}}", "{message,status}"},
		"auth.www_authenticate_no_key": {"Bearer", "absent"},
		"error.body_too_large.status":  {"413", "422"},
	} {
		d, ok := drift[point]
		if !ok || d.Paymock != want[0] || d.Deployment != want[1] {
			t.Errorf("drift on %s: %+v, want paymock %q, deployment %q", point, d, want[0], want[1])
		}
	}
	if rep.Settings.Variants != "amount=string,status=succeeded" {
		t.Errorf("closest setting %q, want amount=string,status=succeeded", rep.Settings.Variants)
	}
}

func TestRun_PaymentLinkLeftOutOfARetrieveIsDrift(t *testing.T) {
	// The spec's retrieve answers "all fields of the payment model", its
	// payment_link is "present in some create responses": whether a
	// retrieve carries it is open, and compared.
	s := deployment(t)
	strip := upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/v1/payments/") {
			return body
		}
		var p map[string]json.RawMessage
		if json.Unmarshal(body, &p) != nil {
			return body
		}
		delete(p, "payment_link")
		out, err := json.Marshal(p)
		if err != nil {
			t.Error(err)
		}
		return out
	}}
	srv := strip.Serve(t, s.URL)
	rep := runAgainst(t, Config{BaseURL: srv.URL, APIKey: s.APIKey})
	out := text(t, rep)
	if len(rep.Violations) > 0 {
		t.Errorf("a retrieve without payment_link breaks the contract:\n%s", out)
	}
	d, ok := driftOf(rep)["payment_link.retrieve"]
	if !ok || d.Paymock != "present" || d.Deployment != "absent, present" || d.Variant != "all" {
		t.Errorf("drift on payment_link.retrieve: %+v, want present against absent (the retrieve) and present (the lists), closest all:\n%s", d, out)
	}
	if len(rep.Drift) != 1 {
		t.Errorf("drift on %d points, want payment_link.retrieve alone:\n%s", len(rep.Drift), out)
	}
}
