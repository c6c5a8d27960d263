// The server under test: the paymock binary started on a loopback port,
// stopped the way an operator stops it.

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is one running paymock process.
type server struct {
	base string
	cmd  *exec.Cmd
	logs *tailBuffer
	done chan struct{} // closed when the process has exited
}

// startServer runs the binary on a free loopback port with a real clock,
// metrics on and every merchant's webhooks going to hookURL, and waits
// until it answers /healthz.
func startServer(ctx context.Context, bin, hookURL, secret string) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	logs := &tailBuffer{max: 64 << 10}
	// Short retries so that a delivery the receiver keeps failing ends
	// (failed) within seconds, and the accounting at the end can wait
	// for every delivery to finish.
	cmd := exec.Command(bin,
		"--addr", addr,
		"--public-url", "http://"+addr,
		"--clock", "real",
		"--metrics",
		"--webhook-url", hookURL,
		"--webhook-secret", secret,
		"--webhook-retry", "1s,2s,4s",
		"--log-level", "warn",
	)
	cmd.Stdout, cmd.Stderr = logs, logs
	// Its own process group, so that the terminal's ^C reaches the soak,
	// which then stops the server in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{base: "http://" + addr, cmd: cmd, logs: logs, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("paymock exited at start:\n%s", logs.String())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("paymock did not answer /healthz within 30s:\n%s", logs.String())
		}
	}
}

// stop sends SIGTERM, as docker stop does, and kills the process if it has
// not ended 20 seconds later.
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// logTail is the end of what the server logged, for a failure's report.
func (s *server) logTail() string {
	t := strings.TrimSpace(s.logs.String())
	if t == "" {
		return "(the server logged nothing at warn level or above)"
	}
	lines := strings.Split(t, "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "the server's last log lines:\n" + strings.Join(lines, "\n")
}

// freeLoopbackAddr finds a port free on 127.0.0.1 now. Another process
// could take it before paymock binds it; startServer then fails, loudly.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
