// Package outboxtest is the conformance suite of paymock.Outbox and
// paymock.EventStore: the memory and PostgreSQL backends run the same tests
// through Run and RunEventStore, so that the webhook dispatcher, which
// holds its algorithm once, behaves the same on both.
package outboxtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// t0 is the merchant clock the suite's deliveries are due around: whole
// seconds, which every backend stores exactly.
var t0 = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// wall is the wall time claims are made at: leases run on it.
var wall = time.Date(2026, time.March, 14, 15, 9, 26, 0, time.UTC)

const lease = 15 * time.Second

// Run runs the Outbox suite. open returns an empty outbox for one subtest;
// it registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) paymock.Outbox) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, o paymock.Outbox)
	}{
		{"AddEventReturnsIDsInOrderAndRefusesADuplicate", addEventRefusesDuplicate},
		{"EventsAreNewestFirstPagedAndPerMerchant", eventsNewestFirst},
		{"RecordsShowTheRoundAndHideTheSecret", recordsShowRound},
		{"ClaimTakesDueChainHeadsInDueOrder", claimDueHeads},
		{"ClaimHoldsForTheLeaseOnly", claimHoldsForLease},
		{"ClaimOfIDsTakesOnlyThose", claimOfIDs},
		{"AttemptedRecordsAndEndsTheClaim", attemptedRecords},
		{"AttemptedUnderALapsedClaimRecordsNothing", attemptedLapsed},
		{"ReleaseMakesTheDeliveryClaimableAgain", releaseClaimable},
		{"AReorderWindowSendsOneAtATimeNewestFirst", windowOneAtATime},
		{"WindowTellsTheOpenWindowOfAnEndpoint", windowOpen},
		{"AddRoundNumbersRoundsAndWaitsInLine", addRoundInLine},
		{"AddRoundStopsAtThePendingLimit", addRoundStopsAtLimit},
		{"UnknownEventsAreNotFound", unknownNotFound},
		{"DueDeliveriesListsHeadsWithoutClaiming", dueDeliveries},
		{"DueMerchantsNamesThoseWithSomethingDue", dueMerchants},
		{"ClaimedAndPendingTellWhatIsUnderWay", claimedAndPending},
		{"ResetForgetsAMerchantAndNothingElse", resetForgets},
		{"TrimKeepsTheNewestAndThoseStillPending", trimKeeps},
		{"TrimKeepsTheNewestEventsThatHoldTheDeliveriesBound", trimKeepsDeliveries},
		{"EndpointDeliveriesAreNewestFirst", endpointDeliveries},
		{"FaultsSurviveTheOutbox", faultsSurvive},
		{"BadArgumentsAreRefused", badArguments},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// RunEventStore runs the EventStore suite. open returns an empty backend
// for one subtest, whose Payments, Outbox and Events are one store.
func RunEventStore(t *testing.T, open func(t *testing.T) paymock.Backend) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, b paymock.Backend)
	}{
		{"UpdateWithEventStoresBoth", updateWithEventStoresBoth},
		{"UpdateWithEventChangesNothingWhenAPartFails", updateWithEventAtomic},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// Event makes an Outgoing of merchant m, event number i of payment pay,
// with one pending delivery per endpoint URL given, due at t0.
func Event(m string, i int, pay string, urls ...string) paymock.Outgoing {
	id := fmt.Sprintf("evt_%s_%03d", m, i)
	o := paymock.Outgoing{Event: paymock.Event{ID: id, Type: paymock.EventCompleted, MerchantID: m,
		CreatedAt: t0, Body: []byte(`{"id":"` + id + `"}`), Payment: paymock.Payment{ID: pay}}}
	for k, u := range urls {
		del := paymock.Delivery{EndpointID: fmt.Sprintf("we_%d", k), URL: u,
			Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", State: paymock.DeliveryPending, NextAt: t0, Round: 1,
			Position: k}
		if pay != "" {
			del.Chain = pay + " " + u
		}
		o.Deliveries = append(o.Deliveries, del)
	}
	return o
}

func add(t *testing.T, o paymock.Outbox, out paymock.Outgoing) []int64 {
	t.Helper()
	ids, err := o.AddEvent(context.Background(), out)
	if err != nil {
		t.Fatalf("AddEvent(%s): %v", out.Event.ID, err)
	}
	return ids
}

func claim(t *testing.T, o paymock.Outbox, c paymock.Claim) []paymock.Delivery {
	t.Helper()
	if c.Lease == 0 {
		c.Lease = lease
	}
	if c.Limit == 0 {
		c.Limit = 100
	}
	if c.Now.IsZero() {
		c.Now = wall
	}
	if c.Until.IsZero() {
		c.Until = t0
	}
	dels, err := o.Claim(context.Background(), c)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return dels
}

func claimedIDs(dels []paymock.Delivery) []int64 {
	out := []int64{}
	for _, d := range dels {
		out = append(out, d.ID)
	}
	return out
}

func attempted(t *testing.T, o paymock.Outbox, d paymock.Delivery, st paymock.DeliveryState, next time.Time) {
	t.Helper()
	u := paymock.Outcome{Sends: d.Sends + 1, State: st, NextAt: next,
		Attempts: []paymock.AttemptRecord{{Attempt: d.Sends + 1, At: paymock.FormatTime(t0), StatusCode: 500, Error: "endpoint answered 500"}}}
	if st == paymock.DeliveryDelivered {
		u.Attempts[0].StatusCode, u.Attempts[0].Error = 204, ""
	}
	if err := o.Attempted(context.Background(), d, u); err != nil {
		t.Fatalf("Attempted(%d): %v", d.ID, err)
	}
}

func event(t *testing.T, o paymock.Outbox, m, id string) paymock.EventRecord {
	t.Helper()
	r, ok, err := o.Event(context.Background(), m, id)
	if err != nil || !ok {
		t.Fatalf("Event(%s, %s) = %v, %v", m, id, ok, err)
	}
	return r
}

func addEventRefusesDuplicate(t *testing.T, o paymock.Outbox) {
	ids := add(t, o, Event("acme", 1, "pay_1", "http://a.test/1", "http://a.test/2"))
	if len(ids) != 2 || ids[0] >= ids[1] {
		t.Errorf("ids %v: want two, increasing", ids)
	}
	if _, err := o.AddEvent(context.Background(), Event("acme", 1, "pay_1", "http://a.test/1")); err == nil {
		t.Error("an event id stored twice was taken")
	}
	if recs, total, _ := o.Events(context.Background(), "acme", 0, 0); total != 1 || len(recs[0].Deliveries) != 2 {
		t.Errorf("after a refused duplicate: %d events, %+v", total, recs)
	}
	// The same id under another merchant is another event.
	add(t, o, Event("globex", 1, "pay_1", "http://g.test/1"))
}

func eventsNewestFirst(t *testing.T, o paymock.Outbox) {
	for i := range 5 {
		add(t, o, Event("acme", i, fmt.Sprintf("pay_%d", i)))
	}
	add(t, o, Event("globex", 9, "pay_9"))
	recs, total, err := o.Events(context.Background(), "acme", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if want := []string{"evt_acme_003", "evt_acme_002"}; total != 5 || !reflect.DeepEqual(got, want) {
		t.Errorf("page (1, 2): %d events %v, want 5 and %v", total, got, want)
	}
	if recs, total, _ := o.Events(context.Background(), "initech", 0, 0); total != 0 || recs == nil || len(recs) != 0 {
		t.Errorf("a merchant without events: %d, %#v; want 0 and an empty list", total, recs)
	}
	if recs[0].Deliveries == nil {
		t.Error("an event without deliveries has a null list")
	}
}

func recordsShowRound(t *testing.T, o paymock.Outbox) {
	out := Event("acme", 1, "pay_1", "http://user:pw@a.test/1")
	add(t, o, out)
	r := event(t, o, "acme", out.Event.ID)
	if r.Type != paymock.EventCompleted || r.PaymentID != "pay_1" || r.CreatedAt != paymock.FormatTime(t0) ||
		string(r.Payload) != string(out.Event.Body) {
		t.Errorf("record %+v does not carry the event", r)
	}
	d := r.Deliveries[0]
	if d.Round != 1 || d.EndpointID != "we_0" || d.URL != "http://user:xxxxx@a.test/1" || d.State != paymock.DeliveryPending ||
		d.Attempts == nil || len(d.Attempts) != 0 || d.NextAttemptAt != "" {
		t.Errorf("a new delivery's record: %+v", d)
	}
	dels := claim(t, o, paymock.Claim{MerchantID: "acme"})
	attempted(t, o, dels[0], paymock.DeliveryPending, t0.Add(5*time.Second))
	d = event(t, o, "acme", out.Event.ID).Deliveries[0]
	if len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 500 || d.NextAttemptAt != paymock.FormatTime(t0.Add(5*time.Second)) {
		t.Errorf("after a failed send: %+v, want its attempt and its retry's time", d)
	}
}

func claimDueHeads(t *testing.T, o paymock.Outbox) {
	first := add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	second := add(t, o, Event("acme", 2, "pay_1", "http://a.test/1")) // same chain
	other := add(t, o, Event("acme", 3, "pay_2", "http://a.test/1"))
	later := Event("acme", 4, "pay_3", "http://a.test/1")
	later.Deliveries[0].NextAt = t0.Add(time.Minute)
	add(t, o, later)
	add(t, o, Event("globex", 1, "pay_1", "http://a.test/1"))

	got := claimedIDs(claim(t, o, paymock.Claim{MerchantID: "acme"}))
	if want := []int64{first[0], other[0]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claimed %v, want the chains' heads due now %v", got, want)
	}
	dels := claim(t, o, paymock.Claim{MerchantID: "acme", Until: t0.Add(time.Hour), Now: wall.Add(time.Second)})
	if got := claimedIDs(dels); len(got) != 1 {
		t.Fatalf("claimed %v once the clock is later, want only the later one", got)
	}
	d1 := claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(lease)}) // leases lapsed
	attempted(t, o, d1[0], paymock.DeliveryDelivered, time.Time{})
	got = claimedIDs(claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(lease + time.Second)}))
	if !reflect.DeepEqual(got, []int64{second[0]}) {
		t.Errorf("after the head was delivered: claimed %v, want the next of its chain %v", got, second)
	}
}

