// Tests of a rule's validation, defaults, JSON shape and error answer.

package faults_test

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/webhooks"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func ptr[T any](v T) *T { return &v }

func TestValidate_ListsEveryProblemByParam(t *testing.T) {
	hook := faults.TargetWebhooks
	cases := []struct {
		name string
		rule faults.Rule
		// want holds param=message-fragment pairs, in order; empty: valid.
		want []string
	}{
		{"status alone", faults.Rule{Status: 503}, nil},
		{"429 with retry_after", faults.Rule{Operation: "createPayment", Status: 429, RetryAfter: 3}, nil},
		{"delay alone", faults.Rule{DelayMS: 1500}, nil},
		{"delay and status", faults.Rule{DelayMS: 2000, Status: 504, When: faults.WhenAfter}, nil},
		{"reset and delay", faults.Rule{Reset: true, DelayMS: 10}, nil},
		{"explicit api target", faults.Rule{Target: faults.TargetAPI, Operation: "*", Status: 500}, nil},
		{"times and probability", faults.Rule{Status: 502, Times: ptr(2), Probability: ptr(0.25)}, nil},
		{"probability 0 and 1", faults.Rule{Status: 502, Probability: ptr(0.0)}, nil},
		{"webhook duplicate", faults.Rule{Target: hook, Duplicate: 3, EventType: "payment.completed"}, nil},
		{"webhook bad signature", faults.Rule{Target: hook, BadSignature: true}, nil},
		{"webhook skew", faults.Rule{Target: hook, TimestampSkewS: -600}, nil},
		{"webhook delay", faults.Rule{Target: hook, DelayMS: 3000}, nil},
		{"webhook reorder with window", faults.Rule{Target: hook, Reorder: true, WindowMS: 500}, nil},
		{"webhook unknown type", faults.Rule{Target: hook, UnknownType: true, EventType: "payment.failed"}, nil},
		{"webhook extra fields", faults.Rule{Target: hook, ExtraFields: true}, nil},

		{"unknown target", faults.Rule{Target: "email", Status: 503}, []string{"target=not a target"}},
		{"unknown operation", faults.Rule{Operation: "createPaymnt", Status: 503}, []string{"operation=not an operation of the API"}},
		{"status outside the list", faults.Rule{Status: 418}, []string{"status=want 429, 500, 502, 503 or 504"}},
		{"status 200", faults.Rule{Status: 200}, []string{"status=cannot be injected"}},
		{"probability above 1", faults.Rule{Status: 503, Probability: ptr(1.5)}, []string{"probability=between 0 and 1"}},
		{"probability below 0", faults.Rule{Status: 503, Probability: ptr(-0.1)}, []string{"probability=between 0 and 1"}},
		{"probability NaN", faults.Rule{Status: 503, Probability: ptr(math.NaN())}, []string{"probability=between 0 and 1"}},
		{"times 0", faults.Rule{Status: 503, Times: ptr(0)}, []string{"times=at least 1"}},
		{"negative times", faults.Rule{Status: 503, Times: ptr(-2)}, []string{"times=at least 1"}},
		{"negative delay", faults.Rule{DelayMS: -1}, []string{"delay_ms=must not be negative"}},
		{"delay too long", faults.Rule{DelayMS: faults.MaxDelayMS + 1}, []string{"delay_ms=at most 600000"}},
		{"no effect", faults.Rule{Operation: "listPayments"}, []string{"status=needs at least one effect: status, delay_ms or reset"}},
		{"retry_after without status", faults.Rule{DelayMS: 5, RetryAfter: 3}, []string{"retry_after=with status 429 only"}},
		{"retry_after with 503", faults.Rule{Status: 503, RetryAfter: 3}, []string{"retry_after=with status 429 only"}},
		{"negative retry_after", faults.Rule{Status: 429, RetryAfter: -3}, []string{"retry_after=must not be negative"}},
		{"reset with status", faults.Rule{Status: 503, Reset: true}, []string{"reset=cannot be combined with status"}},
		{"unknown when", faults.Rule{Status: 503, When: "later"}, []string{"when=want before or after"}},
		{"webhook field on an API rule", faults.Rule{Status: 503, Duplicate: 2, EventType: "payment.failed"},
			[]string{"event_type=webhook faults only", "duplicate=webhook faults only"}},
		{"API field on a webhook rule", faults.Rule{Target: hook, Status: 503, When: faults.WhenAfter, Duplicate: 2},
			[]string{"status=API faults only", "when=API faults only"}},
		{"operation on a webhook rule", faults.Rule{Target: hook, Operation: "*", Reorder: true}, []string{"operation=API faults only"}},
		{"webhook without effect", faults.Rule{Target: hook, EventType: "payment.completed"}, []string{"duplicate=needs one effect"}},
		{"webhook with two effects", faults.Rule{Target: hook, BadSignature: true, DelayMS: 100},
			[]string{"delay_ms=exactly one effect, found bad_signature and delay_ms"}},
		{"unknown type with extra fields", faults.Rule{Target: hook, UnknownType: true, ExtraFields: true},
			[]string{"extra_fields=exactly one effect, found unknown_type and extra_fields"}},
		{"unknown type on an API rule", faults.Rule{Status: 503, UnknownType: true}, []string{"unknown_type=webhook faults only"}},
		{"extra fields on an API rule", faults.Rule{DelayMS: 5, ExtraFields: true}, []string{"extra_fields=webhook faults only"}},
		{"duplicate 1", faults.Rule{Target: hook, Duplicate: 1}, []string{"duplicate=at least 2"}},
		{"duplicate too many", faults.Rule{Target: hook, Duplicate: 11}, []string{"duplicate=at most 10"}},
		{"unknown event type", faults.Rule{Target: hook, EventType: "payment.created", Duplicate: 2},
			[]string{"event_type=want payment.completed, payment.failed, payment.expired"}},
		{"window without reorder", faults.Rule{Target: hook, BadSignature: true, WindowMS: 100}, []string{"window_ms=with reorder only"}},
		{"negative window", faults.Rule{Target: hook, Reorder: true, WindowMS: -1}, []string{"window_ms=must not be negative"}},
		{"skew beyond a year", faults.Rule{Target: hook, TimestampSkewS: -faults.MaxTimestampSkew - 1}, []string{"timestamp_skew_s=within a year"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.rule.Validate()
			if len(got) != len(c.want) {
				t.Fatalf("got %d violations %+v, want %d %v", len(got), got, len(c.want), c.want)
			}
			for i, w := range c.want {
				param, frag, _ := strings.Cut(w, "=")
				if got[i].Param != param || !strings.Contains(got[i].Message, frag) {
					t.Errorf("violation %d = %+v, want param %q and a message with %q", i, got[i], param, frag)
				}
				if got[i].Code == "" || strings.Contains(got[i].Message, "faults.") {
					t.Errorf("violation %d = %+v: no code, or a Go name in the message", i, got[i])
				}
			}
		})
	}
}

