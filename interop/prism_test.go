// Prism, a strict third-party OpenAPI validator, in front of paymock for a
// whole merchant session, and Prism's mock of the contract checked by
// paymock's own response validation.

package interop

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// startPrism runs Prism with args (after the subcommand) on a free port
// and returns its base URL.
func startPrism(t *testing.T, args ...string) (string, *process) {
	t.Helper()
	prism := npmTool(t, "prism")
	port := freePort(t)
	all := append(args[:1:1], append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args[1:]...)...)
	p := startTool(t, "Prism is listening", prism, all...)
	return "http://127.0.0.1:" + strconv.Itoa(port), p
}

// prismViolation finds a violation in Prism's log: with --errors it ends
// the request with an error, and without it logs a warning per violation.
var prismViolation = regexp.MustCompile(`(?i)violation|Request terminated with error`)

// violations are the lines of Prism's log that report a violation. A
// request Prism ends itself for want of a token (errors#UNAUTHORIZED: its
// own security check, which --validate-request=false leaves on) is not
// one: paymock never saw it. Prism logs that line after answering, so
// whether a test sees it was a race.
func violations(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if prismViolation.MatchString(line) && !strings.Contains(line, "errors#UNAUTHORIZED") {
			out = append(out, line)
		}
	}
	return out
}

// proxied is one exchange through Prism's proxy.
type proxied struct {
	t     *testing.T
	prism string
	tok   string
}

// call sends a request through Prism and fails on any violation Prism
// reports in its header or as its own error answer, or on another status.
func (p proxied) call(method, path string, body any, want int) call {
	p.t.Helper()
	c := do(p.t, method, p.prism+path, p.tok, body)
	if v := c.header.Get("sl-violations"); v != "" {
		p.t.Errorf("%s %s: Prism reports violations: %s", method, path, v)
	}
	if c.status != want {
		p.t.Errorf("%s %s: status %d, want %d: %s", method, path, c.status, want, c.body)
	}
	return c
}

func TestPrismProxy_SeesNoViolationInAWholeSession(t *testing.T) {
	forms := []struct {
		name     string
		variants string
	}{
		{"default forms", "default"},
		{"other forms", "amount=string,status=succeeded,payment_link=omit"},
	}
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			srv := startServer(t, "--variants", form.variants)
			url, prism := startPrism(t, "proxy", "--errors", "openapi.yaml", srv.URL)
			p := proxied{t: t, prism: url, tok: token(t)}
			direct := func(method, path string, want int) {
				t.Helper()
				if c := do(t, method, srv.URL+path, p.tok, nil); c.status != want {
					t.Fatalf("%s %s on the server: status %d, want %d: %s", method, path, c.status, want, c.body)
				}
			}

			// Without a card: payment_method is null, next_action an object.
			checkout := decode[map[string]any](t, p.call("POST", "/api/v1/payments", createBody(nil), 201))
			// With a card and an account instead of an mcc.
			card := decode[map[string]any](t, p.call("POST", "/api/v1/payments", createBody(map[string]any{
				"mcc": nil, "account_id": "acct_sandbox_active", "payment_method": cardInput("4242424242424242"),
			}), 201))
			third := decode[map[string]any](t, p.call("POST", "/api/v1/payments", createBody(map[string]any{"amount": 999999999.99}), 201))
			ids := []string{idOf(t, checkout), idOf(t, card), idOf(t, third)}
			for _, id := range ids {
				p.call("GET", "/api/v1/payments/"+id, nil, 200)
			}
			p.call("GET", "/api/v1/payments", nil, 200)
			p.call("GET", "/api/v1/payments?page=2&per_page=1", nil, 200)
			p.call("GET", "/api/v1/payments?page=9&per_page=100", nil, 200)
			p.call("GET", "/api/v1/payments/pay_000000000000000000000000", nil, 404)

			// Every outcome, driven on the server, then seen through Prism:
			// next_action is null from now on.
			for i, outcome := range []string{"complete", "fail", "expire"} {
				direct("POST", "/_sandbox/payments/"+ids[i]+"/"+outcome, 200)
				p.call("GET", "/api/v1/payments/"+ids[i], nil, 200)
			}
			p.call("GET", "/api/v1/payments?per_page=100", nil, 200)

			if bad := violations(prism.logs.String()); len(bad) > 0 {
				t.Errorf("Prism's log reports %d violations:\n%s", len(bad), prism.logs.String())
			}
		})
	}
}