func claimHoldsForLease(t *testing.T, o paymock.Outbox) {
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	dels := claim(t, o, paymock.Claim{MerchantID: "acme"})
	if len(dels) != 1 || !dels[0].ClaimedUntil.Equal(wall.Add(lease)) {
		t.Fatalf("claim: %+v, want one delivery claimed until %s", dels, wall.Add(lease))
	}
	if again := claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(lease - time.Second)}); len(again) != 0 {
		t.Errorf("claimed again within the lease: %v", claimedIDs(again))
	}
	if again := claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(lease)}); len(again) != 1 {
		t.Errorf("not claimed again once the lease ran out: %v", claimedIDs(again))
	}
}

func claimOfIDs(t *testing.T, o paymock.Outbox) {
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	ids := add(t, o, Event("acme", 2, "pay_2", "http://a.test/1"))
	got := claimedIDs(claim(t, o, paymock.Claim{MerchantID: "acme", IDs: ids}))
	if !reflect.DeepEqual(got, ids) {
		t.Errorf("claimed %v, want only %v", got, ids)
	}
}

func attemptedRecords(t *testing.T, o paymock.Outbox) {
	out := Event("acme", 1, "pay_1", "http://a.test/1")
	add(t, o, out)
	d := claim(t, o, paymock.Claim{MerchantID: "acme"})[0]
	attempted(t, o, d, paymock.DeliveryPending, t0.Add(5*time.Second))
	if again := claim(t, o, paymock.Claim{MerchantID: "acme", Until: t0.Add(4 * time.Second)}); len(again) != 0 {
		t.Errorf("claimed before its retry is due: %v", claimedIDs(again))
	}
	d = claim(t, o, paymock.Claim{MerchantID: "acme", Until: t0.Add(5 * time.Second)})[0]
	if d.Sends != 1 || len(d.Attempts) != 1 {
		t.Errorf("claimed for its retry: sends %d, %d attempts; want 1 and 1", d.Sends, len(d.Attempts))
	}
	attempted(t, o, d, paymock.DeliveryDelivered, time.Time{})
	r := event(t, o, "acme", out.Event.ID).Deliveries[0]
	if r.State != paymock.DeliveryDelivered || len(r.Attempts) != 2 || r.NextAttemptAt != "" {
		t.Errorf("delivered on its second send: %+v", r)
	}
	if again := claim(t, o, paymock.Claim{MerchantID: "acme", Until: t0.Add(time.Hour), Now: wall.Add(time.Hour)}); len(again) != 0 {
		t.Errorf("a delivered delivery was claimed: %v", claimedIDs(again))
	}
}

