// Tests of the bounds on what an error answer and its journal entry list
// and echo: a refused body of a megabyte makes neither a large answer nor
// a large entry.

package sandbox

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paymock/paymock"
)

// unknownKeys is a JSON object of n unknown keys, "zz00000"…, each 0, with
// the fields of a valid create when create is set.
func unknownKeys(n int, create bool) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	if create {
		b.WriteString(`"amount": 10.5, "currency": "USD", "customer": {"email": "jane@example.com", "name": "Jane"},
			"description": "x", "expires_in": 3600, "metadata": {}, "success_url": "https://a.example/s",
			"cancel_url": "https://a.example/c", "mcc": 5732`)
	}
	for i := range n {
		if i > 0 || create {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"zz%05d": 0`, i)
	}
	b.WriteString("}")
	return b.Bytes()
}

// newestEntry is the newest entry of the merchant's journal before the
// call that reads it.
func newestEntry(t *testing.T, env *testEnv, key string) map[string]any {
	t.Helper()
	st, body, _ := env.do("GET", "/_sandbox/requests?per_page=1", key, nil)
	if st != 200 {
		t.Fatalf("journal: %d %v", st, body)
	}
	items := body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("journal: %v", body)
	}
	return items[0].(map[string]any)
}

func TestErrors_ListAtMostFiftyViolationsThenSayHowManyMore(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name     string
		path     string
		unknown  int
		create   bool
		wantMore int // 0: every violation listed, none summed up
	}{
		{"a create with 50 unknown fields lists all", "/api/v1/payments", 50, true, 0},
		{"a create with 51 unknown fields lists 50 and 1 more", "/api/v1/payments", 51, true, 1},
		{"a create with 16,000 unknown fields lists 50 and 15,950 more", "/api/v1/payments", 16000, true, 15950},
		{"a fault rule with 16,000 unknown fields lists 50 and the rest", "/_sandbox/faults", 16000, false, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := env.request("POST", tc.path, keyA, unknownKeys(tc.unknown, tc.create))
			st, out, _ := env.send(req)
			if st != 400 {
				t.Fatalf("status %d, want 400: %v", st, out)
			}
			errs := errorOf(t, out)["errors"].([]any)
			entry := newestEntry(t, env, keyA)
			logged := entry["violations"].([]any)
			if fmt.Sprint(logged) != fmt.Sprint(errs) {
				t.Errorf("the journal entry lists\n%v\nthe answer\n%v", logged, errs)
			}
			last := errs[len(errs)-1].(map[string]any)
			if tc.wantMore == 0 {
				if len(errs) != tc.unknown || last["code"] == paymock.MoreViolations {
					t.Fatalf("%d errors, last %v; want all %d listed", len(errs), last, tc.unknown)
				}
				return
			}
			if len(errs) != paymock.MaxListedViolations+1 || last["code"] != paymock.MoreViolations {
				t.Fatalf("%d errors, last %v; want %d and one %s", len(errs), last, paymock.MaxListedViolations, paymock.MoreViolations)
			}
			if _, has := last["param"]; has {
				t.Errorf("the summing-up entry names a param: %v", last)
			}
			msg := last["message"].(string)
			if tc.wantMore > 0 && !strings.HasPrefix(msg, fmt.Sprintf("and %d more violations", tc.wantMore)) {
				t.Errorf("message %q, want it to say %d more", msg, tc.wantMore)
			}
			// The first 50 are the first in order of param, as a full list
			// would start.
			if first := errs[0].(map[string]any)["param"].(string); first > errs[paymock.MaxListedViolations-1].(map[string]any)["param"].(string) {
				t.Errorf("listed out of order: %v", errs)
			}
		})
	}
}

func TestErrors_EchoAtMost200BytesOfAParam(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name string
		key  string
	}{
		{"a key of 900 kB", strings.Repeat("k", 900_000)},
		{"a key of 300,000 two-byte characters", strings.Repeat("é", 300_000)},
		{"a key of 201 bytes", strings.Repeat("k", 201)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"` + tc.key + `": 0}`
			resp, err := env.client.Do(env.request("POST", "/api/v1/payments", keyA, body))
			if err != nil {
				t.Fatal(err)
			}
			raw := readAll(t, resp)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, raw)
			}
			// Ten required fields and the unknown one, each echoed at most
			// twice: a few kilobytes, whatever the key's length.
			if len(raw) > 4096 {
				t.Errorf("answer of %d bytes for a key of %d", len(raw), len(tc.key))
			}
			_, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
			for _, where := range []struct {
				what string
				vs   []any
			}{{"answer", errorOf(t, out)["errors"].([]any)}, {"journal entry", newestEntry(t, env, keyA)["violations"].([]any)}} {
				found := false
				for _, v := range where.vs {
					v := v.(map[string]any)
					if v["code"] != "parameter_unknown" {
						continue
					}
					found = true
					param, msg := v["param"].(string), v["message"].(string)
					if len(param) > paymock.MaxEchoedParam || !strings.HasSuffix(param, "…") || !utf8.ValidString(param) ||
						!strings.HasPrefix(tc.key, strings.TrimSuffix(param, "…")) {
						t.Errorf("%s: param of %d bytes, %.40q…", where.what, len(param), param)
					}
					if msg != param+" is not a known field" {
						t.Errorf("%s: message %.300q, want the cut param and what is wrong", where.what, msg)
					}
				}
				if !found {
					t.Errorf("%s: no parameter_unknown in %v", where.what, where.vs)
				}
			}
		})
	}
}

