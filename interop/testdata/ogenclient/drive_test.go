// Package ogenclient drives every operation of paymock's two documents
// with the clients ogen generated from them, against a sandbox running
// in process (paymocktest), once per response variant. The interop tests
// generate the client packages beside this file in a module of their own
// and run it; it is not part of paymock's build. Each operation checked
// prints "drove <operation> under <variants>", which the interop test
// compares with the operations the documents list.
package ogenclient

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/paymocktest"

	"paymockinterop/ogenclient/control"
	"paymockinterop/ogenclient/service"
)

// variants are the --variants specs driven: the default forms, every
// other form at once, and every form in turn.
var variants = []string{"default", "amount=string,status=succeeded,payment_link=omit", "all"}

// bearer is both clients' security source: the merchant's key.
type bearer string

func (b bearer) BearerAuth(context.Context, service.OperationName) (service.BearerAuth, error) {
	return service.BearerAuth{Token: string(b)}, nil
}

// controlBearer is bearer for the control API's client.
type controlBearer string

func (b controlBearer) BearerAuth(context.Context, control.OperationName) (control.BearerAuth, error) {
	return control.BearerAuth{Token: string(b)}, nil
}

// as is the answer when it is a T, and fails the test otherwise: an
// error of the client (a decoding failure above all) or another answer.
func as[T any](t *testing.T, op string, res any, err error) *T {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: the generated client fails: %v", op, err)
	}
	v, ok := res.(*T)
	if !ok {
		t.Fatalf("%s: answer %T %+v, want %T", op, res, res, v)
	}
	return v
}

// drove reports an operation as driven and checked.
func drove(op, spec string) { fmt.Printf("drove %s under %s\n", op, spec) }

func TestOgenClient_DrivesEveryOperation(t *testing.T) {
	for _, spec := range variants {
		t.Run(spec, func(t *testing.T) {
			s := paymocktest.New(t, paymocktest.WithVariants(spec), paymocktest.WithSeed(7))
			svc, err := service.NewClient(s.URL, bearer(s.APIKey))
			if err != nil {
				t.Fatal(err)
			}
			ctl, err := control.NewClient(s.URL, controlBearer(s.APIKey))
			if err != nil {
				t.Fatal(err)
			}
			drive(t, t.Context(), spec, svc, ctl)
		})
	}
}

