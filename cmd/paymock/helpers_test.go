// Helpers of this package's tests: running the whole program in the
// background and reading what it printed.

package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// safetyNet bounds every wait so that a broken run fails the test instead
// of hanging it. It is not a speed requirement.
const safetyNet = 30 * time.Second

// envOf returns a getenv function that reads only from m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a running
// server's logger and the reads of a test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a run of the whole program in the background.
type running struct {
	addr   string // bound host:port
	stdout *syncBuffer
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	err    error         // what run returned; read after done
}

// stop cancels the run and returns what run returned.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

// wait returns what run returned, once it has.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(safetyNet):
		t.Fatal("run did not return")
		return nil
	}
}

// startRun runs the program with args and env and waits until it serves.
// The run is stopped when the test ends, if the test did not stop it.
func startRun(t *testing.T, args []string, env map[string]string, h hooks) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	h.ready = func(addr string) { ready <- addr }
	r := &running{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = runWith(ctx, args, envOf(env), r.stdout, r.stderr, h)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(safetyNet):
		}
	})
	select {
	case r.addr = <-ready:
	case <-r.done:
		t.Fatalf("run returned before serving: %v\nstderr:\n%s", r.err, r.stderr)
	case <-time.After(safetyNet):
		t.Fatalf("run did not start serving\nstderr:\n%s", r.stderr)
	}
	return r
}

// closedPort is the address of a loopback port that nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// writeFile writes content to name in a fresh temporary folder and returns
// the file's path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCLI runs the program with args and env as main would, and returns
// what it printed on stdout and stderr and its exit code. ctx bounds a
// serve that was wrongly accepted.
func runCLI(ctx context.Context, args []string, env map[string]string) (stdout, stderr string, code int) {
	var out, errOut strings.Builder
	environ := func() []string {
		var kv []string
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	err := runWith(ctx, args, envOf(env), &out, &errOut, hooks{environ: environ})
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// cancelled is a context that is already done: a serve that should have
// been refused stops at once instead of running on.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// wantUsageError fails unless err is a usage error (exit code 2) whose
// message contains every one of want.
func wantUsageError(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	var ue *usageError
	if !errors.As(err, &ue) {
		t.Errorf("error %q is not a usage error (exit code 2)", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
