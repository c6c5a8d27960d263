// Fault rules over HTTP on replicas of one sandbox sharing a PostgreSQL
// database: a rule set on one replica shapes calls and deliveries on
// another, and its times count once for all. replicaEnvs (outbox_test.go)
// starts the replicas.

package sandbox

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/paymock/paymock"
)

// rules lists the merchant's fault rules on e.
func (e *testEnv) rules(key string) []map[string]any {
	e.t.Helper()
	st, body, _ := e.do("GET", "/_sandbox/faults", key, nil)
	if st != http.StatusOK {
		e.t.Fatalf("list faults: %d %v", st, body)
	}
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestSharedFaults_ARuleSetOnOneReplicaFiresListsAndGoesOnAnother(t *testing.T) {
	rs := replicaEnvs(t, 2)
	a, b := rs[0], rs[1]
	rule := a.addFault(keyA, map[string]any{"operation": "listPayments", "status": 503})
	id := rule["id"].(string)

	st, body, _ := b.do("GET", "/api/v1/payments", keyA, nil)
	if st != http.StatusServiceUnavailable || !strings.Contains(errorOf(t, body)["message"].(string), id) {
		t.Fatalf("B's list: %d %v, want 503 injected by %s", st, body, id)
	}
	if st, _, _ := b.do("GET", "/api/v1/payments", keyB, nil); st != http.StatusOK {
		t.Errorf("another merchant's list on B: %d", st)
	}
	if l := b.rules(keyA); len(l) != 1 || l[0]["id"] != id || l[0]["hits"] != 1.0 {
		t.Errorf("B lists %v, want the rule with one hit", l)
	}

	if st, _, _ := b.do("DELETE", "/_sandbox/faults/"+id, keyA, nil); st != http.StatusNoContent {
		t.Fatalf("delete on B: %d", st)
	}
	if st, _, _ := a.do("GET", "/api/v1/payments", keyA, nil); st != http.StatusOK {
		t.Errorf("A's list after the delete on B: %d, want 200 at once", st)
	}
	if st, body, _ := a.do("DELETE", "/_sandbox/faults/"+id, keyA, nil); st != http.StatusNotFound {
		t.Errorf("deleting it again on A: %d %v", st, body)
	}

	// Clearing on A leaves B nothing, webhook rules included.
	a.addFault(keyA, map[string]any{"target": "webhooks", "bad_signature": true})
	if l := b.rules(keyA); len(l) != 1 || l[0]["target"] != "webhooks" {
		t.Errorf("B lists %v, want A's webhook rule", l)
	}
	if st, _, _ := a.do("DELETE", "/_sandbox/faults", keyA, nil); st != http.StatusNoContent {
		t.Fatalf("clear on A: %d", st)
	}
	if l := b.rules(keyA); len(l) != 0 {
		t.Errorf("B lists %v after a clear on A", l)
	}
}

func TestSharedFaults_TimesCountOnceAcrossReplicas(t *testing.T) {
	rs := replicaEnvs(t, 2)
	rs[0].addFault(keyA, map[string]any{"operation": "listPayments", "status": 503, "times": 10})
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		// The replica that took the rule answers few of the calls: a
		// count of its own would stop at 5 hits.
		e := rs[min(i, 1)]
		wg.Go(func() {
			for range 5 {
				st, _, _ := e.do("GET", "/api/v1/payments", keyA, nil)
				mu.Lock()
				codes[st]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if codes[http.StatusServiceUnavailable] != 10 || codes[http.StatusOK] != 30 {
		t.Errorf("answers %v to 40 calls, 5 on A and 35 on B, want exactly 10 503s (times 10) and 30 200s", codes)
	}
	for i, e := range rs {
		if l := e.rules(keyA); len(l) != 0 {
			t.Errorf("replica %d still lists the spent rule: %v", i, l)
		}
	}
}

func TestSharedFaults_FileRulesCountOnceAndComeBackOnReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(path, []byte("- operation: retrievePayment\n  status: 502\n  times: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := replicaEnvs(t, 2, withFaultsFile(path))
	a, b := rs[0], rs[1]
	id := a.create(keyA, nil)
	if st, _, _ := a.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusBadGateway {
		t.Errorf("first retrieve, on A: %d, want 502", st)
	}
	if st, _, _ := b.do("GET", "/api/v1/payments/"+id, keyA, nil); st != http.StatusOK {
		t.Errorf("second retrieve, on B: %d, want 200 (times 1 counts across replicas)", st)
	}
	a.addFault(keyA, map[string]any{"operation": "createPayment", "status": 500})
	// A sandbox reset on B drops A's rule and brings the file rule back.
	if st, _, _ := b.do("POST", "/_sandbox/reset", keyA, nil); st != http.StatusNoContent {
		t.Fatalf("reset on B: %d", st)
	}
	l := a.rules(keyA)
	if len(l) != 1 || l[0]["source"] != path+":1" || l[0]["remaining"] != 1.0 {
		t.Errorf("A lists %v after a reset on B, want the file rule, fresh", l)
	}
}

func TestSharedFaults_SeededDrawsAreTheSameOnOneReplicaOrTwo(t *testing.T) {
	run := func(replicas int) string {
		rs := replicaEnvs(t, replicas, withSeed(11))
		rs[0].addFault(keyA, map[string]any{"operation": "listPayments", "status": 503, "probability": 0.5})
		var seq strings.Builder
		for i := range 40 {
			if st, _, _ := rs[i%replicas].do("GET", "/api/v1/payments", keyA, nil); st == http.StatusServiceUnavailable {
				seq.WriteByte('x')
			} else {
				seq.WriteByte('.')
			}
		}
		return seq.String()
	}
	one, two := run(1), run(2)
	if one != two {
		t.Errorf("the same calls with the same seed hit otherwise over two replicas:\n%s\n%s", one, two)
	}
	if !strings.Contains(one, "x") || !strings.Contains(one, ".") {
		t.Errorf("probability 0.5 hit all or nothing: %s", one)
	}
}

func TestSharedFaults_AWebhookRuleSetOnOneReplicaShapesADeliveryFromAnother(t *testing.T) {
	rcv := newRawReceiver(t)
	rs := replicaEnvs(t, 2, withWebhooks(nil, paymock.WebhookEndpoint{URL: rcv.srv.URL, Secret: testSecret}))
	a, b := rs[0], rs[1]
	a.addFault(keyA, map[string]any{"target": "webhooks", "event_type": "payment.completed", "duplicate": 2, "times": 1})
	id := b.create(keyA, nil)
	if st, body, _ := b.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
		t.Fatalf("complete on B: %d %v", st, body)
	}
	first, second := rcv.next(t), rcv.next(t)
	if first.Header.Get("webhook-id") == "" || first.Header.Get("webhook-id") != second.Header.Get("webhook-id") {
		t.Errorf("two copies of one delivery want one webhook-id: %q and %q",
			first.Header.Get("webhook-id"), second.Header.Get("webhook-id"))
	}
	// times 1 is spent, for A too.
	id2 := a.create(keyA, nil)
	a.do("POST", "/_sandbox/payments/"+id2+"/complete", keyA, nil)
	rcv.next(t)
	rcv.none(t)
}
