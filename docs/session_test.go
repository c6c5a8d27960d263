//go:build unix

// A session: one bash process that runs a doc's commands in order, keeping
// variables between blocks, beside the paymock servers and receivers the
// doc starts.

package docs_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// How long the harness waits for things, bounded so a broken doc fails
// rather than hangs.
const (
	commandTimeout    = 90 * time.Second // a foreground command (go build included)
	serverWait        = 15 * time.Second // a paymock started by the doc to answer /healthz
	backgroundWait    = 90 * time.Second // a background command's first shown output (go run compiles)
	outputWait        = 10 * time.Second // shown output of a stream to appear
	retryWait         = 5 * time.Second  // a +retry command to match
	sessionCloseGrace = 5 * time.Second
)

// session runs one doc's commands.
type session struct {
	t      *testing.T
	dir    string // the scratch folder standing for the clone
	outDir string
	ports  ports
	pgURL  string // substituted for postgres:// URLs; "" when unavailable

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	n      int
	server struct {
		pid int
		log string
	}
	background    string // the output file of the last background command
	backgroundPID int    // its process group
	lastOutput    string
}

// newSession starts bash in dir with the session's environment.
func newSession(t *testing.T, h *harness, dir string, p ports, pgURL string) *session {
	t.Helper()
	s := &session{t: t, dir: dir, outDir: t.TempDir(), ports: p, pgURL: pgURL, lines: make(chan string, 16)}
	s.cmd = exec.Command("bash", "--noprofile", "--norc", "-s")
	s.cmd.Dir = dir
	s.cmd.Env = h.env(p)
	// Its own process group: closing the session ends every server and
	// receiver the doc started, go run's children included.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Commands write to their own files; what bash says of its jobs
	// ("Killed" at close) is noise.
	s.cmd.Stderr = io.Discard
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting bash: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s
}

// close stops the session's paymock and receiver and waits for their
// ports, so that the next session can take them, then ends the session's
// process group.
func (s *session) close() {
	if err := s.stopServer(); err != nil {
		s.t.Errorf("closing the session: %v", err)
	}
	if err := s.stopBackground(); err != nil {
		s.t.Errorf("closing the session: %v", err)
	}
	_ = s.stdin.Close()
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(sessionCloseGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

// send runs shell text in the session and waits for its sentinel: the
// exit status, or for a background command its pid (with group, the pid
// of a process group of its own). The command's output goes to file.
func (s *session) send(text, file string, background, group bool, timeout time.Duration) (int, error) {
	s.n++
	id := s.n
	check := exec.Command("bash", "-n")
	check.Stdin = strings.NewReader(text)
	if out, err := check.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("not valid shell: %s", out)
	}
	var script string
	switch {
	case background && group:
		// A job of its own (set -m), so that stopping it stops what it
		// started: go run's program, npm's node.
		script = fmt.Sprintf("set -m; { %s\n} >%q 2>&1 </dev/null &\n__bg=$!; set +m; echo \"@@docs-test %d $__bg\"\n", text, file, id)
	case background:
		script = fmt.Sprintf("%s >%q 2>&1 </dev/null &\necho \"@@docs-test %d $!\"\n", text, file, id)
	default:
		script = fmt.Sprintf("{ %s\n} >%q 2>&1 </dev/null; __rc=$?; echo \"@@docs-test %d $__rc\"; (exit $__rc)\n", text, file, id)
	}
	if _, err := io.WriteString(s.stdin, script); err != nil {
		return 0, fmt.Errorf("the session's shell is gone: %w", err)
	}
	prefix := fmt.Sprintf("@@docs-test %d ", id)
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return 0, fmt.Errorf("the session's shell exited")
			}
			if v, found := strings.CutPrefix(line, prefix); found {
				return strconv.Atoi(v)
			}
		case <-deadline:
			return 0, fmt.Errorf("no answer after %v", timeout)
		}
	}
}