func attemptedLapsed(t *testing.T, o paymock.Outbox) {
	out := Event("acme", 1, "pay_1", "http://a.test/1")
	add(t, o, out)
	stale := claim(t, o, paymock.Claim{MerchantID: "acme"})[0]
	fresh := claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(lease)})[0]
	attempted(t, o, stale, paymock.DeliveryDelivered, time.Time{})
	if r := event(t, o, "acme", out.Event.ID).Deliveries[0]; r.State != paymock.DeliveryPending || len(r.Attempts) != 0 {
		t.Errorf("an outcome under a lapsed claim was recorded: %+v", r)
	}
	attempted(t, o, fresh, paymock.DeliveryFailed, time.Time{})
	if r := event(t, o, "acme", out.Event.ID).Deliveries[0]; r.State != paymock.DeliveryFailed {
		t.Errorf("the live claim's outcome: %+v", r)
	}
}

func releaseClaimable(t *testing.T, o paymock.Outbox) {
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	d := claim(t, o, paymock.Claim{MerchantID: "acme"})[0]
	if err := o.Release(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	again := claim(t, o, paymock.Claim{MerchantID: "acme", Now: wall.Add(time.Second)})
	if len(again) != 1 || again[0].Sends != 0 || len(again[0].Attempts) != 0 {
		t.Errorf("after a release: %+v, want it claimed again, unsent", again)
	}
}

func windowOneAtATime(t *testing.T, o paymock.Outbox) {
	w := &paymock.WebhookFault{RuleID: "flt_1", Reorder: true, Window: time.Second}
	var ids []int64
	for i := range 3 {
		out := Event("acme", i, fmt.Sprintf("pay_%d", i), "http://a.test/1")
		out.Deliveries[0].Window, out.Deliveries[0].NextAt = w, t0.Add(time.Second)
		ids = append(ids, add(t, o, out)[0])
	}
	plain := add(t, o, Event("acme", 9, "pay_9", "http://a.test/2"))
	until := t0.Add(time.Second)
	first := claim(t, o, paymock.Claim{MerchantID: "acme", Until: until})
	if got, want := claimedIDs(first), []int64{plain[0], ids[2]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claimed %v, want the other endpoint's and the window's newest %v", got, want)
	}
	cur := first[1]
	order := []int64{cur.ID}
	now := wall.Add(time.Second)
	for range 2 {
		if more := claim(t, o, paymock.Claim{MerchantID: "acme", Until: until, Now: now}); len(more) != 0 {
			t.Fatalf("claimed %v while the window's send is under way", claimedIDs(more))
		}
		attempted(t, o, cur, paymock.DeliveryDelivered, time.Time{})
		next := claim(t, o, paymock.Claim{MerchantID: "acme", Until: until, Now: now})
		if len(next) != 1 {
			t.Fatalf("after a send of the window: claimed %v, want one", claimedIDs(next))
		}
		cur = next[0]
		order = append(order, cur.ID)
	}
	if want := []int64{ids[2], ids[1], ids[0]}; !reflect.DeepEqual(order, want) {
		t.Errorf("window sent %v, want newest first %v", order, want)
	}
}

func windowOpen(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	if _, f, err := o.Window(ctx, "acme", "http://a.test/1", t0); err != nil || f != nil {
		t.Fatalf("no window yet: %v, %v", f, err)
	}
	w := &paymock.WebhookFault{RuleID: "flt_1", Reorder: true, Window: 2 * time.Second}
	out := Event("acme", 1, "pay_1", "http://a.test/1")
	out.Deliveries[0].Window, out.Deliveries[0].NextAt = w, t0.Add(2*time.Second)
	add(t, o, out)
	closes, f, err := o.Window(ctx, "acme", "http://a.test/1", t0.Add(time.Second))
	if err != nil || f == nil || *f != *w || !closes.Equal(t0.Add(2*time.Second)) {
		t.Errorf("open window: closes %s, %+v, %v; want %s and its fault", closes, f, err, t0.Add(2*time.Second))
	}
	if _, f, _ := o.Window(ctx, "acme", "http://a.test/2", t0); f != nil {
		t.Error("another endpoint's window was found")
	}
	if _, f, _ := o.Window(ctx, "acme", "http://a.test/1", t0.Add(2*time.Second)); f != nil {
		t.Error("a window was found open once it closed")
	}
}

func addRoundInLine(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	out := Event("acme", 1, "pay_1", "http://a.test/1", "http://a.test/2")
	first := add(t, o, out)
	round := []paymock.Delivery{out.Deliveries[0], out.Deliveries[1]}
	again, err := o.AddRound(ctx, "acme", out.Event.ID, round, 0)
	if err != nil {
		t.Fatal(err)
	}
	dels, err := o.Round(ctx, "acme", out.Event.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(dels) != 2 || dels[0].ID != again[0] || dels[0].Round != 2 || dels[1].Position != 1 ||
		dels[0].EventType != paymock.EventCompleted || string(dels[0].Body) != string(out.Event.Body) {
		t.Errorf("round 2: %+v", dels)
	}
	got := claimedIDs(claim(t, o, paymock.Claim{MerchantID: "acme"}))
	if !reflect.DeepEqual(got, first) {
		t.Errorf("claimed %v, want round 1 %v only: round 2 waits behind it", got, first)
	}
	if r := event(t, o, "acme", out.Event.ID); len(r.Deliveries) != 4 || r.Deliveries[2].Round != 2 {
		t.Errorf("record after a redelivery: %+v", r.Deliveries)
	}
}

func unknownNotFound(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	add(t, o, Event("acme", 1, "pay_1"))
	if _, err := o.AddRound(ctx, "globex", "evt_acme_001", nil, 0); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("AddRound of another merchant's event: %v, want ErrNotFound", err)
	}
	if _, err := o.Round(ctx, "acme", "evt_nope", 1); !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("Round of an unknown event: %v, want ErrNotFound", err)
	}
	if _, ok, err := o.Event(ctx, "globex", "evt_acme_001"); ok || err != nil {
		t.Errorf("Event of another merchant's: %v, %v", ok, err)
	}
}

