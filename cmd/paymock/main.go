// Command paymock runs the payments sandbox: a mock server of the payments
// service, configured by flags, PAYMOCK_* environment variables and an
// optional YAML file of merchants.
//
//	paymock [serve] [flags]       run the server (the default)
//	paymock healthcheck [flags]   exit 0 when the server at --addr is healthy
//	paymock report [flags]        print a server's contract report; a CI gate
//	paymock verify [flags]        check a deployment against the contract and paymock's choices
//	paymock proxy [flags]         a validating pass-through in front of a deployment
//	paymock version               print the version
//
// Run "paymock -h" for the flags of serve, "paymock report -h" and
// "paymock healthcheck -h" for those of the other commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/paymock/paymock/internal/gcfloor"
)

func main() {
	startGCFloor(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills at once.
		<-ctx.Done()
		stop()
	}()
	err := runWith(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, hooks{environ: os.Environ})
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// gcFloor is the heap growth the binary allows between collections
// while its live heap is small (internal/gcfloor). At GOGC=100 a server
// holding a few MiB collects every few MiB allocated, 7 times in the
// 2,000 deliveries of scripts/bench.sh, and a delivery beside a
// collection waits for the marking's share of the two cores; 16 MiB is
// 2 collections there for 8 MiB more at the peak. A larger floor is
// fewer still, but the heap then grows into fresh pages, each a page
// fault that costs more on a virtual machine than the collection saved
// (docs/performance.md, "A floor under the collector").
const gcFloor = 16 << 20

// startGCFloor puts gcFloor under the collector unless the user tuned
// it: GOGC or GOMEMLIMIT set is theirs to keep (GOGC=100 is Go's
// default without the floor).
func startGCFloor(getenv func(string) string) (stop func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	return gcfloor.Start(gcFloor).Stop
}

// exitCode reports err on stderr and returns the process exit code: 0 on
// success, 2 on a usage or configuration error (followed by where to find
// the help of the command that was run) or a file named on the command
// line that could not be written, 1 on any other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "paymock: %v\n", err)
	if hint := permissionHint(err); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run %q for usage.\n", ue.helpCommand())
		return 2
	}
	// A --junit or --out file that could not be written is the command
	// line's to fix, as a usage error is: 1 would read as a failed gate or
	// a broken contract. The help would not help, so it is not pointed to.
	var we *writeError
	if errors.As(err, &we) {
		return 2
	}
	return 1
}

// permissionHint says who paymock runs as when a file it reads or writes
// was refused: the image runs as uid 65532, and a config mounted from a
// file kept private (0600, as files with keys and secrets are) cannot be
// read by it, nor can a --junit or --out file be written into a mounted
// folder owned by another uid, which "permission denied" alone does not
// tell. The kernel's error reads the same ("open ...: permission
// denied") for a file refused for reading or for writing, so writes come
// wrapped in a writeError to say which.
func permissionHint(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "open" {
		return ""
	}
	var we *writeError
	writing := errors.As(err, &we)
	switch {
	case writing && errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("paymock runs as uid %d, which may not write %s: write it to a folder that user may write to, "+
			"or run paymock as the folder's owner (in docker: -v \"$PWD:/out\" --user \"$(id -u)\", and a path in /out)", os.Getuid(), pe.Path)
	case writing && errors.Is(err, syscall.EROFS):
		// A container run --read-only, as docs/docker.md suggests: no
		// uid can write there.
		return fmt.Sprintf("%s is on a read-only file system: write it to a mounted folder "+
			"(in docker: -v \"$PWD:/out\" --user \"$(id -u)\", and a path in /out)", pe.Path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("paymock runs as uid %d, which may not read %s: make it readable to that user (chmod a+r), "+
			"or run paymock as the file's owner (in docker: --user \"$(id -u)\")", os.Getuid(), pe.Path)
	}
	return ""
}

// writeError is a file named on the command line (report --junit, verify
// --out) that could not be written; permissionHint tells it from a read.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// writeOutputFile writes a file named on the command line.
func writeOutputFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return &writeError{err: err}
	}
	return nil
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
	// environ, when set, lists the environment, whose PAYMOCK_* names
	// serve checks (getenv alone cannot list them).
	environ func() []string
	// limits, when set, replaces defaultLimits (tests use short ones).
	limits *serverLimits
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
	err := runCommand(ctx, cmd, args, getenv, stdout, stderr, h)
	// A usage error points to the help of its own command.
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" && (cmd == "report" || cmd == "healthcheck" || cmd == "verify" || cmd == "proxy") {
		ue.cmd = cmd
	}
	return err
}

func runCommand(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer, h hooks) error {
	switch cmd {
	case "serve":
	case "healthcheck":
		return healthcheckCommand(ctx, args, getenv, stdout)
	case "report":
		return report(ctx, args, getenv, stdout)
	case "verify":
		return verifyCommand(ctx, args, getenv, stdout, stderr)
	case "proxy":
		return proxyCommand(ctx, args, getenv, stdout, stderr, h)
	case "version":
		switch {
		case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
			fmt.Fprintln(stdout, "Usage: paymock version\n\nprints the version of this binary, its commit and the Go toolchain that built it.")
			return nil
		case len(args) > 0:
			return usageErrorf("version takes no arguments, got %q", args)
		}
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "help":
		switch {
		case len(args) == 0 || args[0] == "serve":
			printUsage(stdout)
			printReportHint(stdout)
		case args[0] == "report":
			printReportUsage(stdout)
		case args[0] == "healthcheck":
			printHealthcheckUsage(stdout)
		case args[0] == "verify":
			printVerifyUsage(stdout)
		case args[0] == "proxy":
			printProxyUsage(stdout)
		default:
			return usageErrorf("help: unknown command %q (want serve, healthcheck, report, verify, proxy or version)", args[0])
		}
		return nil
	default:
		return usageErrorf("unknown command %q (want serve, healthcheck, report, verify, proxy or version)", cmd)
	}

	raw, help, argErrs := parseFlags(args, getenv)
	if help {
		printUsage(stdout)
		printReportHint(stdout)
		return nil
	}
	if h.environ != nil {
		argErrs = append(argErrs, unknownEnv(h.environ())...)
	}
	opts, err := parseOptions(raw, argErrs)
	if err != nil {
		return err
	}
	_, apiKeysFrom := raw.list("api-key")
	return serve(ctx, opts, apiKeysFrom, stderr, h)
}
