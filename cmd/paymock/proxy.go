// "paymock proxy": a validating pass-through in front of a deployment,
// with the journal, report and gate of serve.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/mockserver"
	"github.com/paymock/paymock/proxy"
)

// proxyUpstreamEnv is --upstream from the environment.
const proxyUpstreamEnv = "PAYMOCK_PROXY_UPSTREAM"

func proxyFlags() []argSpec {
	return []argSpec{{name: "upstream"}, {name: "addr"}, {name: "record"}, {name: "journal-size"}, {name: "log-format"}}
}

// printProxyUsage writes the help text of "paymock proxy".
func printProxyUsage(w io.Writer) {
	fmt.Fprintf(w, `paymock proxy is a validating pass-through in front of a deployment of the
payments service (its real sandbox, or a paymock).

Usage:
  paymock proxy --upstream URL [--addr ADDR] [--record DIR] [--journal-size N]

Point the merchant's client at the proxy instead of the deployment. Every
request and answer of the service API (/api/...) is checked against
openapi.yaml; each violation is marked client (the request) or upstream (the
answer). The upstream's answer goes back unchanged, even when it breaks the
contract. GET /_sandbox/report and GET /_sandbox/requests serve the journal
of each API key as a paymock does, so "paymock report --url <proxy>
--api-key KEY --fail-on-violations" gates CI on the traffic.

Flags:
  --upstream URL       the deployment's base address (env %s)
  --addr ADDR          listen address (default :8080)
  --record DIR         also write each exchange to a file in DIR, with
                       Authorization, API keys and webhook secrets redacted;
                       "paymock verify --replay DIR" checks them again offline
  --journal-size N     exchanges kept per API key (default %d)
  --log-format F       text (default) or json
`, proxyUpstreamEnv, proxy.DefaultJournalSize)
}

// proxyCommand is "paymock proxy": it serves until ctx is cancelled.
func proxyCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, h hooks) error {
	p := parseArgs("paymock proxy", args, proxyFlags())
	if p.help {
		printProxyUsage(stdout)
		return nil
	}
	errs := p.errs
	upstream := p.last("upstream")
	if !p.set("upstream") {
		upstream = getenv(proxyUpstreamEnv)
	}
	if upstream == "" {
		errs = append(errs, fmt.Errorf("--upstream (or %s) is required", proxyUpstreamEnv))
	}
	addr := ":8080"
	if p.set("addr") {
		addr = p.last("addr")
	}
	size := 0
	if p.set("journal-size") {
		n, err := strconv.Atoi(strings.TrimSpace(p.last("journal-size")))
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("invalid --journal-size: %q: want a whole number of exchanges, at least 1", p.last("journal-size")))
		}
		size = n
	}
	format := "text"
	if p.set("log-format") {
		format = p.last("log-format")
	}
	if format != "text" && format != "json" {
		errs = append(errs, fmt.Errorf("invalid --log-format: %q: want text or json", format))
	}
	if p.set("record") && p.last("record") == "" {
		errs = append(errs, errors.New("invalid --record: want a folder"))
	}
	if len(errs) > 0 {
		return &usageError{err: fmt.Errorf("proxy: %w", errors.Join(errs...)), cmd: "proxy"}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if format == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, nil))
	}
	px, err := proxy.New(proxy.Config{Upstream: upstream, RecordDir: p.last("record"), JournalSize: size, Logger: logger})
	if err != nil {
		return &usageError{err: err, cmd: "proxy"}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("proxy: listen on %s: %w", addr, err)
	}
	limits := defaultLimits
	if h.limits != nil {
		limits = *h.limits
	}
	// A proxy shared by several teams is held by as many clients as a
	// serve: the same bound on its connections, and on an answer its
	// client does not read. The upstream's own time is not bounded here
	// (no read or write timeout): verify and proxy point at deployments
	// slower than a sandbox.
	conns := limits.conns()
	srv := &http.Server{Handler: conns.Handler(connlimit.AnswerWithin(limits.answer, px)),
		ReadHeaderTimeout: limits.readHeader, IdleTimeout: limits.idle, MaxHeaderBytes: limits.maxHeaderBytes,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	conns.Server(srv)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns.Listen(ln)) }()
	logger.Info("paymock proxy listening", "addr", ln.Addr().String(), "upstream", px.Upstream(), "record", p.last("record"))
	if h.ready != nil {
		h.ready(ln.Addr().String())
	}
	select {
	case err := <-served:
		return fmt.Errorf("proxy: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("proxy: shutdown: %w", err)
	}
	logger.Info("paymock proxy stopped")
	return nil
}

// replayCommand is "paymock verify --replay DIR": recorded exchanges
// checked offline, reported as the proxy reported them.
func replayCommand(ctx context.Context, o *verifyOptions, stdout io.Writer) error {
	// The folder is the command line's: one that is missing, is no
	// folder, holds no recording, or holds a file this user may not read
	// is a usage error
	// (exit 2), not the 1 of a recording that broke the contract.
	if fi, err := os.Stat(o.replay); err != nil {
		return &usageError{err: fmt.Errorf("verify: --replay: %w", err)}
	} else if !fi.IsDir() {
		return usageErrorf("verify: --replay %s: not a folder: want the folder of paymock proxy --record", o.replay)
	}
	rep, n, recorded, err := proxy.Replay(ctx, o.replay, o.replayKey)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) || errors.Is(err, proxy.ErrNoRecording) {
			return &usageError{err: fmt.Errorf("verify: %w", err)}
		}
		return fmt.Errorf("verify: %w", err)
	}
	var out []byte
	switch o.format {
	case "json":
		out, err = json.MarshalIndent(rep, "", "  ")
		out = append(out, '\n')
	case "junit":
		out, err = mockserver.JUnit(rep)
	default:
		var b strings.Builder
		if o.replayKey != "" {
			fmt.Fprintf(&b, "replayed %d of %d recorded %s from %s, those of the --api-key given\n", n, recorded, plural(recorded, "exchange", "exchanges"), o.replay)
		} else {
			fmt.Fprintf(&b, "replayed %d recorded %s from %s, of every key and of none (--api-key KEY gives the report the proxy gave that key)\n", n, plural(n, "exchange", "exchanges"), o.replay)
		}
		printReport(&b, &rep)
		out = []byte(b.String())
	}
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := writeOut(o.out, stdout, out); err != nil {
		return err
	}
	if rep.ViolatingCalls > 0 {
		return &findingsError{summary: fmt.Sprintf("%d of %d recorded %s broke the contract",
			rep.ViolatingCalls, rep.Calls, plural(rep.Calls, "exchange", "exchanges"))}
	}
	return nil
}
