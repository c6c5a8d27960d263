// A merchant with a dashboard request in flight is neither evicted at the
// cap nor forgotten when idle, as with an API request in flight.

package sandbox

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// advancePath is the dashboard form the test holds in flight.
const advancePath = "/dashboard/clock/advance"

// pausingForms closes started at the server's first read of a form posted
// to advancePath. The dashboard checks the session, and so identifies its
// merchant, before it reads the form: once started is closed the post is
// in flight with its merchant known.
func pausingForms(started chan struct{}) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == advancePath {
				r.Body = &firstRead{ReadCloser: r.Body, read: func() { once.Do(func() { close(started) }) }}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// firstRead calls read before each read of the body.
type firstRead struct {
	io.ReadCloser
	read func()
}

func (b *firstRead) Read(p []byte) (int, error) {
	b.read()
	return b.ReadCloser.Read(p)
}

// evictions is the ids of the merchants the sandbox logged it evicted,
// in order.
func (e *testEnv) evictions() []string {
	e.t.Helper()
	var ids []string
	for _, line := range strings.Split(e.logs.String(), "\n") {
		var rec struct {
			Msg      string `json:"msg"`
			Merchant string `json:"merchant"`
		}
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil || !strings.HasPrefix(rec.Msg, "evicted ") {
			continue
		}
		ids = append(ids, rec.Merchant)
	}
	return ids
}

func TestDashboardInFlight_AMerchantWithADashboardRequestUnderWayIsNeitherEvictedNorForgotten(t *testing.T) {
	const holder = "sk_test_dashboard_holder"
	holderID := paymock.OpenMerchantID(sha256.Sum256([]byte(holder)), false)
	advanced := testStart.Add(time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		name string
		// meanwhile runs while the holder's dashboard form waits for its
		// body, doing what would take the holder were it idle, and
		// returns the merchants it took.
		meanwhile func(env *testEnv) []string
		// after, once the form is answered, does it again: a request
		// that has ended holds the merchant no more.
		after func(env *testEnv) []string
	}{
		{name: "new tokens at the cap",
			meanwhile: func(env *testEnv) []string {
				// The holder is the least recently used, and empty.
				for i := range 3 {
					env.must(http.StatusOK, "GET", "/api/v1/payments", fmt.Sprint("sk_test_newcomer_", i))
				}
				return env.evictions()
			},
			after: func(env *testEnv) []string {
				before := len(env.evictions())
				env.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_2")
				env.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_newcomer_3")
				return env.evictions()[before:]
			}},
		{name: "idle for longer than the TTL",
			meanwhile: func(env *testEnv) []string {
				env.must(http.StatusOK, "GET", "/api/v1/payments", "sk_test_idle")
				return env.sb.ForgetIdle(time.Now().Add(48 * time.Hour))
			},
			after: func(env *testEnv) []string {
				return env.sb.ForgetIdle(time.Now().Add(48 * time.Hour))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			env := newEnv(t, withMaxMerchants(2), wrappedIn(pausingForms(started)))
			d := env.dashClient()
			if !d.signIn(holder) {
				t.Fatal("the holder's key did not sign in to the dashboard")
			}
			if st, _ := d.get("/dashboard/clock"); st != http.StatusOK || d.csrf == "" {
				t.Fatalf("GET /dashboard/clock: %d, csrf %q", st, d.csrf)
			}

			// The clock is what the merchant loses if it goes: the form
			// advances it, its body sent once the rest has happened.
			body := url.Values{"csrf": {d.csrf}, "by": {"3600"}}.Encode()
			pr, pw := io.Pipe()
			// A test that stops early lets the server end the request,
			// which closing it waits for.
			t.Cleanup(func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) })
			req, err := http.NewRequest(http.MethodPost, env.URL+advancePath, pr)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			type answer struct {
				status   int
				location string
				err      error
			}
			answered := make(chan answer, 1)
			go func() {
				// d's cookies, without its contract check, which reads
				// the whole body before sending any of it.
				c := &http.Client{Jar: d.http.Jar, CheckRedirect: d.http.CheckRedirect}
				resp, err := c.Do(req)
				if err != nil {
					answered <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				_, err = io.Copy(io.Discard, resp.Body)
				answered <- answer{resp.StatusCode, resp.Header.Get("Location"), err}
			}()
			select {
			case <-started:
			case a := <-answered:
				t.Fatalf("the form was answered before its body was sent: %d %s %v", a.status, a.location, a.err)
			}

			taken := tc.meanwhile(env)
			if len(taken) == 0 || slices.Contains(taken, holderID) {
				t.Errorf("took %v while the holder's dashboard form was under way, want others but not the holder %s", taken, holderID)
			}

			if _, err := io.WriteString(pw, body); err != nil {
				t.Fatal(err)
			}
			_ = pw.Close()
			a := <-answered
			if a.err != nil || a.status != http.StatusSeeOther || a.location != "/dashboard/clock" {
				t.Fatalf("the held form: %d to %q %v, want a 303 to /dashboard/clock", a.status, a.location, a.err)
			}
			if now := env.clockNow(holder); now != advanced {
				t.Errorf("the holder's clock shows %s after its form, want %s: the holder went while its form was under way", now, advanced)
			}

			// Once its request has ended (and it holds nothing), it can go.
			if taken := tc.after(env); !slices.Contains(taken, holderID) {
				t.Errorf("took %v once the holder's dashboard form had ended, want the holder %s", taken, holderID)
			}
			// What a taken merchant's clock shows next depends on the store: the
			// memory store lets it go, PostgreSQL keeps it for the replicas
			// that share it (internal/releasetest). The registry's word above
			// is what this test holds both to.
		})
	}
}

// must sends a request with key and fails the test unless it is answered
// with status.
func (e *testEnv) must(status int, method, path, key string) map[string]any {
	e.t.Helper()
	st, body, _ := e.do(method, path, key, nil)
	if st != status {
		e.t.Fatalf("%s %s: %d %v, want %d", method, path, st, body, status)
	}
	return body
}

// clockNow is what a merchant's clock shows, as the control API says.
func (e *testEnv) clockNow(key string) string {
	e.t.Helper()
	now, _ := e.must(http.StatusOK, "GET", "/_sandbox/clock", key)["now"].(string)
	return now
}
