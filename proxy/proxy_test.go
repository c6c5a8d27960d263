// Tests of the proxy over real HTTP: sides, counts, unchanged answers,
// the journal, recording and replay.

package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/driftedtest"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/paymocktest"
)

// startProxy runs a proxy to upstream on loopback.
func startProxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, method, url, key string, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

const createBody = `{"amount": 10.50, "currency": "EUR", "description": "Order 1", "expires_in": 3600, "mcc": 5999,
	"customer": {"email": "jane@example.com", "name": "Jane"}, "metadata": {"order": "1"},
	"success_url": "https://shop.example/s", "cancel_url": "https://shop.example/c"}`

// session is the merchant's client: a good create, a retrieve, a list,
// and one create with a typo (a client violation).
func session(t *testing.T, base, key string) {
	t.Helper()
	a := send(t, "POST", base+"/api/v1/payments", key, createBody)
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(a.body, &p); err != nil || p.ID == "" {
		t.Fatalf("create through the proxy: %d %s", a.status, a.body)
	}
	send(t, "GET", base+"/api/v1/payments/"+p.ID, key, "")
	send(t, "GET", base+"/api/v1/payments?per_page=5", key, "")
	send(t, "POST", base+"/api/v1/payments", key, strings.Replace(createBody, `"amount"`, `"amout"`, 1))
}

