// paymock under Testcontainers in Go: a test starts the image, waits for
// it, and drives a payment through with its webhook received by the test.
// docs/docker.md shows this file; scripts/docker-test.sh runs it with
// PAYMOCK_TEST_IMAGE set to the image scripts/image.sh built.

package paymock_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestPaymock_UnderTestcontainers(t *testing.T) {
	image := os.Getenv("PAYMOCK_TEST_IMAGE")
	if image == "" {
		t.Skip("PAYMOCK_TEST_IMAGE is not set: scripts/docker-test.sh sets it to the image it built")
	}
	ctx := t.Context()

	// The test's webhook receiver, on the address containers reach this
	// machine by (the default bridge network's gateway).
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		t.Fatal(err)
	}
	gateway, err := provider.GetGatewayIP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
	if err != nil {
		t.Fatal(err)
	}
	hooks := make(chan string, 10)
	receiver := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hooks <- r.Header.Get("webhook-signature") + " " + string(body)
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = receiver.Serve(ln) }()
	t.Cleanup(func() { _ = receiver.Close() })
	webhookURL := "http://" + ln.Addr().String() + "/hooks"

	// docs-test region: paymock in a container
	paymock, err := testcontainers.Run(ctx, image,
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithEnv(map[string]string{
			"PAYMOCK_API_KEY":        "sk_test_tc",
			"PAYMOCK_WEBHOOK_URL":    webhookURL,
			"PAYMOCK_WEBHOOK_SECRET": secret,
		}),
		// Ready once /healthz answers (the image's HEALTHCHECK asks the same).
		testcontainers.WithWaitStrategy(wait.ForHTTP("/healthz").WithPort("8080/tcp")),
	)
	testcontainers.CleanupContainer(t, paymock)
	if err != nil {
		t.Fatal(err)
	}
	base, err := paymock.PortEndpoint(ctx, "8080/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	// base is http://localhost:<port>: point your client at it with the key.
	// end of region

	call := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer sk_test_tc")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return string(out)
	}
	created := call("POST", "/api/v1/payments", `{"amount": 10.50, "currency": "EUR", "description": "Order 1",
		"expires_in": 3600, "mcc": 5732, "customer": {"email": "jane@example.com", "name": "Jane"},
		"metadata": {}, "success_url": "https://shop.example/ok", "cancel_url": "https://shop.example/cancel"}`)
	id := strings.Split(created, `"`)[3] // the payment's id is its first field
	if !strings.HasPrefix(id, "pay_") {
		t.Fatalf("created %s", created)
	}
	call("POST", "/_sandbox/payments/"+id+"/complete", "")
	select {
	case hook := <-hooks:
		if !strings.HasPrefix(hook, "v1,") || !strings.Contains(hook, `"type":"payment.completed"`) || !strings.Contains(hook, id) {
			t.Errorf("the webhook: %s", hook)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook within 30 s")
	}
}
