// "paymock healthcheck": the image's HEALTHCHECK, needing only this binary.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// healthcheckTimeout bounds the whole health check request.
const healthcheckTimeout = 2 * time.Second

// printHealthcheckUsage writes the help text of "paymock healthcheck".
func printHealthcheckUsage(w io.Writer) {
	fmt.Fprintf(w, `paymock healthcheck asks a running paymock whether it is healthy: the
Docker image's HEALTHCHECK, needing nothing but this binary.

Usage:
  paymock healthcheck [--addr host:port]

It sends GET http://<addr>/healthz (to 127.0.0.1 when the host is empty,
0.0.0.0 or ::), through no proxy, and waits up to %s. It exits:
  0  the server answered 200 (it prints "healthy: GET ...: 200 OK")
  1  no answer, or another status
  2  a usage error

Flags:
  --addr host:port   the address the server listens on (env PAYMOCK_ADDR,
                     the same variable as serve's; default ":8080")

serve's other flags are accepted and ignored, so that one set of flags
serves both commands.
`, healthcheckTimeout)
}

// healthcheckCommand is "paymock healthcheck": it reads --addr, then
// PAYMOCK_ADDR, and checks the server there.
func healthcheckCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	// serve's other flags are accepted and ignored, so that a script can
	// hand both commands the same flags; unknown ones are still refused.
	p := parseArgs("paymock healthcheck", args, argSpecs())
	if p.help {
		printHealthcheckUsage(stdout)
		return nil
	}
	if len(p.errs) > 0 {
		return &usageError{err: fmt.Errorf("healthcheck: %w", errors.Join(p.errs...)), cmd: "healthcheck"}
	}
	addr, src := p.last("addr"), "--addr"
	if !p.set("addr") {
		addr, src = getenv(envName("addr")), envName("addr")
		if addr == "" {
			addr, src = specOf("addr").def, "--addr"
		}
	}
	if _, err := parseAddr(addr); err != nil {
		return usageErrorf("healthcheck: invalid %s: %v", src, err)
	}
	return healthcheck(ctx, addr, stdout)
}

// healthcheck asks the server listening on addr for GET /healthz and
// succeeds on 200. It is the image's HEALTHCHECK, so it needs nothing but
// this binary (no shell, no curl).
func healthcheck(ctx context.Context, addr string, stdout io.Writer) error {
	target, err := healthURL(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	client := &http.Client{
		// Never through a proxy: the server is on this host.
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("healthcheck: GET %s: no answer within %s", target, healthcheckTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("healthcheck: GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: GET %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "healthy: GET %s: %s\n", target, resp.Status)
	return nil
}

// healthURL is the /healthz URL of a server listening on addr: on the
// loopback interface when addr listens on every interface (":8080",
// "0.0.0.0:8080", "[::]:8080"), else on addr's own host.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageErrorf("healthcheck: --addr %q: %v", addr, err)
	}
	if port == "0" {
		return "", usageErrorf("healthcheck: --addr %q has port 0; give the port the server listens on", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