func report(t *testing.T, base, key string) mockserver.Report {
	t.Helper()
	a := send(t, "GET", base+"/_sandbox/report", key, "")
	if a.status != 200 {
		t.Fatalf("report: %d %s", a.status, a.body)
	}
	var r mockserver.Report
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// sides counts a report's violations by side.
func sides(r mockserver.Report) map[string]int {
	out := map[string]int{}
	for _, op := range r.Operations {
		for _, v := range op.Violations {
			out[v.Side] += v.Count
		}
	}
	return out
}

func TestProxy_ToAPaymockOnlyTheClientViolates(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	_, base := startProxy(t, Config{Upstream: s.URL})
	session(t, base, s.APIKey)
	r := report(t, base, s.APIKey)
	if r.Calls != 4 || r.ViolatingCalls != 1 {
		t.Errorf("calls %d, violating %d; want 4 and 1", r.Calls, r.ViolatingCalls)
	}
	got := sides(r)
	if got["client"] == 0 || got["upstream"] != 0 {
		t.Errorf("violations by side %v, want the client's only", got)
	}
	// Another key's report is its own.
	if other := report(t, base, "sk_someone_else"); other.Calls != 0 {
		t.Errorf("another key's report counts %d calls", other.Calls)
	}
}

func TestProxy_ToADifferentUpstreamItsAnswersAreMarkedAndPassedBackUnchanged(t *testing.T) {
	up := driftedtest.New(t)
	_, base := startProxy(t, Config{Upstream: up.URL})
	session(t, base, driftedtest.Key)
	r := report(t, base, driftedtest.Key)
	got := sides(r)
	if got["client"] == 0 || got["upstream"] == 0 {
		t.Errorf("violations by side %v, want both sides", got)
	}
	// Every call: the upstream's payments carry an undeclared field, and
	// the typo is the client's (and the upstream's 422 is undeclared).
	if r.Calls != 4 || r.ViolatingCalls != 4 {
		t.Errorf("calls %d, violating %d; want 4 and 4", r.Calls, r.ViolatingCalls)
	}
	var found []string
	for _, op := range r.Operations {
		for _, v := range op.Violations {
			found = append(found, op.OperationID+" "+v.Side+" "+v.Param+" "+v.Code)
		}
	}
	for _, v := range found {
		// The upstream's ids are UUIDs, which the spec allows: a retrieve
		// of one is no violation of the client's, nor its answer of the
		// upstream's.
		if strings.HasPrefix(v, "retrievePayment client") || strings.HasSuffix(v, " id parameter_invalid") {
			t.Errorf("violation %q of a UUID id", v)
		}
		// cancel_url is "returned in create responses": a retrieve may
		// leave it out.
		if v == "retrievePayment upstream cancel_url parameter_missing" {
			t.Errorf("violation %q", v)
		}
	}
	for _, want := range []string{
		"createPayment client amout parameter_unknown",
		"createPayment upstream livemode parameter_unknown",
		"createPayment upstream  status_undeclared",
		"createPayment upstream cancel_url parameter_missing",
	} {
		if !contains(found, want) {
			t.Errorf("no violation %q in %q", want, found)
		}
	}
	// The upstream's answers, even those that break the contract, come
	// back byte for byte.
	for _, path := range []string{"/api/v1/payments/pay_nope", "/api/v1/payments?per_page=101"} {
		direct := send(t, "GET", up.URL+path, driftedtest.Key, "")
		via := send(t, "GET", base+path, driftedtest.Key, "")
		if via.status != direct.status || !bytes.Equal(via.body, direct.body) || via.header.Get("X-Request-Id") != direct.header.Get("X-Request-Id") {
			t.Errorf("%s: through the proxy %d %s, direct %d %s", path, via.status, via.body, direct.status, direct.body)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestProxy_RecordThenReplayGivesTheSameFindingsWithCredentialsRedacted(t *testing.T) {
	up := driftedtest.New(t)
	dir := t.TempDir()
	_, base := startProxy(t, Config{Upstream: up.URL, RecordDir: dir})
	session(t, base, driftedtest.Key)
	send(t, "GET", base+"/api/v1/payments", "", "")                // no key: the client's violation, the upstream's 401
	send(t, "GET", base+"/api/v1/payments", "sk_other_caller", "") // another key: its own report
	send(t, "GET", base+"/api/v1/payments", "not a key!", "")      // a malformed key: filed under no key
	live := report(t, base, driftedtest.Key)

	// Given the key, the replay is the proxy's report of that key: the
	// keyless, malformed and other callers' exchanges are not in it.
	replayed, checked, recorded, err := Replay(t.Context(), dir, driftedtest.Key)
	if err != nil {
		t.Fatal(err)
	}
	if checked != live.Calls || recorded != live.Calls+3 {
		t.Errorf("%d of %d exchanges replayed, want %d of %d", checked, recorded, live.Calls, live.Calls+3)
	}
	replayAgrees(t, dir, driftedtest.Key, live)
	// Without a key, every exchange recorded is in it.
	all, _, _, err := Replay(t.Context(), dir, "")
	if err != nil || all.Calls != live.Calls+3 {
		t.Errorf("replay of every caller: %d calls (%v), want %d", all.Calls, err, live.Calls+3)
	}
	if replayed.Calls != live.Calls {
		t.Errorf("replay of the key: %d calls, want %d", replayed.Calls, live.Calls)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+recordExt))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if bytes.Contains(data, []byte(driftedtest.Key)) || bytes.Contains(data, []byte("sk_other_caller")) {
			t.Errorf("%s holds an API key", f)
		}
	}
}

func TestProxy_ReplayOfAnEscapedSlashInAnIDMatchesTheOperationTheProxyMatched(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	dir := t.TempDir()
	_, base := startProxy(t, Config{Upstream: s.URL, RecordDir: dir})
	// %2F keeps the id one segment: decoded, it would be two, and match
	// no operation.
	send(t, "GET", base+"/api/v1/payments/pay%2Fabc", s.APIKey, "")
	live := report(t, base, s.APIKey)
	if retrieve := calls(live, "retrievePayment"); retrieve != 1 {
		t.Fatalf("the proxy counts %d retrievePayment calls, want 1", retrieve)
	}
	replayAgrees(t, dir, s.APIKey, live)
}

// replayAgrees checks that the replay of dir for key gives the proxy's
// report of that key.
func replayAgrees(t *testing.T, dir, key string, live mockserver.Report) {
	t.Helper()
	replayed, _, _, err := Replay(t.Context(), dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(replayed, live) {
		a, _ := json.Marshal(live)
		b, _ := json.Marshal(replayed)
		t.Errorf("replay differs from the proxy's report:\nproxy  %s\nreplay %s", a, b)
	}
}

// calls is how many calls a report counts for an operation.
func calls(r mockserver.Report, operation string) int {
	for _, op := range r.Operations {
		if op.OperationID == operation {
			return op.Calls
		}
	}
	return 0
}

func TestRedact_CredentialsOfHeadersAndBodies(t *testing.T) {
	h := redactHeader(http.Header{"Authorization": {"Bearer sk_live_x"}, "X-Api-Key": {"k"}, "Content-Type": {"application/json"}})
	if h.Get("Authorization") != "Bearer [redacted]" || h.Get("X-Api-Key") != "[redacted]" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers: %v", h)
	}
	body := redactBody([]byte(`{"url":"https://x","secret":"whsec_abc","nested":[{"note":"whsec_def"}],"metadata":{"api_key":"k1"}}`))
	for _, secret := range []string{"whsec_abc", "whsec_def", "k1"} {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("body still holds %s: %s", secret, body)
		}
	}
	if plain := []byte(`not json whsec_x`); !bytes.Equal(redactBody(plain), plain) {
		t.Error("a body that is not JSON was changed")
	}
}

func TestRedact_TheIdempotencyKeyIsKeptForItIsNoCredential(t *testing.T) {
	h := redactHeader(http.Header{"Idempotency-Key": {"order-1"}, "X-Api-Key": {"k"}})
	if h.Get("Idempotency-Key") != "order-1" || h.Get("X-Api-Key") != "[redacted]" {
		t.Errorf("headers: %v", h)
	}
}

func TestReplay_AFolderWithoutRecordsIsAClearError(t *testing.T) {
	dir := t.TempDir()
	if _, _, _, err := Replay(t.Context(), dir, ""); !errors.Is(err, ErrNoRecording) || !strings.Contains(err.Error(), "holds no recorded exchange") {
		t.Errorf("empty folder: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "1"+recordExt), []byte("{"), 0o600)
	if _, _, _, err := Replay(t.Context(), dir, ""); err == nil || !strings.Contains(err.Error(), "not a recorded exchange") {
		t.Errorf("broken file: %v", err)
	}
}

func TestProxy_TheJournalListsTheCallersExchangesWithTheirSides(t *testing.T) {
	up := driftedtest.New(t)
	_, base := startProxy(t, Config{Upstream: up.URL})
	send(t, "GET", base+"/api/v1/payments/pay_nope", driftedtest.Key, "")
	send(t, "HEAD", base+"/api/v1/payments", driftedtest.Key, "")
	send(t, "POST", base+"/api/v1/payments", driftedtest.Key, strings.Replace(createBody, `"amount"`, `"amout"`, 1))
	a := send(t, "GET", base+"/_sandbox/requests?violations=true&per_page=5", driftedtest.Key, "")
	var page struct {
		Items      []Entry `json:"items"`
		Pagination struct {
			TotalItems int `json:"total_items"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(a.body, &page); err != nil || a.status != 200 {
		t.Fatalf("requests: %d %s", a.status, a.body)
	}
	// The drifted upstream serves no HEAD: its 404 is not a status of the
	// list, whose GET the HEAD is.
	if page.Pagination.TotalItems != 3 || len(page.Items) != 3 {
		t.Fatalf("%d exchanges with violations, want 3: %s", page.Pagination.TotalItems, a.body)
	}
	newest, head, oldest := page.Items[0], page.Items[1], page.Items[2]
	if newest.Operation != "createPayment" || newest.Violations[0].Side != "client" || oldest.Violations[0].Side != "upstream" {
		t.Errorf("journal: %s", a.body)
	}
	if head.Method != "HEAD" || head.Status != 404 || head.Violations[0].Side != "upstream" || head.Violations[0].Code != "status_undeclared" {
		t.Errorf("the HEAD in the journal: %+v", head)
	}
	for _, q := range []string{"per_page=101", "status=abc", "page=0"} {
		if a := send(t, "GET", base+"/_sandbox/requests?"+q, driftedtest.Key, ""); a.status != 400 {
			t.Errorf("%s: %d %s", q, a.status, a.body)
		}
	}
	if a := send(t, "POST", base+"/_sandbox/report", driftedtest.Key, "{}"); a.status != 405 || a.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST of the report: %d %v", a.status, a.header)
	}
	if a := send(t, "GET", base+"/_sandbox/report", "", ""); a.status != 401 || a.header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("report without a key: %d %v", a.status, a.header)
	}
}

func TestProxy_TheJournalKeepsAtMostFiftyViolationsOfAnExchange(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	_, base := startProxy(t, Config{Upstream: s.URL})
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(createBody, "}"))
	for i := range 16000 {
		fmt.Fprintf(&b, `, "zz%05d": 0`, i)
	}
	b.WriteString(`, "` + strings.Repeat("k", 300_000) + `": 0}`)
	if a := send(t, "POST", base+"/api/v1/payments", s.APIKey, b.String()); a.status != 400 {
		t.Fatalf("create: %d %.300s", a.status, a.body)
	}
	a := send(t, "GET", base+"/_sandbox/requests?per_page=1", s.APIKey, "")
	var page struct {
		Items []Entry `json:"items"`
	}
	if err := json.Unmarshal(a.body, &page); err != nil || a.status != 200 || len(page.Items) != 1 {
		t.Fatalf("requests: %d %.300s", a.status, a.body)
	}
	vs := page.Items[0].Violations
	if len(vs) != paymock.MaxListedViolations+1 || vs[len(vs)-1].Code != paymock.MoreViolations || vs[len(vs)-1].Side != SideClient {
		t.Fatalf("%d violations, last %+v; want %d and one %s", len(vs), vs[len(vs)-1], paymock.MaxListedViolations, paymock.MoreViolations)
	}
	if vs[0].Code != "parameter_unknown" || len(vs[0].Param) > paymock.MaxEchoedParam || len(vs[0].Message) > paymock.MaxEchoedMessage {
		t.Errorf("first violation: param of %d bytes, message of %d: %.80q", len(vs[0].Param), len(vs[0].Message), vs[0].Param)
	}
	if len(a.body) > 64<<10 {
		t.Errorf("a journal page of one exchange is %d bytes", len(a.body))
	}
}
