// Command paymock runs the payments sandbox: a mock server of the payments
// service, configured by flags, PAYMOCK_* environment variables and an
// optional YAML file of merchants.
//
//	paymock [serve] [flags]       run the server (the default)
//	paymock healthcheck [flags]   exit 0 when the server at --addr is healthy
//	paymock report [flags]        print a server's contract report; a CI gate
//	paymock version               print the version
//
// Run "paymock -h" for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills at once.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the process exit code: 0 on
// success, 2 on a usage or configuration error, 1 on any other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "paymock: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, `Run "paymock -h" for usage.`)
		return 2
	}
	return 1
}

// hooks lets tests observe and extend a run; the zero value does nothing.
type hooks struct {
	// ready is called with the bound address (host:port) once the server
	// accepts connections.
	ready func(addr string)
	// shuttingDown is called when graceful shutdown has begun and the
	// listener is closed.
	shuttingDown func()
	// wrap, when set, wraps the server's handler.
	wrap func(http.Handler) http.Handler
}

// run is the whole program: it returns when the command is done or, for
// serve, when ctx is cancelled and the server has shut down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, stdout, stderr, hooks{})
}

func runWith(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, h hooks) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve", "healthcheck":
	case "report":
		return report(ctx, args, getenv, stdout)
	case "version":
		if len(args) > 0 {
			return usageErrorf("version takes no arguments, got %q", args)
		}
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "help":
		printUsage(stdout)
		printReportHint(stdout)
		return nil
	default:
		return usageErrorf("unknown command %q (want serve, healthcheck or version, or report for the CI gate)", cmd)
	}

	raw, rest, err := parseFlags(cmd, args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		printReportHint(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q (flags come after the command: paymock %s --addr ...)", rest[0], cmd)
	}

	if cmd == "healthcheck" {
		v, src := raw.get("addr")
		addr, err := parseAddr(v)
		if err != nil {
			return usageErrorf("invalid %s: %v", src, err)
		}
		return healthcheck(ctx, addr, stdout)
	}

	opts, err := parseOptions(raw)
	if err != nil {
		return err
	}
	_, apiKeysFrom := raw.list("api-key")
	return serve(ctx, opts, apiKeysFrom, stderr, h)
}
