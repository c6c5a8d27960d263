// Recording exchanges to files, credentials redacted, and checking them
// again offline: the replay gives the findings the proxy gave.

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/mockserver"
)

// Record is one exchange as a file holds it.
type Record struct {
	ID     string `json:"id"`
	At     string `json:"at"`
	Method string `json:"method"`
	// Path is the request's path, decoded.
	Path string `json:"path"`
	// RawPath is the path as the client sent it, when that is not the
	// plain escaping of Path (a %2F inside an id); the replay matches
	// the operation on it, as the proxy did. Recordings made before it
	// was kept have none and replay from Path.
	RawPath string `json:"raw_path,omitempty"`
	Query   string `json:"query"`
	// Authenticated says the request carried a well-formed bearer key;
	// the key itself is redacted.
	Authenticated bool `json:"authenticated"`
	// Caller is the SHA-256 digest of that key, as the proxy's journal
	// names its caller ("" without one), so that a replay given the key
	// reports that key's exchanges alone, as the proxy's report did. The
	// key is never written. Recordings made before it was kept have none.
	Caller         string      `json:"caller,omitempty"`
	RequestHeader  http.Header `json:"request_header"`
	RequestBody    string      `json:"request_body"`
	Status         int         `json:"status"`
	ResponseHeader http.Header `json:"response_header"`
	// ResponseBody is the answer as checked (a gzip answer decoded).
	ResponseBody string `json:"response_body"`
}

// recorder writes each exchange to its own numbered file.
type recorder struct {
	dir string
	mu  sync.Mutex
	seq int
}

// recordExt ends every record's file name.
const recordExt = ".exchange.json"

func newRecorder(dir string) (*recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*"+recordExt))
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	// A second run into the same folder adds after the first.
	return &recorder{dir: dir, seq: len(existing)}, nil
}

func (rc *recorder) write(x Exchange, e Entry) error {
	rec := Record{ID: e.ID, At: e.At, Method: x.Request.Method, Path: x.Request.URL.Path, RawPath: x.Request.URL.RawPath, Query: x.Request.URL.RawQuery,
		Authenticated: x.Authenticated, Caller: caller(x.Request.Header), RequestHeader: redactHeader(x.Request.Header), RequestBody: string(redactBody(x.Body)),
		Status: x.Status, ResponseHeader: redactHeader(x.Header), ResponseBody: string(redactBody(x.Answer))}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seq++
	name := filepath.Join(rc.dir, fmt.Sprintf("%08d-%s%s", rc.seq, e.ID, recordExt))
	if err := os.WriteFile(name, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

const redacted = "[redacted]"

// secretHeader reports whether a header carries a credential.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	case "idempotency-key":
		// Named for a key, yet the client's own label of a request: it
		// grants nothing, and a reader of the record needs it to tell
		// a retry from a new create.
		return false
	}
	for _, part := range []string{"key", "secret", "token", "password"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

func redactHeader(h http.Header) http.Header {
	out := h.Clone()
	for k, vs := range out {
		if !secretHeader(k) {
			continue
		}
		for i, v := range vs {
			if scheme, _, ok := strings.Cut(v, " "); ok && strings.EqualFold(k, "Authorization") {
				vs[i] = scheme + " " + redacted
			} else {
				vs[i] = redacted
			}
		}
	}
	return out
}

// secretField reports whether a JSON field holds a credential.
func secretField(name string) bool {
	n := strings.ToLower(name)
	return slices.Contains([]string{"secret", "webhook_secret", "api_key", "apikey", "key", "token", "password"}, n)
}

// redactBody replaces the credentials of a JSON body (fields named for
// one, and whsec_ secrets wherever they are); any other body is kept.
func redactBody(body []byte) []byte {
	var v any
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return body
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if _, isStr := x.(string); isStr && secretField(k) {
					t[k], changed = redacted, true
					continue
				}
				t[k] = walk(x)
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		case string:
			if strings.HasPrefix(t, "whsec_") {
				changed = true
				return "whsec_" + redacted
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// Replay checks the exchanges recorded in dir, in their order, as the
// proxy checked them. Given an API key, it returns the report the proxy
// gave for that key, of that key's exchanges alone; without one, the
// report of every exchange recorded, those of every key and of none
// together (the proxy itself gives no report of those without a key).
// checked is how many exchanges the report covers, recorded how many the
// folder holds.
func Replay(ctx context.Context, dir, apiKey string) (rep mockserver.Report, checked, recorded int, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"+recordExt))
	if err != nil {
		return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %w", err)
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %w", err)
		}
		return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %s holds %w (*%s): record some with paymock proxy --record %s", dir, ErrNoRecording, recordExt, dir)
	}
	want := ""
	if apiKey != "" {
		want = caller(http.Header{"Authorization": {"Bearer " + apiKey}})
	}
	slices.Sort(files)
	docs, err := contract.Embedded()
	if err != nil {
		return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %w", err)
	}
	j := NewJournal(docs.Service, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %w", err)
		}
		var rec Record
		if err := json.Unmarshal(data, &rec); err != nil {
			return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %s: not a recorded exchange: %w", filepath.Base(f), err)
		}
		if rec.Method == "" || !strings.HasPrefix(rec.Path, "/") {
			return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %s: not a recorded exchange: no method or path", filepath.Base(f))
		}
		if apiKey != "" && rec.Caller != want {
			continue
		}
		checked++
		// A RawPath that is no escaping of Path (a file edited by hand)
		// is dropped by EscapedPath, which falls back to Path.
		u := &url.URL{Path: rec.Path, RawPath: rec.RawPath, RawQuery: rec.Query}
		req, err := http.NewRequestWithContext(ctx, rec.Method, u.RequestURI(), nil)
		if err != nil {
			return mockserver.Report{}, 0, 0, fmt.Errorf("replay: %s: %w", filepath.Base(f), err)
		}
		req.Header = rec.RequestHeader
		if req.Header == nil {
			req.Header = http.Header{}
		}
		var body []byte
		if rec.RequestBody != "" {
			body = []byte(rec.RequestBody)
		}
		x := Exchange{Request: req, Body: body, Authenticated: rec.Authenticated, Status: rec.Status,
			Header: rec.ResponseHeader, Answer: []byte(rec.ResponseBody)}
		op, vs := Check(ctx, docs.Service, x)
		j.Record("replay", Entry{ID: rec.ID, At: rec.At, Method: rec.Method, Path: rec.Path, Query: rec.Query, Operation: op, Status: rec.Status, Violations: vs})
	}
	return j.Report("replay"), checked, len(files), nil
}

// ErrNoRecording is a replay folder that holds no recorded exchange: the
// command line named the wrong folder, which is not a recording that
// broke the contract.
var ErrNoRecording = errors.New("no recorded exchange")
