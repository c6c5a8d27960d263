// The dashboard of one replica shows what every replica did.

package sandbox

import (
	"testing"
)

func TestSharedDashboard_RequestsReportAndTimelineOfAnotherReplica(t *testing.T) {
	rcv := newReceiver(t, nil)
	envs := replicaEnvs(t, 2, withWebhooks(nil, webhookEndpoint(rcv)))
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil)
	<-rcv.notify
	parts := dashboardParts{merchants: b.sb.merchants, engine: b.sb.engine, hooks: b.sb.hooks, server: b.sb.server}
	m := mustMerchant(t, b, keyA)
	ctx := t.Context()

	reqs, total, err := journalView{parts}.Requests(ctx, m, false, 0, 10)
	if err != nil || total < 2 || len(reqs) < 2 {
		t.Fatalf("B's dashboard lists %d of %d requests (%v), want A's create and completion", len(reqs), total, err)
	}
	rep, err := journalView{parts}.Report(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls < 1 {
		t.Errorf("B's dashboard report counts %d calls, want A's", rep.Calls)
	}
	evs, err := eventsView{parts}.PaymentEvents(ctx, m, id)
	if err != nil || len(evs) != 1 {
		t.Errorf("B's dashboard shows %d events of the payment A completed (%v), want 1", len(evs), err)
	}
}