func TestPrismProxy_SeesNoViolationInErrorAnswers(t *testing.T) {
	srv := startServer(t)
	// Prism's own request check would answer these itself; off, it
	// forwards them and checks only paymock's answers.
	url, prism := startPrism(t, "proxy", "--errors", "--validate-request=false", "openapi.yaml", srv.URL)
	p := proxied{t: t, prism: url, tok: token(t)}
	p.call("POST", "/api/v1/payments", createBody(map[string]any{"currency": "JPY", "account_id": "acct_sandbox_active"}), 400)
	p.call("POST", "/api/v1/payments", createBody(map[string]any{"success_url": "HTtP://", "zzz": 1}), 400)
	p.call("GET", "/api/v1/payments?page=0", nil, 400)
	p.call("GET", "/api/v1/payments/pay_000000000000000000000000", nil, 404)
	p.tok = ""
	p.call("GET", "/api/v1/payments", nil, 401)
	if bad := violations(prism.logs.String()); len(bad) > 0 {
		t.Errorf("Prism's log reports %d violations:\n%s", len(bad), prism.logs.String())
	}
}

func TestPrismMock_AnswersWhatPaymockAccepts(t *testing.T) {
	needInterop(t)
	url, _ := startPrism(t, "mock", "openapi.yaml")
	doc := loadDoc(t, "openapi.yaml")
	pd := paymockDoc(t, "openapi.yaml")
	checked := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, method := range sortedKeys(doc.Paths.Value(path).Operations()) {
			op := doc.Paths.Value(path).Operations()[method]
			var body any
			if op.RequestBody != nil {
				body = op.RequestBody.Value.Content["application/json"].Examples["with_mcc"].Value.Value
			}
			target := fillPath(path, op)
			for _, code := range sortedKeys(op.Responses.Map()) {
				media := op.Responses.Value(code).Value.Content["application/json"]
				if media == nil {
					continue
				}
				// Each named example, then a body Prism makes up from the
				// schema alone.
				prefers := []string{}
				for _, name := range sortedKeys(media.Examples) {
					prefers = append(prefers, "code="+code+", example="+name)
				}
				for range 5 {
					prefers = append(prefers, "code="+code+", dynamic=true")
				}
				for _, prefer := range prefers {
					c := doPrefer(t, method, url+target, body, prefer)
					status, _ := strconv.Atoi(code)
					if c.status != status {
						t.Errorf("%s %s with Prefer %q: Prism answered %d: %s", method, target, prefer, c.status, c.body)
						continue
					}
					req, _ := http.NewRequestWithContext(t.Context(), method, "http://paymock"+target, nil)
					route, err := pd.Match(req)
					if err != nil {
						t.Fatal(err)
					}
					body := c.body
					if strings.Contains(prefer, "dynamic") {
						// json-schema-faker, Prism's generator, ignores a
						// pattern beside format: date-time and writes
						// fractional seconds ("…T23:59:59.0Z") where the
						// contract has whole ones. Everything else of the
						// made-up body must pass as it is.
						body = fractionalSeconds.ReplaceAll(body, []byte(`${1}Z"`))
					}
					if err := pd.ValidateResponse(t.Context(), req, route, c.status, c.header, body); err != nil {
						t.Errorf("%s %s with Prefer %q: paymock refuses Prism's answer: %v\n%s", method, target, prefer, err, c.body)
					}
					checked++
				}
			}
		}
	}
	if checked < 15 {
		t.Errorf("only %d mock answers checked", checked)
	}
}

// fractionalSeconds finds the fraction of a date-time's seconds.
var fractionalSeconds = regexp.MustCompile(`(T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]+Z"`)

// doPrefer sends a request to Prism's mock asking for one answer.
func doPrefer(t *testing.T, method, url string, body any, prefer string) call {
	t.Helper()
	req := preparedRequest{method: method, url: url, body: body, header: http.Header{"Prefer": {prefer}}}
	return req.send(t, "sk_test_interop_mock")
}

// idOf is the id of a created payment; without one the session cannot go on.
func idOf(t *testing.T, payment map[string]any) string {
	t.Helper()
	id, ok := payment["id"].(string)
	if !ok {
		t.Fatalf("no payment id in %v", payment)
	}
	return id
}

// createBody is a valid create request with mcc, with the fields of edit
// set (a nil value removes the field).
func createBody(edit map[string]any) map[string]any {
	b := map[string]any{
		"amount":      10.5,
		"currency":    "USD",
		"customer":    map[string]any{"email": "jane@example.com", "name": "Jane Doe"},
		"description": "Order 1234",
		"expires_in":  3600,
		"metadata":    map[string]any{"order_id": "ord_1234"},
		"success_url": "https://shop.example.com/success",
		"cancel_url":  "https://shop.example.com/cancel",
		"mcc":         5732,
	}
	for k, v := range edit {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// cardInput is card details that pass every rule on a clock before 2034.
func cardInput(number string) map[string]any {
	return map[string]any{
		"type": "card",
		"card": map[string]any{"number": number, "expiry_month": 12, "expiry_year": 2034, "cvc": "123"},
	}
}

// preparedRequest is a request with extra headers.
type preparedRequest struct {
	method, url string
	body        any
	header      http.Header
}

func (p preparedRequest) send(t *testing.T, tok string) call {
	t.Helper()
	return doWith(t, p.method, p.url, tok, p.body, func(h http.Header) {
		for k, vs := range p.header {
			h[k] = vs
		}
	})
}
