// The request journal shared by replicas over PostgreSQL: a request served
// by one replica is listed and reported by another as soon as it was
// answered, the journal stays bounded, and a store that fails to keep an
// entry never fails the request.

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/pgtest"
)

// journalReplicas builds n sandboxes on one fresh database, each behind
// its own server, keeping size requests per merchant, and returns them
// with the database's URL.
func journalReplicas(t *testing.T, n, size int) ([]*testEnv, string) {
	t.Helper()
	dbURL := pgtest.URL(t)
	return replicaEnvsOn(t, dbURL, n, withJournalSize(size)), dbURL
}

// journalOf lists a merchant's journal on one replica as "METHOD path?query
// status", newest first, with its total.
func journalOf(t *testing.T, e *testEnv, key, filter string) ([]string, float64) {
	t.Helper()
	st, body, _ := e.do("GET", "/_sandbox/requests?per_page=100"+filter, key, nil)
	if st != http.StatusOK {
		t.Fatalf("GET /_sandbox/requests: %d %v", st, body)
	}
	var out []string
	for _, it := range body["items"].([]any) {
		m := it.(map[string]any)
		line := fmt.Sprintf("%s %s %v", m["method"], m["path"], m["status"])
		if q := m["query"].(string); q != "" {
			line = fmt.Sprintf("%s %s?%s %v", m["method"], m["path"], q, m["status"])
		}
		out = append(out, line)
	}
	return out, body["pagination"].(map[string]any)["total_items"].(float64)
}