func TestJournal_KeepsAtMost256BytesOfAMethod(t *testing.T) {
	env := newEnv(t)
	method := strings.Repeat("X", 10_000)
	req := env.request(http.MethodGet, "/api/v1/payments", keyA, nil)
	req.Method = method
	st, out, _ := env.send(req)
	if st != 405 {
		t.Fatalf("status %d, want 405: %v", st, out)
	}
	if msg := errorOf(t, out)["message"].(string); len(msg) > paymock.MaxEchoedMessage {
		t.Errorf("message of %d bytes", len(msg))
	}
	e := newestEntry(t, env, keyA)
	if m := e["method"].(string); len(m) > 256+len("…") || !strings.HasPrefix(method, strings.TrimSuffix(m, "…")) {
		t.Errorf("journal method of %d bytes", len(m))
	}
	for _, v := range e["violations"].([]any) {
		if msg := v.(map[string]any)["message"].(string); len(msg) > paymock.MaxEchoedMessage {
			t.Errorf("journal message of %d bytes", len(msg))
		}
	}
}

// An entry stored before the bound (a PostgreSQL journal outlives an
// upgrade) is listed and reported within it, never as an answer that
// breaks the contract.
func TestJournal_ShowsAnEntryStoredBeforeTheBoundWithinIt(t *testing.T) {
	backend := testBackend(t)
	env := newEnv(t, onBackend(backend))
	env.do("GET", "/api/v1/payments", keyA, nil) // the merchant exists
	long := strings.Repeat("k", 900_000)
	vs := []paymock.Violation{{Param: long, Code: "parameter_unknown", Message: long + " is not a known field"}}
	for i := range 99 {
		vs = append(vs, paymock.Violation{Param: fmt.Sprintf("zz%03d", i), Code: "parameter_unknown", Message: "m"})
	}
	old := paymock.JournalRecord{Counted: true, Violating: true, Entry: paymock.JournalEntry{
		ID: "req_old", At: "2026-03-14T15:09:26Z", Method: "POST", Path: "/api/v1/payments", Operation: "createPayment",
		Status: 400, Violations: vs}}
	if err := backend.Journal.AppendRequest(t.Context(), merchantID(t, keyA), old); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/_sandbox/requests?per_page=100", "/_sandbox/requests?violations=true"} {
		st, body, _ := env.do("GET", path, keyA, nil)
		if st != 200 {
			t.Fatalf("%s: %d %v", path, st, body)
		}
		got := body["items"].([]any)[0].(map[string]any)["violations"].([]any)
		if len(got) != paymock.MaxListedViolations+1 || got[len(got)-1].(map[string]any)["message"] != "and 50 more violations, not listed: only the first 50 are" {
			t.Errorf("%s: %d violations, last %v", path, len(got), got[len(got)-1])
		}
		if p := got[0].(map[string]any)["param"].(string); len(p) > paymock.MaxEchoedParam {
			t.Errorf("%s: param of %d bytes", path, len(p))
		}
	}
	st, report, _ := env.do("GET", "/_sandbox/report", keyA, nil)
	if st != 200 {
		t.Fatalf("report: %d %v", st, report)
	}
	if raw := fmt.Sprint(report); len(raw) > 64<<10 {
		t.Errorf("report of %d bytes", len(raw))
	}
}