func TestValidateFor_TakesTheContractsOperations(t *testing.T) {
	r := faults.Rule{Operation: "refundPayment", Status: 503}
	if vs := r.ValidateFor([]string{"createPayment", "refundPayment"}); len(vs) != 0 {
		t.Errorf("refundPayment refused although the contract has it: %+v", vs)
	}
	vs := faults.Rule{Operation: "listPayments", Status: 503}.ValidateFor([]string{"createPayment", "refundPayment"})
	if len(vs) != 1 || vs[0].Param != "operation" || !strings.Contains(vs[0].Message, "want createPayment, refundPayment or *") {
		t.Errorf("an operation the contract lacks: %+v", vs)
	}
}

func TestNormalize_FillsDefaults(t *testing.T) {
	times := 3
	in := faults.Rule{Status: 429, Times: &times}
	got := in.Normalize()
	if got.Target != faults.TargetAPI || got.Operation != "*" || got.When != faults.WhenBefore ||
		got.RetryAfter != 1 || got.Probability == nil || *got.Probability != 1 {
		t.Errorf("Normalize(%+v) = %+v", in, got)
	}
	times = 9
	if *got.Times != 3 {
		t.Error("the normalized rule shares Times with the caller's rule")
	}
	hook := faults.Rule{Target: faults.TargetWebhooks, Reorder: true, Probability: ptr(0.5)}.Normalize()
	if hook.WindowMS != faults.DefaultWindowMS || hook.When != "" || hook.Operation != "" || *hook.Probability != 0.5 {
		t.Errorf("webhook rule normalized to %+v", hook)
	}
	if vs := hook.Validate(); len(vs) != 0 {
		t.Errorf("a normalized rule no longer validates: %+v", vs)
	}
}