// A command that starts paymock in the foreground, as a doc shows it in a
// terminal: env assignments, the binary (or go run of it), then serve's
// flags. Subcommands (version, report, healthcheck, help) are commands.
var startRE = regexp.MustCompile(`^((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(?:go run \./cmd/paymock|\./paymock)((?:\s+serve)?(?:\s+-[^;&|<>\n]*)?)$`)

// isStart reports whether cmd starts a paymock server.
func isStart(cmd string) bool {
	m := startRE.FindStringSubmatch(strings.TrimSpace(cmd))
	return m != nil && !strings.Contains(m[2], " -h") && !strings.Contains(m[2], "--help")
}

// rewrite maps a doc's command onto the session: its ports, and its
// PostgreSQL.
func (s *session) rewrite(cmd string) string {
	cmd = strings.NewReplacer(
		"localhost:8080", "localhost:"+strconv.Itoa(s.ports.paymock),
		"127.0.0.1:8080", "127.0.0.1:"+strconv.Itoa(s.ports.paymock),
		"localhost:9000", "localhost:"+strconv.Itoa(s.ports.hooks),
	).Replace(cmd)
	if s.pgURL != "" {
		cmd = strings.ReplaceAll(cmd, docPostgresURL, s.pgURL)
	}
	return cmd
}

// docPostgresURL is the database the docs are written with; a session's
// is a throwaway one. Other postgres:// URLs (an unreachable one) stay.
const docPostgresURL = "postgres://paymock:secret@localhost:5432/paymock"

// startServer stops the session's paymock, if any, and starts another
// with the doc's start command, then waits until it answers.
func (s *session) startServer(cmd string) (string, error) {
	if err := s.stopServer(); err != nil {
		return "", err
	}
	if err := portFreed(s.ports.paymock); err != nil {
		return "", err // another server would answer for this one
	}
	m := startRE.FindStringSubmatch(strings.TrimSpace(cmd))
	line := m[1] + "./paymock" + m[2]
	s.n++
	log := filepath.Join(s.outDir, fmt.Sprintf("server-%d.log", s.n))
	pid, err := s.send(line, log, true, false, commandTimeout)
	if err != nil {
		return "", err
	}
	s.server.pid, s.server.log = pid, log
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", s.ports.paymock)
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(serverWait)
	for time.Now().Before(deadline) {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return readFile(log), nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return readFile(log), fmt.Errorf("paymock did not answer GET /healthz within %v; its log:\n%s", serverWait, readFile(log))
}

// stopServer stops the session's paymock gracefully, as Ctrl-C would,
// and waits until its port is free.
func (s *session) stopServer() error {
	if s.server.pid == 0 {
		return nil
	}
	pid := s.server.pid
	s.server.pid = 0
	rc, err := s.send(fmt.Sprintf("kill -TERM %d 2>/dev/null; wait %d 2>/dev/null; true", pid, pid), os.DevNull, false, false, commandTimeout)
	if err != nil || rc != 0 {
		return fmt.Errorf("stopping paymock (pid %d): %v", pid, err)
	}
	return portFreed(s.ports.paymock)
}

// stopBackground stops the last background command's job, as Ctrl-C in
// its terminal would, and waits until the receiver's port is free.
func (s *session) stopBackground() error {
	if s.backgroundPID == 0 {
		return nil
	}
	pid := s.backgroundPID
	s.backgroundPID = 0
	if _, err := s.send(fmt.Sprintf("kill -TERM -- -%d 2>/dev/null; wait %d 2>/dev/null; true", pid, pid), os.DevNull, false, false, commandTimeout); err != nil {
		return err
	}
	return portFreed(s.ports.hooks)
}

// portFreed waits until nothing answers on a loopback port.
func portFreed(port int) error {
	for range 250 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err != nil {
			return nil
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("port %d still answers after its program was stopped", port)
}

// waitFor polls a stream's file until it begins with the shown output.
func (s *session) waitFor(file, want string, json bool, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		got := readFile(file)
		ok, err := matches(want, got, s.ports, json, true)
		if err != nil || ok {
			return got, err
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("after %v the output does not begin as shown", wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFile(name string) string {
	data, _ := os.ReadFile(name)
	return string(data)
}
