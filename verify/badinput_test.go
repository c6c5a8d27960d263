// Tests of deployments that cannot be checked: each stops the run with a
// message naming the host, never the key.

package verify

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/driftedtest"
	"github.com/paymock/paymock/paymocktest"
)

func TestRun_BadDeploymentsStopWithAMessageNamingTheHostNeverTheKey(t *testing.T) {
	const key = "sk_secret_never_shown"
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := closed.Addr().String()
	closed.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>Welcome</body></html>"))
	}))
	defer html.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer slow.Close()
	defer close(hang)
	other := driftedtest.New(t)

	for _, tc := range []struct {
		name, base string
		timeout    time.Duration
		want       string
	}{
		{"unreachable", "http://" + refusedAddr, 0, "cannot reach " + refusedAddr + ": "},
		{"refused key", other.URL, 0, strings.TrimPrefix(other.URL, "http://") + " refused the API key (401 on GET /api/v1/payments)"},
		{"TLS error", tlsSrv.URL, 0, "TLS with " + strings.TrimPrefix(tlsSrv.URL, "https://") + " failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"plain HTTP on a TLS port", "https://" + strings.TrimPrefix(html.URL, "http://"), 0, "TLS with " + strings.TrimPrefix(html.URL, "http://") + " failed: it does not speak TLS"},
		{"HTML answer", html.URL, 0, strings.TrimPrefix(html.URL, "http://") + " answered GET /api/v1/payments with 200 and text/html; charset=utf-8, not JSON"},
		{"timeout", slow.URL, 200 * time.Millisecond, strings.TrimPrefix(slow.URL, "http://") + " did not answer GET /api/v1/payments within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runAgainst(t, Config{BaseURL: tc.base, APIKey: key, Timeout: tc.timeout})
			out := text(t, rep)
			var js bytes.Buffer
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if !rep.Failed() || len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], tc.want) {
				t.Errorf("problems %q, want one starting %q", rep.Problems, tc.want)
			}
			if !strings.Contains(out, "the report below is partial") || len(rep.Checks) != 1 {
				t.Errorf("not a partial report of the first check:\n%s", out)
			}
			// Stopped at its first check, the run saw none of the forms a
			// setting changes: no setting is closest.
			if rep.Settings.Variants != "" || !strings.Contains(out, "\nclosest paymock: not known: the run compared none of the points a setting changes (amount.form, status.success_name, payment_link.checkout, payment_link.retrieve, webhook.payload)\n") {
				t.Errorf("closest setting %q after a run that compared nothing:\n%s", rep.Settings.Variants, out)
			}
			// The answer that stopped the run is its problem, not the
			// service's choice: a refused key is no drift of status.list
			// (an expired secret would read as a changed service), an HTML
			// page no drift of the headers.
			if len(rep.Drift) != 0 || len(rep.Settings.Unmatched) != 0 {
				t.Errorf("drift %+v, unmatched %q from the answer that stopped the run:\n%s", rep.Drift, rep.Settings.Unmatched, out)
			}
			if strings.Contains(out, key) || strings.Contains(js.String(), key) {
				t.Errorf("the report shows the key:\n%s", out)
			}
		})
	}
}

func TestConfig_BadWebhookSettingsAreRefusedBeforeAnyCall(t *testing.T) {
	if _, err := Run(t.Context(), Config{BaseURL: "http://x", APIKey: "k", Webhooks: &WebhookConfig{Secret: "whsec_AAAA"}}); err == nil {
		t.Error("a webhook part without a listener accepted")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), Config{BaseURL: "http://x", APIKey: "k", Webhooks: &WebhookConfig{Listener: ln, Secret: "whsec_!!"}})
	if err == nil || !strings.Contains(err.Error(), "webhook secret") {
		t.Errorf("a secret that is not base64: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener of a refused run is still open")
	}
}

func TestConfig_BadBaseURLsAreRefusedBeforeAnyCall(t *testing.T) {
	for _, base := range []string{"", "localhost:8080", "ftp://x", "https://user:pw@host", "http://h/?q=1"} {
		if _, err := Run(t.Context(), Config{BaseURL: base, APIKey: "k"}); err == nil {
			t.Errorf("base URL %q accepted", base)
		}
	}
}

func TestRun_ACheckWithoutAnAnswerMidRunIsAProblemAndTheRestStillRuns(t *testing.T) {
	s := paymocktest.New(t, paymocktest.AllowViolations())
	target, _ := url.Parse(s.URL)
	fwd := httputil.NewSingleHostReverseProxy(target)
	// Only the retrieve of a real id gets no answer: the connection is
	// dropped.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/payments/pay_") && !strings.Contains(r.URL.Path, "Unknown") {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		fwd.ServeHTTP(w, r)
	}))
	defer front.Close()
	rep := runAgainst(t, Config{BaseURL: front.URL, APIKey: s.APIKey})
	out := text(t, rep)
	host := strings.TrimPrefix(front.URL, "http://")
	if len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], "retrieve: "+host+" closed the connection without answering GET /api/v1/payments/pay_") {
		t.Errorf("problems %q", rep.Problems)
	}
	if !rep.Failed() || len(rep.Checks) != 14 || !strings.Contains(out, "problems (the report below is partial):") {
		t.Errorf("want every other check run and the report marked partial:\n%s", out)
	}
	for _, u := range rep.Unobserved {
		if u.Point == "status.list" {
			t.Errorf("the list was not compared:\n%s", out)
		}
	}
}