func TestAPIError_SaysTheFaultWasInjectedAndByWhom(t *testing.T) {
	cases := []struct {
		rule     faults.Rule
		typ      paymock.ErrorType
		code     string
		contains []string
	}{
		{faults.Rule{ID: "flt_1", Status: 429, RetryAfter: 3}, paymock.RateLimit, "rate_limited", []string{"retry after 3 s", "injected by fault rule flt_1"}},
		{faults.Rule{ID: "flt_2", Status: 500}, paymock.APIError, "injected_fault", []string{"500 injected by fault rule flt_2"}},
		{faults.Rule{ID: "flt_3", Status: 502}, paymock.APIError, "injected_fault", []string{"bad gateway", "502 injected"}},
		{faults.Rule{ID: "flt_4", Status: 503}, paymock.APIError, "injected_fault", []string{"unavailable", "503 injected"}},
		{faults.Rule{ID: "header", Status: 504}, paymock.APIError, "injected_fault", []string{"timed out", "injected by the Paymock-Fault header"}},
	}
	for _, c := range cases {
		e := c.rule.APIError()
		if e == nil || e.Type != c.typ || e.Code != c.code {
			t.Errorf("APIError of %+v = %+v, want type %s code %s", c.rule, e, c.typ, c.code)
			continue
		}
		for _, s := range c.contains {
			if !strings.Contains(e.Message, s) {
				t.Errorf("message %q lacks %q", e.Message, s)
			}
		}
	}
	if e := (faults.Rule{ID: "flt_5", DelayMS: 10}).APIError(); e != nil {
		t.Errorf("a delay-only rule has an error answer: %+v", e)
	}
}

func TestRule_JSONShapeOfTheControlAPI(t *testing.T) {
	var in faults.Rule
	body := `{"operation": "createPayment", "status": 503, "delay_ms": 1500, "when": "after", "times": 2, "probability": 0.25}`
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	if vs := in.Validate(); len(vs) != 0 {
		t.Fatalf("the DESIGN example does not validate: %+v", vs)
	}
	r := in.Normalize()
	r.ID, r.Source, r.Remaining, r.Hits = "flt_x", "api", ptr(1), 1
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"flt_x","source":"api","target":"api","operation":"createPayment","status":503,"when":"after",` +
		`"delay_ms":1500,"times":2,"probability":0.25,"remaining":1,"hits":1}`
	if string(out) != want {
		t.Errorf("answer\n got %s\nwant %s", out, want)
	}
	hook, _ := json.Marshal(faults.Rule{Target: faults.TargetWebhooks, BadSignature: true}.Normalize())
	if w := `{"target":"webhooks","bad_signature":true,"probability":1,"hits":0}`; string(hook) != w {
		t.Errorf("webhook answer\n got %s\nwant %s", hook, w)
	}
	if !slices.Equal(faults.Statuses(), []int{429, 500, 502, 503, 504}) {
		t.Errorf("Statuses() = %v", faults.Statuses())
	}
}

// A skew the receiver's tolerance covers is a rule of its own, not a
// mistake: it tests a receiver whose tolerance is narrower than the
// Standard Webhooks libraries' 300 s (docs/faults.md says so).
func TestValidate_ASkewWithinTheReferenceToleranceIsAcceptedAndItsDeliveryVerifies(t *testing.T) {
	secret, err := webhooks.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	reference, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"payment.completed"}`)
	for _, skew := range []int{-299, 10, 300, -600} {
		if vs := (faults.Rule{Target: faults.TargetWebhooks, TimestampSkewS: skew}).Validate(); len(vs) > 0 {
			t.Errorf("timestamp_skew_s %d refused: %+v", skew, vs)
		}
		// Signed over the skewed timestamp, as the sender signs it.
		at := time.Now().Add(time.Duration(skew) * time.Second)
		sig, err := webhooks.Sign(secret, "msg_skew", at, body)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("webhook-id", "msg_skew")
		h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		h.Set("webhook-signature", sig)
		err = reference.Verify(body, h)
		if within := skew >= -299 && skew <= 300; within != (err == nil) {
			t.Errorf("timestamp_skew_s %d: the reference library says %v", skew, err)
		}
	}
}
