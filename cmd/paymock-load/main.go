// Command paymock-load is the project's load benchmark: it drives a running
// paymock on this machine with a mix of creates, lists and retrieves from a
// few concurrent clients, for a bounded time and request count, and prints
// throughput and latency percentiles per operation.
//
//	go run ./cmd/paymock-load --url http://127.0.0.1:8080 --clients 8 --duration 10s
//
// With --compare it measures paymock against a bare net/http handler,
// in a process of its own as paymock is, that answers the very bytes
// paymock answered a create and a retrieve (captured at start), in the
// same session, with the same clients and the same time each, and prints
// the ratio: a noisy machine slows both alike. --only create sends nothing but creates (to fill a
// store). The start command times exec to the first healthy answer of a
// command against a baseline command, the same way. The webhooks command
// times a completed payment's signed webhook, from the complete call to a
// receiver in this process having verified it.
//
// It only ever targets loopback addresses: a load test is not to leave the
// machine.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paymock-load:", err)
		os.Exit(1)
	}
}

type config struct {
	base        string
	clients     int
	duration    time.Duration
	maxRequests int
	key         string
	compare     bool
	// bareHere serves the baseline in this process, as the comparison
	// did before it had a process of its own (see startBare).
	bareHere bool
	only     string // "" for the mix, or "create"
}

func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("paymock-load", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.base, "url", "http://127.0.0.1:8080", "paymock base URL (loopback only)")
	fs.IntVar(&c.clients, "clients", 8, "concurrent clients")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to run (at most 5m)")
	fs.IntVar(&c.maxRequests, "max-requests", 1_000_000, "stop after this many requests")
	fs.StringVar(&c.key, "api-key", "sk_test_load", "bearer key (open mode accepts any)")
	fs.BoolVar(&c.compare, "compare", false, "measure create and retrieve against a bare net/http baseline; --duration is split between the four runs")
	fs.BoolVar(&c.bareHere, "bare-in-process", false, "with --compare, serve the baseline in this process rather than in a process of its own")
	fs.StringVar(&c.only, "only", "", `"create" sends only creates`)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.only != "" && c.only != "create" {
		return c, fmt.Errorf("--only %q: the only choice is create", c.only)
	}
	if err := loopbackURL(c.base); err != nil {
		return c, err
	}
	if c.clients < 1 || c.clients > 256 || c.duration <= 0 || c.duration > 5*time.Minute || c.maxRequests < 1 {
		return c, errors.New("want 1..256 clients, a duration up to 5m and a positive --max-requests")
	}
	return c, nil
}

const createBody = `{"amount":10.50,"currency":"USD","customer":{"email":"load@example.com","name":"Load Test"},` +
	`"description":"load","expires_in":3600,"metadata":{"k":"v"},` +
	`"success_url":"https://shop.example.com/ok","cancel_url":"https://shop.example.com/no","mcc":5732}`

// sample is one request's operation, latency and whether it got the
// status it should have.
type sample struct {
	op  string
	d   time.Duration
	bad bool
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "start" {
		return runStart(ctx, args[1:], out)
	}
	if len(args) > 0 && args[0] == "webhooks" {
		return runHooks(ctx, args[1:], out)
	}
	if len(args) > 0 && args[0] == bareCommand {
		if len(args) == 3 && args[1] == "--from" {
			return serveBareFrom(ctx, args[2], out)
		}
		return serveBare(ctx, os.Stdin, out)
	}
	c, err := parse(args)
	if err != nil {
		return err
	}
	if c.compare {
		return runCompare(ctx, c, out)
	}
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	client := newClient(c.clients)
	call := func(method, path, body string, want int) (time.Duration, []byte, bool) {
		d, b, status, err := do(ctx, client, c.base, c.key, method, path, body)
		return d, b, err != nil || status != want
	}

	var mu sync.Mutex
	var samples []sample
	budget := make(chan struct{}, c.maxRequests)
	for range c.maxRequests {
		budget <- struct{}{}
	}
	close(budget)
	start := time.Now()
	var wg sync.WaitGroup
	for range c.clients {
		wg.Go(func() {
			var ids []string
			var local []sample
			for i := 0; ; i++ {
				if _, ok := <-budget; !ok || ctx.Err() != nil {
					break
				}
				var s sample
				switch {
				case i%4 == 0 || len(ids) == 0 || c.only == "create":
					d, b, bad := call("POST", "/api/v1/payments", createBody, http.StatusCreated)
					var p struct{ ID string }
					if json.Unmarshal(b, &p) == nil && p.ID != "" {
						ids = append(ids, p.ID)
					}
					s = sample{"create", d, bad}
				case i%4 == 1:
					d, _, bad := call("GET", "/api/v1/payments?per_page=10", "", http.StatusOK)
					s = sample{"list", d, bad}
				default:
					d, _, bad := call("GET", "/api/v1/payments/"+ids[i%len(ids)], "", http.StatusOK)
					s = sample{"retrieve", d, bad}
				}
				if ctx.Err() != nil { // cut short by the deadline: not a sample
					break
				}
				local = append(local, s)
			}
			mu.Lock()
			samples = append(samples, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	return report(out, samples, elapsed, c.clients)
}

// newClient is an HTTP client keeping a connection per load client.
func newClient(clients int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 10 * time.Second}
}

// do sends one request and reads the whole answer.
func do(ctx context.Context, client *http.Client, base, key, method, path, body string) (time.Duration, []byte, int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Since(start), nil, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return time.Since(start), b, resp.StatusCode, err
}

func report(out io.Writer, samples []sample, elapsed time.Duration, clients int) error {
	byOp := map[string][]time.Duration{}
	bad := map[string]int{}
	for _, s := range samples {
		byOp[s.op] = append(byOp[s.op], s.d)
		if s.bad {
			bad[s.op]++
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d requests in %s from %d clients: %.0f req/s\n", len(samples), elapsed.Round(time.Millisecond), clients,
		float64(len(samples))/elapsed.Seconds())
	fmt.Fprintln(tw, "op\tcount\treq/s\tp50\tp90\tp99\tmax\tbad")
	for _, op := range []string{"create", "list", "retrieve"} {
		ds := byOp[op]
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		q := func(p float64) time.Duration {
			return ds[min(len(ds)-1, int(p*float64(len(ds))))].Round(time.Microsecond)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\n", op, len(ds), float64(len(ds))/elapsed.Seconds(),
			q(0.5), q(0.9), q(0.99), ds[len(ds)-1].Round(time.Microsecond), bad[op])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for op, n := range bad {
		if n > 0 {
			return fmt.Errorf("%d %s requests got an unexpected answer", n, op)
		}
	}
	return nil
}
