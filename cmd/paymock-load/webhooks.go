// Webhook latency: complete a payment through the control API and time
// until a receiver in this process has verified its signed delivery, one
// payment at a time, with paymock in a process of its own.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// hooksConfig is what the webhooks command is told.
type hooksConfig struct {
	base       string
	key        string
	deliveries int
	warmup     int
	serverPID  int // 0: the server's CPU is not reported
	timeout    time.Duration
	gc         bool // keep this process's own garbage collector on
}

func parseHooks(args []string) (hooksConfig, error) {
	fs := flag.NewFlagSet("paymock-load webhooks", flag.ContinueOnError)
	var c hooksConfig
	fs.StringVar(&c.base, "url", "http://127.0.0.1:8080", "paymock base URL (loopback only)")
	fs.StringVar(&c.key, "api-key", "sk_test_webhooks", "bearer key of the merchant (open mode accepts any)")
	fs.IntVar(&c.deliveries, "deliveries", 2000, "deliveries timed (1..100000)")
	fs.IntVar(&c.warmup, "warmup", 50, "deliveries made first and not timed")
	fs.IntVar(&c.serverPID, "server-pid", 0, "pid of the paymock process, to report its CPU time per delivery")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "longest wait for one delivery")
	fs.BoolVar(&c.gc, "measurer-gc", false, "keep this process's garbage collector on during the timed run (default off; see docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := loopbackURL(c.base); err != nil {
		return c, err
	}
	if c.deliveries < 1 || c.deliveries > 100000 || c.warmup < 0 || c.warmup > 10000 || c.timeout <= 0 || c.timeout > time.Minute {
		return c, errors.New("want 1..100000 --deliveries, 0..10000 --warmup and a --timeout up to 1m")
	}
	return c, nil
}

// loopbackURL refuses a base URL off this machine.
func loopbackURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--url %q: want an absolute URL", base)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--url %q: only loopback targets (127.0.0.0/8, ::1, localhost)", base)
	}
	return nil
}

// verified is what the receiver tells the timing loop of one delivery.
type verified struct {
	at  time.Time // when the signature had been checked
	err error     // the delivery did not verify, or is not the payment's
}

// hookReceiver is the webhook endpoint: it verifies every delivery with
// the Standard Webhooks reference library and tells the loop when. It
// reads into one reused buffer, as the deliveries come one at a time, so
// that its own garbage adds little to the process it measures from.
type hookReceiver struct {
	wh   atomic.Pointer[standardwebhooks.Webhook]
	want atomic.Pointer[[]byte] // the payment id the next delivery is of
	got  chan verified

	mu  sync.Mutex
	buf []byte
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	body, err := readInto(h.buf[:0], r.Body)
	h.buf = body[:0]
	if err != nil {
		http.Error(w, "body not read", http.StatusBadRequest)
		return
	}
	wh := h.wh.Load()
	if wh == nil {
		w.WriteHeader(http.StatusNoContent) // the endpoint's test before the secret is known
		return
	}
	err = wh.Verify(body, r.Header)
	at := time.Now()
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		h.tell(verified{at, fmt.Errorf("delivery does not verify: %w", err)})
		return
	}
	w.WriteHeader(http.StatusNoContent)
	if want := h.want.Load(); want == nil || !bytes.Contains(body, *want) {
		h.tell(verified{at, fmt.Errorf("delivery of another payment: %.200s", body)})
		return
	}
	h.tell(verified{at: at})
}

// tell never blocks the receiver: a delivery nobody waits for (a
// duplicate, a late retry) is reported by the next wait, not here.
func (h *hookReceiver) tell(v verified) {
	select {
	case h.got <- v:
	default:
	}
}

