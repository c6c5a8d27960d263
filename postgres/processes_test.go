// Real paymock processes on one database: any replica serves any request,
// due work fires once whichever replica created it, and SIGKILL or a
// restart of every replica loses nothing.

package postgres_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/lifecycle"
)

// TestMain runs the package's tests on the throwaway PostgreSQL, then
// removes the paymock binary the process tests built.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the paymock binary, built once for the test binary.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// paymockBinary builds ./cmd/paymock on first use.
func paymockBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "paymock-replicas-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "paymock")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/paymock/paymock/cmd/paymock").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ./cmd/paymock: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// process is one paymock binary serving on a loopback port.
type process struct {
	replica
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{} // closed once the process has exited
	port string        // the port it listens on, when the test chose it
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProcess starts paymock on dbURL with acme's key and args, and
// waits until it listens. It is killed when t ends, if still running.
func startProcess(t *testing.T, dbURL string, args ...string) *process {
	t.Helper()
	return startWith(t, nil, append([]string{"--store", dbURL, "--api-key", testKey, "--journal-size", "0"}, args...)...)
}

// startWith starts paymock with env added to a clean PAYMOCK_* environment
// and args, listening on a free loopback port.
func startWith(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	all := append([]string{"--addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "info"}, args...)
	cmd := exec.Command(paymockBinary(t), all...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAYMOCK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	killWithParent(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.logs.Write(append(slices.Clone(line), '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "paymock listening" {
				addr <- rec.Addr
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("logs of paymock %d:\n%s", cmd.Process.Pid, p.logs.String())
		}
	})
	select {
	case a := <-addr:
		p.replica = replica{t: t, url: "http://" + a}
	case <-p.done:
		t.Fatalf("paymock exited before listening:\n%s", p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("paymock not listening after 30 s:\n%s", p.logs.String())
	}
	return p
}

// kill ends the process with SIGKILL: no shutdown, no goodbye.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends the process the way an orchestrator does, with SIGTERM.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("paymock still running 20 s after SIGTERM:\n%s", p.logs.String())
	}
}

var frozenArgs = []string{"--clock", "frozen", "--clock-start", testStart.Format(time.RFC3339)}

func TestProcesses_AnyReplicaServesAnyRequest(t *testing.T) {
	db := pgtest.URL(t)
	a, b := startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...)
	id := a.create(3600, nil)
	if s := b.status(id); s != "pending" {
		t.Errorf("retrieve on B: %s", s)
	}
	st, list := b.call("GET", "/api/v1/payments", nil)
	if st != http.StatusOK || len(list["items"].([]any)) != 1 || list["items"].([]any)[0].(map[string]any)["id"] != id {
		t.Errorf("list on B: %d %v", st, list)
	}
	st, page := b.raw("GET", "/checkout/"+id, nil)
	if st != http.StatusOK || !strings.Contains(string(page), "Order 1") {
		t.Errorf("checkout page on B: %d\n%s", st, page)
	}
	if st, p := b.call("POST", "/_sandbox/payments/"+id+"/complete", nil); st != http.StatusOK || p["status"] != "completed" {
		t.Errorf("complete on B: %d %v", st, p)
	}
	if s := a.status(id); s != "completed" {
		t.Errorf("on A after completing on B: %s", s)
	}
	if st, _ := a.call("POST", "/_sandbox/payments/"+id+"/fail", nil); st != http.StatusConflict {
		t.Errorf("fail on A after completing on B: %d, want 409", st)
	}
}

func TestProcesses_FrozenAdvanceOnAnotherReplicaExpiresOnce(t *testing.T) {
	db := pgtest.URL(t)
	rs := []*process{startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...)}
	id := rs[0].create(60, nil)
	body := rs[1].advance(61)
	if body["now"] != "2026-03-14T15:10:27Z" || body["fired"] != 1.0 {
		t.Errorf("advance on B answered %v", body)
	}
	for _, r := range rs {
		if s := r.status(id); s != "expired" {
			t.Errorf("on %s: %s", r.url, s)
		}
		if c := r.clock(); c != "2026-03-14T15:10:27Z" {
			t.Errorf("clock on %s: %s", r.url, c)
		}
	}
	// Advancing again anywhere fires nothing more.
	rs[2].advance(60)
	if n := eventsOn(replicas(rs), "payment.expired"); n != 1 {
		t.Errorf("%d payment.expired events across the replicas, want 1", n)
	}
}

func replicas(ps []*process) []replica {
	out := make([]replica, len(ps))
	for i, p := range ps {
		out[i] = p.replica
	}
	return out
}

// waitStatus polls r until the payment has status want or deadline.
func waitStatus(t *testing.T, r replica, id, want string, deadline time.Time) {
	t.Helper()
	for {
		s := r.status(id)
		if s == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s is %s at %s, want %s", id, s, time.Now().Format(time.RFC3339Nano), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestProcesses_AKilledReplicasPaymentExpiresOnTimeOnAnother(t *testing.T) {
	db := pgtest.URL(t)
	a, b := startProcess(t, db), startProcess(t, db)
	id := a.create(2, nil)
	a.kill()
	_, p := b.call("GET", "/api/v1/payments/"+id, nil)
	expires, err := time.Parse(time.RFC3339, p["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// On time: within a sweep interval of its expiry, and some slack for
	// a busy machine.
	waitStatus(t, b.replica, id, "expired", expires.Add(lifecycle.SweepInterval+2*time.Second))
	if n := b.events("payment.expired"); n != 1 {
		t.Errorf("%d payment.expired events on B, want 1", n)
	}
}

// burstUntil waits until count, read under mu, reaches n, or a minute:
// a burst is killed once it has answered some requests, not after a fixed
// time, since on a loaded machine the first ones can take longer than any
// sleep chosen here. The caller's own check says if the burst never ran.
func burstUntil(mu *sync.Mutex, n int, count func() int) {
	for started := time.Now(); time.Since(started) < time.Minute; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		c := count()
		mu.Unlock()
		if c >= n {
			return
		}
	}
}

func TestProcesses_SIGKILLDuringABurstLosesNoAnsweredWrite(t *testing.T) {
	db := pgtest.URL(t)
	a, b := startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...)
	var mu sync.Mutex
	// A completion sent when A died may or may not have been applied;
	// one that was answered must have been.
	var created, completed, unanswered []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st, p := a.call("POST", "/api/v1/payments", createBody(3600, nil))
				if st != http.StatusCreated {
					return // A is gone
				}
				id := p["id"].(string)
				mu.Lock()
				created = append(created, id)
				mu.Unlock()
				if i%2 == 0 {
					if st, _ := a.call("POST", "/_sandbox/payments/"+id+"/complete", nil); st != http.StatusOK {
						mu.Lock()
						unanswered = append(unanswered, id)
						mu.Unlock()
						return
					}
					mu.Lock()
					completed = append(completed, id)
					mu.Unlock()
				}
			}
		})
	}
	burstUntil(&mu, 20, func() int { return len(created) })
	a.kill()
	close(stop)
	wg.Wait()
	if len(created) < 10 {
		t.Fatalf("only %d creates answered before the kill: the burst did not run", len(created))
	}
	for _, id := range created {
		want := "pending"
		if slices.Contains(completed, id) {
			want = "completed"
		}
		s := b.status(id)
		if s != want && !(slices.Contains(unanswered, id) && s == "completed") {
			t.Errorf("payment %s answered on A is %s on B, want %s", id, s, want)
		}
	}
	st, list := b.call("GET", "/api/v1/payments?per_page=1", nil)
	if total := list["pagination"].(map[string]any)["total_items"].(float64); st != http.StatusOK || int(total) < len(created) {
		t.Errorf("B lists %v payments, A answered %d creates", total, len(created))
	}
	t.Logf("%d creates and %d completions answered before SIGKILL", len(created), len(completed))
}