func TestSharedJournal_RequestsServedByOneReplicaAreListedAndReportedByAnother(t *testing.T) {
	envs, _ := journalReplicas(t, 2, DefaultJournalSize)
	a, b := envs[0], envs[1]
	id := a.create(keyA, nil)
	bad := validCreate()
	bad["currency"] = "JPY"
	st, _, h := a.do("POST", "/api/v1/payments", keyA, bad)
	if st != http.StatusBadRequest {
		t.Fatalf("a create in JPY on A: %d", st)
	}
	refusedID := h.Get("Request-Id")
	b.do("GET", "/api/v1/payments/"+id, keyA, nil)
	a.do("GET", "/api/v1/nope", keyA, nil)
	b.do("GET", "/api/v1/payments", keyB, nil) // another merchant

	// Each was stored before its answer left: B lists A's at once.
	got, total := journalOf(t, b, keyA, "")
	want := []string{"GET /api/v1/nope 404", "GET /api/v1/payments/" + id + " 200", "POST /api/v1/payments 400", "POST /api/v1/payments 201"}
	if !slices.Equal(got, want) || total != 4 {
		t.Fatalf("B lists (%v in all)\n%s\nwant\n%s", total, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, body, _ := b.do("GET", "/_sandbox/requests?violations=true", keyA, nil)
	items := body["items"].([]any)
	if len(items) != 2 || items[1].(map[string]any)["id"] != refusedID ||
		items[1].(map[string]any)["violations"].([]any)[0].(map[string]any)["param"] != "currency" {
		t.Errorf("B's violations=true: %v", items)
	}
	// B's own list calls are in A's journal too, newest first.
	if got, _ := journalOf(t, a, keyA, "&status=200"); len(got) != 3 || !strings.HasPrefix(got[0], "GET /_sandbox/requests?violations=true") {
		t.Errorf("A lists the 200s as %v", got)
	}

	// Both reports count every replica's calls, and agree.
	_, repB, _ := b.do("GET", "/_sandbox/report", keyA, nil)
	_, repA, _ := a.do("GET", "/_sandbox/report", keyA, nil)
	if repB["calls"] != 4.0 || repB["violating_calls"] != 2.0 || repB["unmatched_calls"] != 1.0 || repB["injected_calls"] != 0.0 {
		t.Errorf("B's report: %v", repB)
	}
	if cov := repB["coverage"].(map[string]any); cov["operations_exercised"] != 2.0 || cov["statuses_exercised"] != 3.0 {
		t.Errorf("B's coverage: %v", cov)
	}
	for _, op := range repB["operations"].([]any) {
		o := op.(map[string]any)
		if o["operation_id"] == "createPayment" {
			vs := o["violations"].([]any)
			if o["calls"] != 2.0 || o["violating_calls"] != 1.0 || len(vs) != 1 || vs[0].(map[string]any)["count"] != 1.0 {
				t.Errorf("B's createPayment: %v", o)
			}
		}
	}
	if !reflect.DeepEqual(repA, repB) {
		t.Errorf("the replicas' reports differ:\nA %v\nB %v", repA, repB)
	}
	// The other merchant's journal holds its own call only.
	if got, _ := journalOf(t, a, keyB, ""); len(got) != 1 || got[0] != "GET /api/v1/payments 200" {
		t.Errorf("B's merchant lists %v", got)
	}
}

func TestSharedJournal_IsBoundedAcrossReplicasAndTheReportCountsAll(t *testing.T) {
	envs, dbURL := journalReplicas(t, 2, 5)
	for i := range 12 {
		envs[i%2].do("GET", fmt.Sprintf("/api/v1/payments?per_page=%d", i+1), keyA, nil)
	}
	got, total := journalOf(t, envs[0], keyA, "")
	want := []string{"GET /api/v1/payments?per_page=12 200", "GET /api/v1/payments?per_page=11 200",
		"GET /api/v1/payments?per_page=10 200", "GET /api/v1/payments?per_page=9 200", "GET /api/v1/payments?per_page=8 200"}
	if !slices.Equal(got, want) || total != 5 {
		t.Errorf("the journal of size 5 lists (%v in all)\n%s", total, strings.Join(got, "\n"))
	}
	// Dropped in the database too: a journal this small is trimmed at each
	// append, the last being that of the list call above.
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM request_journal`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 5 {
		t.Errorf("the database holds %d entries, want 5", rows)
	}
	_, rep, _ := envs[1].do("GET", "/_sandbox/report", keyA, nil)
	if rep["calls"] != 12.0 {
		t.Errorf("the report counts %v calls, want all 12", rep["calls"])
	}
}

func TestSharedJournal_ForgettingAnIdleMerchantKeepsWhatOtherReplicasServe(t *testing.T) {
	envs, _ := journalReplicas(t, 2, DefaultJournalSize)
	a, b := envs[0], envs[1]
	a.do("GET", "/api/v1/payments", keyA, nil)
	b.do("GET", "/api/v1/payments?per_page=2", keyA, nil)
	// What ForgetIdle has the server do when A finds the merchant idle.
	if err := a.sb.server.Forget(t.Context(), merchantIDOf(keyA)); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /api/v1/payments?per_page=2 200", "GET /api/v1/payments 200"}
	if got, _ := journalOf(t, b, keyA, ""); !slices.Equal(got, want) {
		t.Errorf("after A forgot the merchant, B lists %v", got)
	}
	if got, _ := journalOf(t, a, keyA, ""); len(got) != 3 || !slices.Equal(got[1:], want) {
		t.Errorf("A, back on the merchant, lists %v", got)
	}
	if _, rep, _ := a.do("GET", "/_sandbox/report", keyA, nil); rep["calls"] != 2.0 {
		t.Errorf("A's report after forgetting counts %v calls, want 2", rep["calls"])
	}
}

func TestSharedJournal_AnEntryTheStoreCannotKeepNeverFailsTheRequest(t *testing.T) {
	envs, dbURL := journalReplicas(t, 2, DefaultJournalSize)
	a, b := envs[0], envs[1]
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	before := a.create(keyA, nil)
	exec(`ALTER TABLE request_journal RENAME TO request_journal_away`)
	lost := a.create(keyA, nil)
	if st, _, _ := a.do("GET", "/api/v1/payments/"+lost, keyA, nil); st != http.StatusOK {
		t.Errorf("a retrieve while the journal cannot be written: %d", st)
	}
	a.do("GET", "/api/v1/payments", keyA, nil)
	exec(`ALTER TABLE request_journal_away RENAME TO request_journal`)
	after := a.create(keyA, nil)

	logs := a.logs.String()
	if n := strings.Count(logs, "request journal entries not stored"); n != 1 {
		t.Errorf("the failure is logged %d times, want once:\n%s", n, logs)
	}
	var back struct {
		Lost int `json:"lost"`
	}
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "request journal entries stored again") {
			if err := json.Unmarshal([]byte(line), &back); err != nil {
				t.Fatal(err)
			}
		}
	}
	if back.Lost != 3 {
		t.Errorf("the recovery counts %d entries lost, want 3:\n%s", back.Lost, logs)
	}
	got, _ := journalOf(t, b, keyA, "")
	want := []string{"POST /api/v1/payments 201", "POST /api/v1/payments 201"}
	if !slices.Equal(got, want) {
		t.Errorf("B lists %v, want the creates of %s and %s only", got, before, after)
	}
}

func TestSharedJournal_ReadsWhileTheDatabaseIsDownAre503(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range docs.Sandbox.Operations() {
		if (op.ID == "listRequests" || op.ID == "getReport") && !slices.Contains(op.Statuses, http.StatusServiceUnavailable) {
			t.Skipf("sandbox/openapi.yaml declares no 503 for %s: the server would answer its own 500 for breaking the contract", op.ID)
		}
	}
	envs, dbURL := journalReplicas(t, 1, DefaultJournalSize)
	e := envs[0]
	e.create(keyA, nil)
	up := pgtest.CutOff(t, dbURL)
	raw := &http.Client{} // a 503 is the answer expected here
	for _, path := range []string{"/_sandbox/requests", "/_sandbox/report"} {
		start := time.Now()
		req := e.request("GET", path, keyA, nil)
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Type, Code string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || body.Error.Code != "store_unavailable" {
			t.Errorf("GET %s with the database down: %d %+v, want 503 store_unavailable", path, resp.StatusCode, body)
		}
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("GET %s took %s to fail", path, took)
		}
	}
	up()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := raw.Do(e.request("GET", "/_sandbox/requests", keyA, nil))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the journal still cannot be read 15 s after the database came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, _ := journalOf(t, e, keyA, "&status=201"); len(got) != 1 {
		t.Errorf("after the outage the journal lists %v, want the create of before", got)
	}
}