// readInto appends all of r to buf.
func readInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4096)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// runHooks registers a receiver of this process as the merchant's webhook
// endpoint, creates the payments, then completes them one at a time and
// times each until its delivery is verified.
func runHooks(ctx context.Context, args []string, out io.Writer) error {
	c, err := parseHooks(args)
	if err != nil {
		return err
	}
	h := &hookReceiver{got: make(chan verified, 1), buf: make([]byte, 0, 8192)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: c.timeout}
	call := func(method, path, body string, want int) ([]byte, error) {
		_, b, status, err := do(ctx, client, c.base, c.key, method, path, body)
		if err == nil && status != want {
			err = fmt.Errorf("%s %s: %d %.300s", method, path, status, b)
		}
		return b, err
	}
	b, err := call("POST", "/_sandbox/webhook-endpoints", `{"url":"http://`+ln.Addr().String()+`/hooks"}`, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("register the receiver: %w", err)
	}
	var ep struct{ Secret string }
	if err := json.Unmarshal(b, &ep); err != nil || ep.Secret == "" {
		return fmt.Errorf("register the receiver: no secret in %.300s", b)
	}
	wh, err := standardwebhooks.NewWebhook(ep.Secret)
	if err != nil {
		return fmt.Errorf("the endpoint's secret: %w", err)
	}
	h.wh.Store(wh)

	ids := make([][]byte, c.warmup+c.deliveries)
	for i := range ids {
		b, err := call("POST", "/api/v1/payments", createBody, http.StatusCreated)
		if err != nil {
			return err
		}
		var p struct{ ID string }
		if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
			return fmt.Errorf("create: no id in %.300s", b)
		}
		ids[i] = []byte(`"id":"` + p.ID + `"`)
	}

	// One payment's round: the complete call and its delivery. The
	// answer is read whole and its status checked; the delivery's time
	// ends when the receiver has verified it.
	round := func(i int) (lat, answer time.Duration, err error) {
		h.want.Store(&ids[i])
		id := string(ids[i][6 : len(ids[i])-1])
		start := time.Now()
		if _, err := call("POST", "/_sandbox/payments/"+id+"/complete", "", http.StatusOK); err != nil {
			return 0, 0, err
		}
		answer = time.Since(start)
		t := time.NewTimer(c.timeout)
		defer t.Stop()
		select {
		case v := <-h.got:
			return v.at.Sub(start), answer, v.err
		case <-t.C:
			return 0, 0, fmt.Errorf("no delivery for %s within %s", id, c.timeout)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	for i := range c.warmup {
		if _, _, err := round(i); err != nil {
			return err
		}
	}

	// The timed run. This process's collector is off unless asked for:
	// its work (marking on the cores paymock runs on) is the measurer's,
	// not paymock's, and what the run allocates (about 11 kB a delivery)
	// fits in memory; the limit is a guard, not a setting the run reaches.
	if !c.gc {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
		prefault(min(c.deliveries*16<<10, 256<<20))
	}
	gcs := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(gcs)
	gc0, heap0 := gcs[0].Value.Uint64(), gcs[1].Value.Uint64()
	cpu0, sw0, flt0 := processCPU(c.serverPID), processSwitches(c.serverPID), processFaults(c.serverPID)
	srv0, srvOK0 := serverGC(ctx, client, c.base)
	own0, faults0 := selfUsage()
	lats := make([]time.Duration, 0, c.deliveries)
	answers := make([]time.Duration, 0, c.deliveries)
	start := time.Now()
	for i := c.warmup; i < len(ids); i++ {
		lat, answer, err := round(i)
		if err != nil {
			return err
		}
		lats, answers = append(lats, lat), append(answers, answer)
	}
	elapsed := time.Since(start)
	cpu1, sw1, flt1 := processCPU(c.serverPID), processSwitches(c.serverPID), processFaults(c.serverPID)
	srv1, srvOK1 := serverGC(ctx, client, c.base)
	own1, faults1 := selfUsage()
	metrics.Read(gcs)
	return reportHooks(out, hooksReport{lats: lats, answers: answers, elapsed: elapsed,
		serverCPU: cpu1 - cpu0, ownCPU: own1 - own0, serverPID: c.serverPID, switches: sw1 - sw0, gcs: gcs[0].Value.Uint64() - gc0,
		allocated: gcs[1].Value.Uint64() - heap0, faults: faults1 - faults0, serverFaults: flt1 - flt0,
		serverGC: serverGCRun{cycles: srv1.cycles - srv0.cycles, allocated: srv1.allocated - srv0.allocated}, serverGCKnown: srvOK0 && srvOK1})
}

type hooksReport struct {
	lats, answers     []time.Duration
	elapsed           time.Duration
	serverCPU, ownCPU time.Duration
	serverPID         int
	switches          int64  // the server's threads' context switches
	gcs               uint64 // this process's collections during the timed run
	allocated         uint64 // bytes this process allocated during it
	faults            int64  // and its page faults
	serverFaults      int64  // the server's page faults
	serverGC          serverGCRun
	serverGCKnown     bool // the server's /metrics answered before and after
}

func reportHooks(out io.Writer, r hooksReport) error {
	n := len(r.lats)
	slices.Sort(r.lats)
	slices.Sort(r.answers)
	q := func(ds []time.Duration, p int) string {
		return strconv.FormatInt(ds[min(len(ds)-1, len(ds)*p/100)].Microseconds(), 10) + "µs"
	}
	per := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds()/int64(n), 10) + "µs" }
	fmt.Fprintf(out, "complete -> verified webhook, %d deliveries one at a time in %s: p50 %s p90 %s p99 %s max %s; answer p50 %s p99 %s\n",
		n, r.elapsed.Round(time.Millisecond), q(r.lats, 50), q(r.lats, 90), q(r.lats, 99), q(r.lats, 100), q(r.answers, 50), q(r.answers, 99))
	server := "not measured (--server-pid)"
	if r.serverPID > 0 {
		server = per(r.serverCPU)
	}
	fmt.Fprintf(out, "CPU per delivery (complete call and its delivery): paymock %s, measurer %s; measurer allocated %d B a delivery, page faults %d, collections during the run: %d\n",
		server, per(r.ownCPU), r.allocated/uint64(n), r.faults, r.gcs)
	if r.serverPID > 0 {
		// Each is a thread put to sleep or woken, which on a virtual
		// machine costs more than most of a round's own work.
		fmt.Fprintf(out, "paymock's threads: %.1f context switches a delivery; paymock's page faults: %.1f a delivery\n",
			float64(r.switches)/float64(n), float64(r.serverFaults)/float64(n))
	}
	if r.serverGCKnown {
		// Its collections are the tail's first suspect: a delivery
		// beside one waits for the marking's share of the cores.
		fmt.Fprintf(out, "paymock's collections during the run: %d; paymock allocated %d B a delivery\n",
			r.serverGC.cycles, r.serverGC.allocated/uint64(n))
	}
	return nil
}

