// Package pgtest gives tests a real, throwaway PostgreSQL: one cluster per
// test binary, started on first use from Debian's packages (initdb into a
// temporary folder, a free loopback port) and stopped when the binary ends,
// and a fresh database for each test that asks.
//
// A test package opts in with
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// and calls URL(t) in each test that needs a database. The environment
// steers it: PAYMOCK_POSTGRES_URL points at an existing server to use
// instead (its user must be allowed to create databases), and
// PAYMOCK_SKIP_POSTGRES=1 skips those tests on a machine without
// PostgreSQL. Without either, a missing PostgreSQL fails the test with
// the command that installs it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables that steer the package.
const (
	EnvURL  = "PAYMOCK_POSTGRES_URL"
	EnvSkip = "PAYMOCK_SKIP_POSTGRES"
)

// superuser is the role initdb creates and the tests connect as.
const superuser = "postgres"

// shared is the test binary's cluster. It is package state because its
// lifetime is the test binary's, exactly like testing.M's: URL(t) in any
// test reaches the one cluster Main stops.
var shared struct {
	mu      sync.Mutex
	main    bool // Main is running the tests, so the cluster will be stopped
	started bool
	c       *cluster
	err     error
}

// Main runs the tests of a package that uses URL, then stops the cluster
// (if a test started it) and exits with the tests' code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has more to do after the tests: it runs
// them, stops the cluster, and returns the exit code.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	c := shared.c
	shared.mu.Unlock()
	if c != nil {
		if err := c.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns the URL of a new, empty database that is dropped when t
// ends. It skips t when PAYMOCK_SKIP_POSTGRES=1.
func URL(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvSkip) == "1" {
		t.Skip(EnvSkip + "=1: skipping a test that needs PostgreSQL")
	}
	admin, err := adminURL()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connecting to the test server: %v", err)
	}
	defer conn.Close(context.Background())
	name := "pgtest_" + randomHex(8)
	// A database name cannot be a parameter; it is ours, and quoted.
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("pgtest: creating a database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: dropping %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		// FORCE: a test that failed halfway may have left connections open.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// adminURL is the URL of a database on the server that may create others:
// the environment's server, or the cluster of this binary, started now if
// it is not running yet.
func adminURL() (string, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return u, nil
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		return "", errors.New("pgtest: the test package must call pgtest.Main(m) from TestMain, so that the PostgreSQL it starts is stopped")
	}
	if !shared.started {
		shared.started = true
		shared.c, shared.err = start()
	}
	if shared.err != nil {
		return "", shared.err
	}
	return shared.c.url, nil
}

// cluster is a running server of this test binary.
type cluster struct {
	dir  string // temporary folder: data directory, socket, log
	bin  string // the folder of initdb, pg_ctl and postgres
	url  string
	root bool // running as root, so the server runs as the postgres user
	cmd  *exec.Cmd
	// exited receives the server's exit once it has ended.
	exited chan error
}

// Install is the advice given when PostgreSQL is missing.
const Install = "install it with scripts/postgres.sh (apt-get install postgresql), " +
	"or set " + EnvURL + " to a server's URL, or " + EnvSkip + "=1 to skip the tests that need it"

// binDir finds the newest installed PostgreSQL's programs: Debian keeps
// them out of PATH, under /usr/lib/postgresql/<version>/bin.
func binDir() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) > 0 {
		version := func(p string) int {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
			return n
		}
		slices.SortFunc(found, func(a, b string) int { return version(b) - version(a) })
		return filepath.Dir(found[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("pgtest: PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH): " + Install)
}

func start() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &cluster{dir: dir, bin: bin, root: os.Geteuid() == 0}
	if err := c.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A free port can be taken between finding it and the server binding
	// it: try a few.
	for attempt := 0; ; attempt++ {
		err = c.run()
		if err == nil {
			return c, nil
		}
		if attempt == 2 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// command runs one of PostgreSQL's programs, as the postgres user when we
// are root (the server refuses to run as root).
func (c *cluster) command(program string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, program)
	if c.root {
		return exec.Command("runuser", append([]string{"-u", superuser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (c *cluster) init() error {
	if c.root {
		u, err := user.Lookup(superuser)
		if err != nil {
			return fmt.Errorf("pgtest: running as root needs the %s user, which Debian's postgresql package creates: %w", superuser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	out, err := c.command("initdb", "-D", filepath.Join(c.dir, "data"), "-U", superuser,
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// run starts the server on a free loopback port and waits until it
// accepts connections.
func (c *cluster) run() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(c.dir, "postgres.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	// Durability is pointless for a database dropped at the end, and
	// costs most of the time of a test.
	cmd := c.command("postgres", "-D", filepath.Join(c.dir, "data"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", c.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	stopWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c.url = (&url.URL{Scheme: "postgres", User: url.User(superuser), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres exited: %v\n%s", err, out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.url)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			c.cmd, c.exited = cmd, exited
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("pgtest: postgres did not accept connections within 30s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the server down (fast: disconnecting any client left) and
// removes its folder.
func (c *cluster) stop() error {
	defer os.RemoveAll(c.dir)
	out, err := c.command("pg_ctl", "stop", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w").CombinedOutput()
	if err != nil {
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, strings.TrimSpace(string(out)))
	}
	<-c.exited
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