// drive calls every operation of both documents once or more, in an
// order where each has something to act on, and checks what comes back.
func drive(t *testing.T, ctx context.Context, spec string, svc *service.Client, ctl *control.Client) {
	// The service API: three payments, with an mcc, with an account and a
	// card, and the largest amount.
	success, _ := url.Parse("https://shop.example.com/success")
	cancel, _ := url.Parse("https://shop.example.com/cancel")
	// A create answers a CreatedPayment: a Payment that carries
	// cancel_url, which the spec says create answers return.
	create := func(amount float64, edit func(*service.CreatePaymentRequest)) *service.CreatedPayment {
		t.Helper()
		req := &service.CreatePaymentRequest{
			Amount:      amount,
			Currency:    service.CurrencyEUR,
			Customer:    service.CustomerInput{Email: "jane@example.com", Name: "Jane Doe"},
			Description: "Order " + strconv.FormatFloat(amount, 'f', 2, 64),
			ExpiresIn:   3600,
			Metadata:    service.MetadataInput{},
			SuccessURL:  service.RedirectURL(*success),
			CancelURL:   service.RedirectURL(*cancel),
			Mcc:         service.NewOptInt32(5732),
		}
		edit(req)
		res, err := svc.CreatePayment(ctx, req)
		p := as[service.CreatedPayment](t, "createPayment", res, err)
		sameAmount(t, "createPayment", p.Amount, amount)
		if p.CancelURL.String() != cancel.String() {
			t.Errorf("createPayment: cancel_url %s, want %s", p.CancelURL.String(), cancel)
		}
		if p.Status != service.CreatedPaymentStatusPending {
			t.Errorf("createPayment: status %s, want pending", p.Status)
		}
		return p
	}
	checkout := create(10.5, func(*service.CreatePaymentRequest) {})
	card := create(1234567.89, func(r *service.CreatePaymentRequest) {
		r.Mcc = service.OptInt32{}
		r.AccountID = service.NewOptString("acct_sandbox_active")
		r.PaymentMethod = service.NewOptPaymentMethodInput(service.PaymentMethodInput{
			Type: service.PaymentMethodInputTypeCard,
			Card: service.CardInput{Number: "4242424242424242", ExpiryMonth: 12, ExpiryYear: 2034, Cvc: "123"},
		})
	})
	if card.PaymentMethod.Null || card.PaymentMethod.Value.Card.Last4 != "4242" {
		t.Errorf("createPayment with a card: payment_method %+v, want the card's last4", card.PaymentMethod)
	}
	largest := create(999999999.99, func(*service.CreatePaymentRequest) {})
	drove("createPayment", spec)

	for _, p := range []*service.CreatedPayment{checkout, card, largest} {
		res, err := svc.RetrievePayment(ctx, service.RetrievePaymentParams{ID: p.ID})
		got := as[service.Payment](t, "retrievePayment", res, err)
		if got.ID != p.ID || got.Description != p.Description {
			t.Errorf("retrievePayment %s: got %s %q", p.ID, got.ID, got.Description)
		}
	}
	res404, err := svc.RetrievePayment(ctx, service.RetrievePaymentParams{ID: "pay_000000000000000000000000"})
	as[service.RetrievePaymentNotFound](t, "retrievePayment of an unknown id", res404, err)
	drove("retrievePayment", spec)

	list := func(params service.ListPaymentsParams) *service.PaymentList {
		t.Helper()
		res, err := svc.ListPayments(ctx, params)
		return as[service.PaymentList](t, "listPayments", res, err)
	}
	all := list(service.ListPaymentsParams{})
	if len(all.Items) != 3 || all.Items[0].ID != largest.ID || all.Pagination.TotalItems != 3 {
		t.Errorf("listPayments: %d items, first %v, total %d; want 3, newest first", len(all.Items), firstID(all.Items), all.Pagination.TotalItems)
	}
	if page := list(service.ListPaymentsParams{Page: service.NewOptInt64(2), PerPage: service.NewOptInt64(2)}); len(page.Items) != 1 || page.Items[0].ID != checkout.ID {
		t.Errorf("listPayments page 2 of 2: %d items, first %v; want the oldest", len(page.Items), firstID(page.Items))
	}
	drove("listPayments", spec)

	// Outcomes, each seen again through the service API.
	completed, err := ctl.CompletePayment(ctx, control.CompletePaymentParams{ID: checkout.ID})
	if p := as[control.Payment](t, "completePayment", completed, err); p.Status != control.PaymentStatusCompleted && p.Status != control.PaymentStatusSucceeded || p.CompletedAt.Null {
		t.Errorf("completePayment: status %s, completed_at null %v", p.Status, p.CompletedAt.Null)
	}
	drove("completePayment", spec)
	failed, err := ctl.FailPayment(ctx, control.FailPaymentParams{ID: card.ID})
	if p := as[control.Payment](t, "failPayment", failed, err); p.Status != control.PaymentStatusFailed || !p.NextAction.Null {
		t.Errorf("failPayment: status %s, next_action null %v", p.Status, p.NextAction.Null)
	}
	drove("failPayment", spec)
	expired, err := ctl.ExpirePayment(ctx, control.ExpirePaymentParams{ID: largest.ID})
	if p := as[control.Payment](t, "expirePayment", expired, err); p.Status != control.PaymentStatusExpired {
		t.Errorf("expirePayment: status %s", p.Status)
	}
	again, err := ctl.ExpirePayment(ctx, control.ExpirePaymentParams{ID: largest.ID})
	as[control.ExpirePaymentConflict](t, "expirePayment of an expired payment", again, err)
	drove("expirePayment", spec)

	// The clock.
	clock, err := ctl.GetClock(ctx)
	before := as[control.Clock](t, "getClock", clock, err)
	if before.Mode != control.ClockModeFrozen {
		t.Errorf("getClock: mode %s, want frozen", before.Mode)
	}
	drove("getClock", spec)
	advanced, err := ctl.AdvanceClock(ctx, &control.AdvanceClockReq{Seconds: 90})
	if after := as[control.Clock](t, "advanceClock", advanced, err); time.Time(after.Now).Sub(time.Time(before.Now)) != 90*time.Second {
		t.Errorf("advanceClock by 90 s: from %v to %v", time.Time(before.Now), time.Time(after.Now))
	}
	drove("advanceClock", spec)

	// Events: one per outcome, delivered to paymocktest's receiver.
	evs, err := ctl.ListEvents(ctx, control.ListEventsParams{})
	events := as[control.ListEventsOK](t, "listEvents", evs, err)
	if len(events.Items) != 3 {
		t.Fatalf("listEvents: %d events, want one per outcome", len(events.Items))
	}
	for _, e := range events.Items {
		if !e.Payload.Data.IsPayment() || e.Payload.Data.Payment.ID != e.PaymentID {
			t.Errorf("listEvents: event %s carries %s, want its payment %s", e.ID, e.Payload.Data.Type, e.PaymentID)
		}
	}
	drove("listEvents", spec)
	redelivered, err := ctl.RedeliverEvent(ctx, control.RedeliverEventParams{ID: events.Items[0].ID})
	if e := as[control.Event](t, "redeliverEvent", redelivered, err); e.ID != events.Items[0].ID {
		t.Errorf("redeliverEvent: event %s, want %s", e.ID, events.Items[0].ID)
	}
	drove("redeliverEvent", spec)

	// Faults: a rule answers the next list with an injected 503, another
	// the next retrieve with a 429; a third is deleted unused.
	unused, err := ctl.AddFault(ctx, &control.FaultInput{
		Operation: control.NewOptFaultInputOperation(control.FaultInputOperation_createPayment),
		Status:    control.NewOptFaultInputStatus(control.FaultInputStatus500),
	})
	fault := as[control.Fault](t, "addFault", unused, err)
	rule, err := ctl.AddFault(ctx, &control.FaultInput{
		Operation: control.NewOptFaultInputOperation(control.FaultInputOperation_listPayments),
		Status:    control.NewOptFaultInputStatus(control.FaultInputStatus503),
		Times:     control.NewOptInt32(1),
	})
	as[control.Fault](t, "addFault", rule, err)
	limit, err := ctl.AddFault(ctx, &control.FaultInput{
		Operation:  control.NewOptFaultInputOperation(control.FaultInputOperation_retrievePayment),
		Status:     control.NewOptFaultInputStatus(control.FaultInputStatus429),
		RetryAfter: control.NewOptInt32(3),
		Times:      control.NewOptInt32(1),
	})
	as[control.Fault](t, "addFault", limit, err)
	drove("addFault", spec)
	faults, err := ctl.ListFaults(ctx)
	if l := as[control.FaultList](t, "listFaults", faults, err); len(l.Items) != 3 {
		t.Errorf("listFaults: %d rules, want 3", len(l.Items))
	}
	drove("listFaults", spec)
	deleted, err := ctl.DeleteFault(ctx, control.DeleteFaultParams{ID: fault.ID})
	as[control.DeleteFaultNoContent](t, "deleteFault", deleted, err)
	gone, err := ctl.DeleteFault(ctx, control.DeleteFaultParams{ID: fault.ID})
	as[control.DeleteFaultNotFound](t, "deleteFault twice", gone, err)
	drove("deleteFault", spec)
	unavailable, err := svc.ListPayments(ctx, service.ListPaymentsParams{})
	as[service.ListPaymentsServiceUnavailable](t, "listPayments under a 503 rule", unavailable, err)
	limited, err := svc.RetrievePayment(ctx, service.RetrievePaymentParams{ID: checkout.ID})
	if h := as[service.TooManyRequestsHeaders](t, "retrievePayment under a 429 rule", limited, err); h.RetryAfter.Value != 3 {
		t.Errorf("retrievePayment under a 429 rule: Retry-After %+v, want 3", h.RetryAfter)
	}
	cleared, err := ctl.ClearFaults(ctx)
	as[control.ClearFaultsNoContent](t, "clearFaults", cleared, err)
	drove("clearFaults", spec)

	// API keys: a new one works for the service API until revoked.
	created, err := ctl.CreateAPIKey(ctx)
	key := as[control.APIKey](t, "createAPIKey", created, err)
	if !key.Key.Set || !strings.Contains(key.Masked, "…") {
		t.Errorf("createAPIKey: key shown %v, masked %q", key.Key.Set, key.Masked)
	}
	drove("createAPIKey", spec)
	keys, err := ctl.ListAPIKeys(ctx)
	if l := as[control.APIKeyList](t, "listAPIKeys", keys, err); len(l.Items) == 0 {
		t.Error("listAPIKeys: no keys")
	}
	drove("listAPIKeys", spec)
	revoked, err := ctl.RevokeAPIKey(ctx, control.RevokeAPIKeyParams{ID: key.ID})
	as[control.RevokeAPIKeyNoContent](t, "revokeAPIKey", revoked, err)
	drove("revokeAPIKey", spec)

	// Webhook endpoints: added, sent a test event, deleted.
	hook, _ := url.Parse("http://127.0.0.1:9/hooks")
	added, err := ctl.AddWebhookEndpoint(ctx, &control.AddWebhookEndpointReq{URL: control.RedirectURL(*hook)})
	endpoint := as[control.WebhookEndpoint](t, "addWebhookEndpoint", added, err)
	if !strings.HasPrefix(endpoint.Secret, "whsec_") {
		t.Errorf("addWebhookEndpoint: secret %q", endpoint.Secret)
	}
	drove("addWebhookEndpoint", spec)
	endpoints, err := ctl.ListWebhookEndpoints(ctx)
	if l := as[control.WebhookEndpointList](t, "listWebhookEndpoints", endpoints, err); len(l.Items) < 2 {
		t.Errorf("listWebhookEndpoints: %d endpoints, want paymocktest's and the added one", len(l.Items))
	}
	drove("listWebhookEndpoints", spec)
	sent, err := ctl.SendTestEvent(ctx, control.SendTestEventParams{ID: endpoint.ID})
	if e := as[control.Event](t, "sendTestEvent", sent, err); !e.Payload.Data.IsTestEventData() {
		t.Errorf("sendTestEvent: data %s, want the test event's", e.Payload.Data.Type)
	}
	drove("sendTestEvent", spec)
	removed, err := ctl.DeleteWebhookEndpoint(ctx, control.DeleteWebhookEndpointParams{ID: endpoint.ID})
	as[control.DeleteWebhookEndpointNoContent](t, "deleteWebhookEndpoint", removed, err)
	drove("deleteWebhookEndpoint", spec)

	// What the client did, as the journal and the report see it.
	reqs, err := ctl.ListRequests(ctx, control.ListRequestsParams{PerPage: control.NewOptInt64(100)})
	journal := as[control.ListRequestsOK](t, "listRequests", reqs, err)
	injected := 0
	for _, e := range journal.Items {
		if e.InjectedFault.Set {
			injected++
		}
		if len(e.Violations) > 0 {
			t.Errorf("listRequests: %s %s broke the contract: %+v", e.Method, e.Path, e.Violations)
		}
	}
	if injected != 2 {
		t.Errorf("listRequests: %d injected answers, want 2", injected)
	}
	drove("listRequests", spec)
	rep, err := ctl.GetReport(ctx, control.GetReportParams{})
	if r := as[control.Report](t, "getReport", rep, err); r.InjectedCalls != 2 || r.ViolatingCalls != 0 || r.Calls < 10 {
		t.Errorf("getReport: %d calls, %d injected, %d violating", r.Calls, r.InjectedCalls, r.ViolatingCalls)
	}
	junit, err := ctl.GetReport(ctx, control.GetReportParams{Format: control.NewOptGetReportFormat(control.GetReportFormatJunit)})
	xml, err := io.ReadAll(as[control.GetReportOKApplicationXML](t, "getReport as JUnit", junit, err).Data)
	if err != nil || !strings.Contains(string(xml), "<testsuite") {
		t.Errorf("getReport as JUnit: %v %.200s", err, xml)
	}
	drove("getReport", spec)

	// Reset last: the merchant starts afresh.
	reset, err := ctl.ResetMerchant(ctx)
	as[control.ResetMerchantNoContent](t, "resetMerchant", reset, err)
	if l := list(service.ListPaymentsParams{}); len(l.Items) != 0 {
		t.Errorf("listPayments after resetMerchant: %d payments, want none", len(l.Items))
	}
	drove("resetMerchant", spec)
}

// amountSum is a generated sum type of an amount: a created payment's
// (CreatedPaymentAmount) or another answer's (PaymentAmount).
type amountSum interface {
	GetFloat64() (float64, bool)
	GetString() (string, bool)
}

// sameAmount checks an amount as the generated sum type holds it: the
// float64 sent, or its decimal string with two decimals.
func sameAmount(t *testing.T, op string, a amountSum, want float64) {
	t.Helper()
	f, isFloat := a.GetFloat64()
	s, isString := a.GetString()
	switch {
	case isFloat:
		if f != want {
			t.Errorf("%s: amount %v, want %v", op, f, want)
		}
	case isString:
		if s != strconv.FormatFloat(want, 'f', 2, 64) {
			t.Errorf("%s: amount %q, want %.2f", op, s, want)
		}
	default:
		t.Errorf("%s: amount of neither form: %+v", op, a)
	}
}

func firstID(ps []service.Payment) string {
	if len(ps) == 0 {
		return "none"
	}
	return ps[0].ID
}