// prefault has the heap take n bytes of memory from the system and
// touch them, then frees them: with the collector off, the timed run's
// allocations then reuse pages already mapped, rather than each fault a
// fresh page in (which on a virtual machine costs more CPU than the
// collection it replaces).
func prefault(n int) {
	const page = 4096
	chunks := make([][]byte, 0, n/(64<<10)+1)
	for len(chunks)*(64<<10) < n {
		b := make([]byte, 64<<10) // small enough to be reused by small objects' spans
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		chunks = append(chunks, b)
	}
	chunks = nil
	runtime.GC() // frees them; with no scavenging goal the pages stay mapped
}

// processCPU is a process's user and system time so far, from
// /proc/<pid>/stat; 0 without a pid or on a system without /proc.
func processCPU(pid int) time.Duration {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// procStat is the fields of /proc/<pid>/stat after the command name,
// from the state (field 3) on; nil without a pid or on a system without
// /proc.
func procStat(pid int) []string {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name, field 2, may hold spaces: count from its ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// processSwitches is the context switches, voluntary or not, of a
// process's threads so far, from /proc/<pid>/task/*/status; 0 without a
// pid or on a system without /proc. A thread that has exited is not
// counted; the Go runtime keeps its threads.
func processSwitches(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/status")
		if err != nil {
			continue // exited since the listing
		}
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// processFaults is a process's minor page faults so far (a page mapped
// in, no disk read), from /proc/<pid>/stat; 0 without a pid or on a
// system without /proc. On a virtual machine each costs tens of
// microseconds, so a heap that grows into fresh pages is slower than one
// that reuses its own.
func processFaults(pid int) int64 {
	f := procStat(pid)
	if len(f) < 8 {
		return 0
	}
	n, _ := strconv.ParseInt(f[7], 10, 64)
	return n
}

// serverGCRun is what paymock's /metrics says of its collector.
type serverGCRun struct {
	cycles    uint64 // collections completed
	allocated uint64 // bytes allocated on the heap
}

// serverGC reads paymock's collections and bytes allocated so far from
// its /metrics; false when it does not serve them (--metrics=false).
func serverGC(ctx context.Context, client *http.Client, base string) (serverGCRun, bool) {
	_, b, status, err := do(ctx, client, base, "", "GET", "/metrics", "")
	if err != nil || status != http.StatusOK {
		return serverGCRun{}, false
	}
	var r serverGCRun
	var found int
	for line := range strings.Lines(string(b)) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		var dst *uint64
		switch name {
		case "go_gc_duration_seconds_count":
			dst = &r.cycles
		case "go_memstats_alloc_bytes_total":
			dst = &r.allocated
		default:
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return serverGCRun{}, false
		}
		*dst = uint64(f)
		found++
	}
	return r, found == 2
}

// selfUsage is this process's user and system time so far, and its
// page faults (minor: a page mapped in, no disk read).
func selfUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}