func dueDeliveries(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	a := add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	add(t, o, Event("acme", 2, "pay_1", "http://a.test/1"))
	later := Event("acme", 3, "pay_3", "http://a.test/1")
	later.Deliveries[0].NextAt = t0.Add(time.Minute)
	c := add(t, o, later)
	dels, err := o.DueDeliveries(ctx, "acme", t0.Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := claimedIDs(dels), []int64{a[0], c[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("due by an hour: %v, want the heads in due order %v", got, want)
	}
	if got := claimedIDs(claim(t, o, paymock.Claim{MerchantID: "acme"})); !reflect.DeepEqual(got, a) {
		t.Errorf("listing claimed something: a claim then took %v, want %v", got, a)
	}
}

func dueMerchants(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	base := t0.Sub(wall) // the merchants' clocks stand at t0 at wall
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	later := Event("globex", 1, "pay_1", "http://g.test/1")
	later.Deliveries[0].NextAt = t0.Add(time.Hour)
	add(t, o, later)
	add(t, o, Event("initech", 1, "pay_1")) // no deliveries
	got, err := o.DueMerchants(ctx, wall, base, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"acme"}) {
		t.Errorf("due merchants %v, want [acme]", got)
	}
	got, _ = o.DueMerchants(ctx, wall.Add(time.Hour), base, 10)
	if !reflect.DeepEqual(got, []string{"acme", "globex"}) {
		t.Errorf("an hour later: %v, want [acme globex]", got)
	}
}

func claimedAndPending(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	if p, err := o.Pending(ctx, "acme"); p || err != nil {
		t.Errorf("Pending of an empty outbox: %v, %v", p, err)
	}
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	if p, _ := o.Pending(ctx, "acme"); !p {
		t.Error("a pending delivery is not Pending")
	}
	if c, _ := o.Claimed(ctx, "acme", wall); c {
		t.Error("Claimed before any claim")
	}
	d := claim(t, o, paymock.Claim{MerchantID: "acme"})[0]
	if c, _ := o.Claimed(ctx, "acme", wall.Add(time.Second)); !c {
		t.Error("not Claimed within the lease")
	}
	if c, _ := o.Claimed(ctx, "acme", wall.Add(lease)); c {
		t.Error("Claimed once the lease ran out")
	}
	attempted(t, o, d, paymock.DeliveryDelivered, time.Time{})
	if p, _ := o.Pending(ctx, "acme"); p {
		t.Error("Pending once the delivery was delivered")
	}
}

func resetForgets(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
	add(t, o, Event("globex", 1, "pay_1", "http://g.test/1"))
	d := claim(t, o, paymock.Claim{MerchantID: "acme"})[0]
	if err := o.ResetEvents(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := o.Attempted(ctx, d, paymock.Outcome{Sends: 1, State: paymock.DeliveryDelivered}); err != nil {
		t.Errorf("Attempted after a reset: %v, want nothing recorded and no error", err)
	}
	if _, total, _ := o.Events(ctx, "acme", 0, 0); total != 0 {
		t.Errorf("%d events after a reset", total)
	}
	if p, _ := o.Pending(ctx, "acme"); p {
		t.Error("Pending after a reset")
	}
	if _, total, _ := o.Events(ctx, "globex", 0, 0); total != 1 {
		t.Error("another merchant's events went with the reset")
	}
	// The same ids may be used again.
	add(t, o, Event("acme", 1, "pay_1", "http://a.test/1"))
}

func trimKeeps(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	for i := range 6 {
		out := Event("acme", i, fmt.Sprintf("pay_%d", i))
		if i == 1 { // an old event with a delivery still to send
			out = Event("acme", i, "pay_1", "http://a.test/1")
			out.Deliveries[0].NextAt = t0.Add(time.Hour)
		}
		add(t, o, out)
		add(t, o, Event("globex", i, fmt.Sprintf("pay_%d", i)))
	}
	if err := o.TrimEvents(ctx, "acme", paymock.KeepEvents{Events: 2, Deliveries: 100}); err != nil {
		t.Fatal(err)
	}
	recs, total, err := o.Events(ctx, "acme", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if want := []string{"evt_acme_005", "evt_acme_004", "evt_acme_001"}; total != 3 || !reflect.DeepEqual(ids, want) {
		t.Errorf("after a trim to 2: %d events %v, want %v", total, ids, want)
	}
	if _, total, _ := o.Events(ctx, "globex", 0, 0); total != 6 {
		t.Errorf("another merchant's journal holds %d events after acme's trim, want 6", total)
	}
}

func endpointDeliveries(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	for i := range 3 {
		add(t, o, Event("acme", i, fmt.Sprintf("pay_%d", i), "http://a.test/1", "http://a.test/2"))
	}
	out := Event("acme", 0, "pay_0", "http://a.test/1", "http://a.test/2")
	if _, err := o.AddRound(ctx, "acme", out.Event.ID, out.Deliveries, 0); err != nil {
		t.Fatal(err)
	}
	recs, total, err := o.EndpointDeliveries(ctx, "acme", "we_1", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s/%d/%s", r.EventID, r.Round, r.URL))
	}
	want := []string{"evt_acme_002/1/http://a.test/2", "evt_acme_001/1/http://a.test/2", "evt_acme_000/2/http://a.test/2"}
	if total != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("endpoint deliveries: %d %v, want 4 %v", total, got, want)
	}
	if recs[0].EventType != paymock.EventCompleted || recs[0].PaymentID != "pay_2" {
		t.Errorf("an endpoint delivery does not name its event: %+v", recs[0])
	}
	if recs, total, _ := o.EndpointDeliveries(ctx, "globex", "we_1", 0, 0); total != 0 || len(recs) != 0 {
		t.Errorf("another merchant's endpoint: %d %v", total, recs)
	}
}

func faultsSurvive(t *testing.T, o paymock.Outbox) {
	f := &paymock.WebhookFault{RuleID: "flt_1", Duplicate: 3, BadSignature: true, TimestampSkew: -time.Hour,
		Delay: 1500 * time.Millisecond}
	out := Event("acme", 1, "pay_1", "http://a.test/1")
	out.OneShot = true
	out.Deliveries[0].Fault, out.Deliveries[0].NextAt = f, t0.Add(f.Delay)
	add(t, o, out)
	dels := claim(t, o, paymock.Claim{MerchantID: "acme", Until: t0.Add(2 * time.Second)})
	if len(dels) != 1 || dels[0].Fault == nil || *dels[0].Fault != *f || dels[0].Window != nil || !dels[0].OneShot ||
		!dels[0].NextAt.Equal(t0.Add(f.Delay)) || dels[0].Secret != out.Deliveries[0].Secret {
		t.Errorf("claimed %+v, want the delivery as stored with its fault", dels)
	}
	if r := event(t, o, "acme", out.Event.ID).Deliveries[0]; r.NextAttemptAt != paymock.FormatTime(t0.Add(f.Delay)) {
		t.Errorf("a delayed delivery's record shows next_attempt_at %q", r.NextAttemptAt)
	}
}

func badArguments(t *testing.T, o paymock.Outbox) {
	ctx := context.Background()
	if _, err := o.Claim(ctx, paymock.Claim{MerchantID: "acme", Now: wall, Until: t0, Limit: 1}); err == nil {
		t.Error("a claim without a lease was taken")
	}
	if _, err := o.Claim(ctx, paymock.Claim{MerchantID: "acme", Now: wall, Until: t0, Lease: lease}); err == nil {
		t.Error("a claim without a limit was taken")
	}
	if _, err := o.Claim(ctx, paymock.Claim{Now: wall, Until: t0, Lease: lease, Limit: 1}); err == nil {
		t.Error("a claim without a merchant was taken")
	}
	if err := o.TrimEvents(ctx, "acme", paymock.KeepEvents{Events: 0, Deliveries: 100}); err == nil {
		t.Error("a trim keeping no event was taken")
	}
	if err := o.TrimEvents(ctx, "acme", paymock.KeepEvents{Events: 100, Deliveries: 0}); err == nil {
		t.Error("a trim keeping no delivery was taken")
	}
	if _, err := o.DueDeliveries(ctx, "acme", t0, 0); err == nil {
		t.Error("a listing without a limit was taken")
	}
}

// payment is a pending payment of merchant m, as the store keeps it.
func payment(m, id string) paymock.Payment {
	return paymock.Payment{ID: id, MerchantID: m, Amount: 1050, Currency: paymock.USD, Status: paymock.StatusPending,
		CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
}

func updateWithEventStoresBoth(t *testing.T, b paymock.Backend) {
	ctx := context.Background()
	if err := b.Payments.Insert(ctx, payment("acme", "pay_1"), -1); err != nil {
		t.Fatal(err)
	}
	p, out, ids, err := b.Events.UpdateWithEvent(ctx, "acme", "pay_1",
		func(p *paymock.Payment) error { return p.Transition(paymock.StatusCompleted, t0.Add(time.Minute)) },
		func(p paymock.Payment) (paymock.Outgoing, error) {
			if p.Status != paymock.StatusCompleted {
				return paymock.Outgoing{}, fmt.Errorf("event made of a payment %s", p.Status)
			}
			return Event("acme", 1, p.ID, "http://a.test/1"), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != paymock.StatusCompleted || out.Event.ID != "evt_acme_001" || len(ids) != 1 {
		t.Errorf("UpdateWithEvent = %s, %s, %v", p.Status, out.Event.ID, ids)
	}
	if got, _ := b.Payments.Get(ctx, "acme", "pay_1"); got.Status != paymock.StatusCompleted {
		t.Errorf("stored payment is %s", got.Status)
	}
	if dels := claim(t, b.Outbox, paymock.Claim{MerchantID: "acme"}); len(dels) != 1 || dels[0].ID != ids[0] {
		t.Errorf("the event's delivery is not claimable: %v", claimedIDs(dels))
	}
	_, _, _, err = b.Events.UpdateWithEvent(ctx, "acme", "pay_nope", func(*paymock.Payment) error { return nil },
		func(paymock.Payment) (paymock.Outgoing, error) { return Event("acme", 2, "pay_nope"), nil })
	if !errors.Is(err, paymock.ErrNotFound) {
		t.Errorf("an unknown payment: %v, want ErrNotFound", err)
	}
}

func updateWithEventAtomic(t *testing.T, b paymock.Backend) {
	ctx := context.Background()
	if err := b.Payments.Insert(ctx, payment("acme", "pay_1"), -1); err != nil {
		t.Fatal(err)
	}
	add(t, b.Outbox, Event("acme", 1, "pay_0"))
	complete := func(p *paymock.Payment) error { return p.Transition(paymock.StatusCompleted, t0.Add(time.Minute)) }
	for name, event := range map[string]func(paymock.Payment) (paymock.Outgoing, error){
		"the event fails": func(paymock.Payment) (paymock.Outgoing, error) {
			return paymock.Outgoing{}, errors.New("no event")
		},
		"the event cannot be stored": func(paymock.Payment) (paymock.Outgoing, error) {
			return Event("acme", 1, "pay_1", "http://a.test/1"), nil // a duplicate id
		},
	} {
		if _, _, _, err := b.Events.UpdateWithEvent(ctx, "acme", "pay_1", complete, event); err == nil {
			t.Errorf("%s: no error", name)
		}
		if p, _ := b.Payments.Get(ctx, "acme", "pay_1"); p.Status != paymock.StatusPending {
			t.Errorf("%s: the payment moved to %s", name, p.Status)
		}
		if _, total, _ := b.Outbox.Events(ctx, "acme", 0, 0); total != 1 {
			t.Errorf("%s: %d events stored, want the 1 there was", name, total)
		}
	}
}
