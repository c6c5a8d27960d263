// The test binary's shared ground: paymock built once, the npm tools
// installed once, and helpers that start a server or a tool per test.

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// skipEnv turns every test of the package into a skip, for machines
// without Node.js or time for a build.
const skipEnv = "PAYMOCK_SKIP_INTEROP"

// suite is what every test of the binary shares. It is a package variable
// because TestMain has no other way to hand the built binary to tests.
var suite struct {
	root     string // the module's root folder
	bin      string // paymock built from root
	buildErr error

	npmOnce sync.Once
	npmDir  string // where the pinned npm tools are installed
	npmErr  error
}

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	if os.Getenv(skipEnv) == "1" {
		return m.Run()
	}
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "paymock-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	suite.root = root
	suite.bin = filepath.Join(tmp, "paymock")
	build := exec.Command("go", "build", "-o", suite.bin, "./cmd/paymock")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		suite.buildErr = fmt.Errorf("go build ./cmd/paymock: %w\n%s", err, out)
	}
	return m.Run()
}

// needInterop skips the test when the package is switched off and fails it
// when paymock did not build.
func needInterop(t *testing.T) {
	t.Helper()
	if os.Getenv(skipEnv) == "1" {
		t.Skip(skipEnv + "=1: tests with third-party tools (Prism, Spectral, Redocly, oapi-codegen, openapi-typescript) are skipped")
	}
	if suite.buildErr != nil {
		t.Fatal(suite.buildErr)
	}
}

// docPath is a document of the checkout: "openapi.yaml" or
// "sandbox/openapi.yaml".
func docPath(name string) string { return filepath.Join(suite.root, filepath.FromSlash(name)) }

// server is one paymock process on a loopback port.
type server struct {
	URL  string
	logs *lockedBuffer
}

// startServer runs the built paymock in open mode on a free loopback port
// with a frozen clock, plus args, and stops it when the test ends.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	needInterop(t)
	all := append([]string{"--addr", "127.0.0.1:0", "--clock", "frozen", "--seed", "7", "--log-format", "json"}, args...)
	cmd := exec.Command(suite.bin, all...)
	cmd.Env = cleanEnv()
	logs := &lockedBuffer{}
	addr := make(chan string, 1)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start paymock: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			logs.Write(append(line, '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Addr != "" && strings.Contains(rec.Msg, "listening") {
				select {
				case addr <- rec.Addr:
				default:
				}
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("paymock log:\n%s", logs.String())
		}
	})
	select {
	case a := <-addr:
		return &server{URL: "http://" + a, logs: logs}
	case err := <-exited:
		exited <- err
		t.Fatalf("paymock exited before listening (%v):\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("paymock did not log its address within 30s:\n%s", logs.String())
	}
	return nil
}

// cleanEnv is this process's environment without PAYMOCK_ variables, so
// that a developer's settings do not change the server under test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAYMOCK_") {
			env = append(env, kv)
		}
	}
	return env
}

// call is one HTTP exchange with paymock or a tool in front of it.
type call struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with a bearer token; body is sent as is when it is a
// []byte and as JSON otherwise (nil sends none).
func do(t *testing.T, method, url, token string, body any) call {
	t.Helper()
	return doWith(t, method, url, token, body, nil)
}

// doWith is do with a chance to change the request's headers.
func doWith(t *testing.T, method, url, token string, body any, header func(http.Header)) call {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if header != nil {
		header(req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return call{status: resp.StatusCode, header: resp.Header, body: b}
}

// decode unmarshals a JSON answer or fails the test.
func decode[T any](t *testing.T, c call) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(c.body, &v); err != nil {
		t.Fatalf("answer %d is not the JSON expected: %v\n%s", c.status, err, c.body)
	}
	return v
}

// token is a bearer token of a merchant of its own in open mode, named
// after the test.
func token(t *testing.T) string {
	name := []byte(t.Name())
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	return "sk_test_interop_" + string(name)
}

// npmTool is the path of a command of the pinned npm tools, installing
// them first when the cache does not hold exactly the pinned set.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	needInterop(t)
	suite.npmOnce.Do(func() { suite.npmDir, suite.npmErr = installNPM() })
	if suite.npmErr != nil {
		t.Fatal(suite.npmErr)
	}
	p := filepath.Join(suite.npmDir, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("npm tool %s is not installed in %s: %v", name, suite.npmDir, err)
	}
	return p
}

// installNPM makes $HOME/.cache/paymock-interop hold the tools of
// testdata/npm/package.json. A lock file keeps two test binaries from
// installing at once.
func installNPM() (string, error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("npm not found: install Node.js 20 or later with npm (apt-get install nodejs npm), or set %s=1 to skip these tests", skipEnv)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(home, ".cache", "paymock-interop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", dir, err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "npm", "package.json"))
	if err != nil {
		return "", err
	}
	have, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	_, installed := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if bytes.Equal(want, have) && installed == nil {
		return dir, nil
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), want, 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		// A half-written tree must not pass for a good one next time.
		_ = os.Remove(filepath.Join(dir, "package.json"))
		return "", fmt.Errorf("npm install in %s: %w\n%s", dir, err, out)
	}
	return dir, nil
}

// process is a tool running beside the test, in a process group of its
// own so that any children it forks stop with it.
type process struct {
	logs *lockedBuffer
}

// startTool runs a tool until the test ends and waits until its output
// contains ready.
func startTool(t *testing.T, ready string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = suite.root
	cmd.Env = append(cleanEnv(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &process{logs: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(name), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(p.logs.String(), ready) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited before it was ready (%v):\n%s", filepath.Base(name), err, p.logs.String())
		case <-deadline:
			t.Fatalf("%s not ready within 60s:\n%s", filepath.Base(name), p.logs.String())
		case <-tick.C:
		}
	}
	return p
}

// runTool runs a command to its end in the module's root and returns its
// combined output; a non-zero exit fails the test with that output.
func runTool(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	out, err := runToolErr(t, timeout, suite.root, nil, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

func runToolErr(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(cleanEnv(), "NO_COLOR=1", "FORCE_COLOR=0"), env...)
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("still running after %s", timeout)
	}
	return string(out), err
}

// freePort is a loopback port nobody listens on at the moment, for tools
// that cannot be told to pick one and report it.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
