// The baseline: paymock measured against a bare net/http handler that
// answers the very bytes paymock answered, in one session.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// canned is one answer captured from paymock, replayed by the baseline.
type canned struct {
	status int
	header http.Header
	body   []byte
}

// capture asks paymock for one create and one retrieve and keeps their
// answers, headers and all.
func capture(ctx context.Context, client *http.Client, c config) (create, retrieve canned, err error) {
	get := func(method, path, body string, want int) (canned, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
		if err != nil {
			return canned{}, err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return canned{}, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return canned{}, err
		}
		if resp.StatusCode != want {
			return canned{}, fmt.Errorf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
		h := resp.Header.Clone()
		h.Del("Date")
		h.Del("Content-Length")
		return canned{status: resp.StatusCode, header: h, body: b}, nil
	}
	if create, err = get(http.MethodPost, "/api/v1/payments", createBody, http.StatusCreated); err != nil {
		return
	}
	var p struct{ ID string }
	if err = json.Unmarshal(create.body, &p); err != nil || p.ID == "" {
		return create, retrieve, fmt.Errorf("create answered no payment id: %s", create.body)
	}
	retrieve, err = get(http.MethodGet, "/api/v1/payments/"+p.ID, "", http.StatusOK)
	return
}

// bareHandler answers a create and a retrieve with the captured bytes
// and nothing else: what net/http alone costs for the same exchange. It
// reads the request body, as any server must.
func bareHandler(create, retrieve canned) http.Handler {
	answer := func(w http.ResponseWriter, a canned) {
		h := w.Header()
		for k, v := range a.header {
			h[k] = v
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/payments":
			answer(w, create)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/payments/"):
			answer(w, retrieve)
		default:
			http.NotFound(w, r)
		}
	})
}

// result is one timed run of one operation against one target.
type result struct {
	lat     []time.Duration // sorted
	elapsed time.Duration
	bad     int
}

func (r result) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

func (r result) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))].Round(time.Microsecond)
}

// drive runs send from c.clients goroutines for d or c.maxRequests
// requests, whichever ends first. send returns the latency and whether the
// answer was the expected one.
func drive(ctx context.Context, c config, d time.Duration, send func(ctx context.Context, i int) (time.Duration, bool)) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var n atomic.Int64
	var mu sync.Mutex
	var res result
	start := time.Now()
	var wg sync.WaitGroup
	for range c.clients {
		wg.Go(func() {
			var local []time.Duration
			bad := 0
			for {
				i := int(n.Add(1))
				if i > c.maxRequests || ctx.Err() != nil {
					break
				}
				lat, ok := send(ctx, i)
				if ctx.Err() != nil {
					break // cut short by the deadline: not a sample
				}
				local = append(local, lat)
				if !ok {
					bad++
				}
			}
			mu.Lock()
			res.lat = append(res.lat, local...)
			res.bad += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.lat)
	return res
}

// runCompare measures create and retrieve against paymock and against the
// bare baseline, each for a quarter of the duration, and prints the ratios.
func runCompare(ctx context.Context, c config, out io.Writer) error {
	client := newClient(c.clients)
	create, retrieve, err := capture(ctx, client, c)
	if err != nil {
		return fmt.Errorf("capture paymock's answers: %w", err)
	}
	var bareURL string
	if c.bareHere {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		bare := &http.Server{Handler: bareHandler(create, retrieve), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = bare.Serve(ln) }()
		defer bare.Close()
		bareURL = "http://" + ln.Addr().String()
	} else {
		addr, stop, err := startBare(create, retrieve)
		if err != nil {
			return fmt.Errorf("start the baseline: %w", err)
		}
		defer stop()
		bareURL = "http://" + addr
	}

	each := c.duration / 4
	var idsMu sync.Mutex
	var ids []string
	creates := func(base string, keep bool) func(context.Context, int) (time.Duration, bool) {
		return func(ctx context.Context, _ int) (time.Duration, bool) {
			d, b, status, err := do(ctx, client, base, c.key, http.MethodPost, "/api/v1/payments", createBody)
			if err == nil && status == http.StatusCreated {
				// The baseline's answers are read as paymock's are, so that
				// the client's work is the same on both sides of the ratio.
				var p struct{ ID string }
				if json.Unmarshal(b, &p) == nil && keep {
					idsMu.Lock()
					ids = append(ids, p.ID)
					idsMu.Unlock()
				}
			}
			return d, err == nil && status == http.StatusCreated
		}
	}
	retrieves := func(base string) func(context.Context, int) (time.Duration, bool) {
		return func(ctx context.Context, i int) (time.Duration, bool) {
			d, _, status, err := do(ctx, client, base, c.key, http.MethodGet, "/api/v1/payments/"+ids[i%len(ids)], "")
			return d, err == nil && status == http.StatusOK
		}
	}
	type row struct {
		op            string
		paymock, bare result
	}
	var rows []row
	pc := drive(ctx, c, each, creates(c.base, true))
	bc := drive(ctx, c, each, creates(bareURL, false))
	rows = append(rows, row{"create", pc, bc})
	if len(ids) == 0 {
		return errors.New("no payment was created: nothing to retrieve")
	}
	pr := drive(ctx, c, each, retrieves(c.base))
	br := drive(ctx, c, each, retrieves(bareURL))
	rows = append(rows, row{"retrieve", pr, br})
	if err := ctx.Err(); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "paymock against a bare net/http handler answering the same bytes: %d clients, %s per run, loopback\n",
		c.clients, each.Round(time.Millisecond))
	fmt.Fprintln(tw, "op\tpaymock req/s\tp50\tp99\tbare req/s\tp50\tp99\tratio")
	var bad []string
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%.0f\t%s\t%s\t%.2fx\n", r.op,
			r.paymock.rate(), r.paymock.quantile(0.5), r.paymock.quantile(0.99),
			r.bare.rate(), r.bare.quantile(0.5), r.bare.quantile(0.99), r.paymock.rate()/r.bare.rate())
		if r.paymock.bad+r.bare.bad > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d from paymock, %d from the baseline", r.op, r.paymock.bad, r.bare.bad))
		}
		if len(r.paymock.lat) == 0 || len(r.bare.lat) == 0 {
			bad = append(bad, r.op+": a run made no request")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("unexpected answers: %s", strings.Join(bad, "; "))
	}
	return nil
}
