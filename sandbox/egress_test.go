// Webhook destinations under the egress policy: refused when an endpoint
// is added, and again when a delivery connects.

package sandbox

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymock/paymock/egress"
)

// withEgress puts deliveries under policy.
func withEgress(policy *egress.Policy) envOption { return func(c *envConfig) { c.egress = policy } }

func TestEgress_AddingADeniedDestinationIs400NamingURL(t *testing.T) {
	loopbackDenied := egress.New(egress.Config{Deny: append(egress.DefaultDeny(), netip.MustParsePrefix("127.0.0.0/8"))})
	tests := []struct {
		name   string
		policy *egress.Policy
		url    string
	}{
		{"metadata address", nil, "http://169.254.169.254/latest/meta-data"},
		{"link-local IPv6", nil, "http://[fe80::1]:8080/hooks"},
		{"unspecified IPv4", nil, "http://0.0.0.0:9000/hooks"},
		{"unspecified IPv6", nil, "http://[::]:9000/hooks"},
		{"IPv4-mapped metadata address", nil, "http://[::ffff:169.254.169.254]/"},
		{"a name resolving to the metadata address", egress.New(egress.Config{Resolver: fixedResolver("metadata.test", "169.254.169.254")}), "http://metadata.test/"},
		{"loopback, denied by the operator", loopbackDenied, "http://127.0.0.1:9000/hooks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, withEgress(tc.policy))
			st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": tc.url})
			e := errorOf(t, body)
			if st != http.StatusBadRequest || e["param"] != "url" || !strings.Contains(e["message"].(string), "--webhook-deny") {
				t.Errorf("POST %s: %d %v, want 400 naming url and the policy", tc.url, st, body)
			}
			// The dashboard's form refuses it too.
			d := env.dashClient()
			if !d.signIn(keyA) {
				t.Fatal("sign-in refused")
			}
			d.get("/dashboard/webhooks")
			if st, to := d.post("/dashboard/webhooks", url.Values{"url": {tc.url}}); st != http.StatusSeeOther || to != "/dashboard/webhooks?refused=1" {
				t.Errorf("dashboard add %s: %d to %q, want 303 back to the form, refused", tc.url, st, to)
			} else if _, page := d.get(to); !strings.Contains(page, "--webhook-deny") {
				t.Errorf("dashboard add %s: the form does not say why:\n%s", tc.url, page)
			}
			if _, l, _ := env.do("GET", "/_sandbox/webhook-endpoints", keyA, nil); len(l["items"].([]any)) != 0 {
				t.Errorf("a refused endpoint was kept: %v", l)
			}
		})
	}
	t.Run("loopback and private ranges are allowed by default", func(t *testing.T) {
		env := newEnv(t)
		for _, u := range []string{"http://127.0.0.1:9000/hooks", "http://10.1.2.3/hooks", "http://[::1]:9000/", "http://192.168.0.7/"} {
			if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": u}); st != http.StatusCreated {
				t.Errorf("POST %s: %d %v, want 201", u, st, body)
			}
		}
	})
}

// fixedResolver resolves one name to one address.
func fixedResolver(host, addr string) egress.Resolver {
	return resolverFunc(func(_ context.Context, _, h string) ([]netip.Addr, error) {
		if h != host {
			return nil, &netError{h}
		}
		return []netip.Addr{netip.MustParseAddr(addr)}, nil
	})
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

type netError struct{ host string }

func (e *netError) Error() string { return "no such host " + e.host }

func TestEgress_ANameRebindingToADeniedAddressFailsAtConnect(t *testing.T) {
	rcv := newReceiver(t, nil)
	port := rcv.srv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	// The name answers a public address when the endpoint is added, then
	// the receiver's loopback address: DNS rebinding.
	var lookups atomic.Int32
	resolver := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host != "hooks.rebind.test" {
			return nil, &netError{host}
		}
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	policy := egress.New(egress.Config{Deny: append(egress.DefaultDeny(), netip.MustParsePrefix("127.0.0.0/8")), Resolver: resolver})
	env := newEnv(t, withEgress(policy))
	u := "http://hooks.rebind.test:" + strconv.Itoa(int(port)) + "/hooks"
	if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": u}); st != http.StatusCreated {
		t.Fatalf("adding %s while it resolves to a public address: %d %v", u, st, body)
	}
	id := env.create(keyA, nil)
	if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
		t.Fatalf("complete: %d %v", st, body)
	}
	var errMsg string
	for deadline := time.Now().Add(30 * time.Second); errMsg == "" && time.Now().Before(deadline); {
		_, evs, _ := env.do("GET", "/_sandbox/events", keyA, nil)
		for _, ev := range evs["items"].([]any) {
			for _, del := range ev.(map[string]any)["deliveries"].([]any) {
				for _, at := range del.(map[string]any)["attempts"].([]any) {
					if s, _ := at.(map[string]any)["error"].(string); s != "" {
						errMsg = s
					}
				}
			}
		}
		if errMsg == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !strings.Contains(errMsg, "127.0.0.1") || !strings.Contains(errMsg, "127.0.0.0/8") || !strings.Contains(errMsg, "--webhook-deny") {
		t.Errorf("the attempt's error is %q, want the denied address and range", errMsg)
	}
	if n := rcv.attemptCount(); n != 0 {
		t.Errorf("the receiver behind the denied address got %d requests", n)
	}
}
