// Start timing: exec to the first healthy answer of a server, against a
// baseline server timed the same way, runs alternating.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// startConfig is what the start command is told.
type startConfig struct {
	cmd, baseline []string
	runs          int
	timeout       time.Duration
}

func parseStart(args []string) (startConfig, error) {
	fs := flag.NewFlagSet("paymock-load start", flag.ContinueOnError)
	var cmd, base string
	var c startConfig
	fs.StringVar(&cmd, "cmd", "", `the server to time, with {addr} where its listen address goes, e.g. "./paymock --addr {addr}"`)
	fs.StringVar(&base, "baseline", "", "the baseline server, the same way")
	fs.IntVar(&c.runs, "runs", 10, "runs of each (1..100)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "longest wait for one healthy answer")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.cmd, c.baseline = strings.Fields(cmd), strings.Fields(base)
	if len(c.cmd) == 0 || len(c.baseline) == 0 || !strings.Contains(cmd, "{addr}") || !strings.Contains(base, "{addr}") {
		return c, errors.New("want --cmd and --baseline, each with {addr}")
	}
	if c.runs < 1 || c.runs > 100 || c.timeout <= 0 || c.timeout > time.Minute {
		return c, errors.New("want 1..100 --runs and a --timeout up to 1m")
	}
	return c, nil
}

// runStart times both commands, alternating, and prints the median and
// the best of each and the difference of the medians.
func runStart(ctx context.Context, args []string, out io.Writer) error {
	c, err := parseStart(args)
	if err != nil {
		return err
	}
	var got, base []time.Duration
	for range c.runs {
		d, err := timeStart(ctx, c.cmd, c.timeout)
		if err != nil {
			return fmt.Errorf("%s: %w", c.cmd[0], err)
		}
		got = append(got, d)
		if d, err = timeStart(ctx, c.baseline, c.timeout); err != nil {
			return fmt.Errorf("%s: %w", c.baseline[0], err)
		}
		base = append(base, d)
	}
	slices.Sort(got)
	slices.Sort(base)
	med := func(ds []time.Duration) time.Duration { return ds[len(ds)/2] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	fmt.Fprintf(out, "exec to first healthy 200, %d runs each: %s median %s (best %s), baseline %s median %s (best %s): +%s\n",
		c.runs, c.cmd[0], ms(med(got)), ms(got[0]), c.baseline[0], ms(med(base)), ms(base[0]), ms(med(got)-med(base)))
	return nil
}

// timeStart starts argv on a free loopback port and times exec to its
// first 200 on /healthz, then stops it.
func timeStart(ctx context.Context, argv []string, timeout time.Duration) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = strings.ReplaceAll(a, "{addr}", addr)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.Env = os.Environ()
	// A fresh connection per probe: a kept-alive one would not show when
	// the server starts answering.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	url := "http://" + addr + "/healthz"
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	deadline := start.Add(timeout)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return 0, fmt.Errorf("no healthy answer on %s within %s", addr, timeout)
}