func TestProcesses_RestartingEveryReplicaKeepsClocksAndExpiries(t *testing.T) {
	t.Run("frozen clocks keep their time", func(t *testing.T) {
		db := pgtest.URL(t)
		a, b := startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...)
		id := a.create(120, nil)
		b.advance(30)
		a.stop(t)
		b.stop(t)
		a, b = startProcess(t, db, frozenArgs...), startProcess(t, db, frozenArgs...)
		if c := a.clock(); c != "2026-03-14T15:09:56Z" {
			t.Errorf("clock after a restart: %s, want the 30 s advanced before", c)
		}
		b.advance(89)
		if s := a.status(id); s != "pending" {
			t.Fatalf("a second before its expiry: %s", s)
		}
		if body := b.advance(1); body["fired"] != 1.0 {
			t.Errorf("advance past the expiry answered %v", body)
		}
		if s := a.status(id); s != "expired" {
			t.Errorf("after its expiry: %s", s)
		}
	})
	t.Run("real clocks keep their offsets and expire what fell due meanwhile", func(t *testing.T) {
		db := pgtest.URL(t)
		a, b := startProcess(t, db), startProcess(t, db)
		a.advance(3600)
		id := a.create(3, nil)
		later := b.create(3600, nil)
		a.stop(t)
		b.stop(t)
		time.Sleep(3 * time.Second) // the expiry passes with no replica running
		a, b = startProcess(t, db), startProcess(t, db)
		waitStatus(t, b.replica, id, "expired", time.Now().Add(lifecycle.SweepInterval+2*time.Second))
		_, p := a.call("GET", "/api/v1/payments/"+id, nil)
		if p["updated_at"] != p["expires_at"] {
			t.Errorf("expired at %v, expires_at %v: the sweep stamps the due instant", p["updated_at"], p["expires_at"])
		}
		if s := a.status(later); s != "pending" {
			t.Errorf("a payment not yet due: %s", s)
		}
		got, err := time.Parse(time.RFC3339, a.clock())
		if want := time.Now().Add(time.Hour); err != nil || got.Before(want.Add(-5*time.Second)) || got.After(want.Add(5*time.Second)) {
			t.Errorf("clock after a restart: %v, want about %v (an hour ahead)", got, want)
		}
	})
}
