// Command paymock-soak runs one paymock server the way a fleet of CI jobs
// uses a shared sandbox, for a bounded time, and says whether it held up.
//
//	go build -o /tmp/paymock ./cmd/paymock
//	go run ./cmd/paymock-soak --paymock /tmp/paymock --minutes 10
//
// It starts the binary on a loopback port (real clock, metrics on, every
// merchant's webhooks going to a receiver of its own that verifies each
// signature and fails about a third of the deliveries), then drives it
// with many open-mode merchants that create payments and complete, fail or
// let them expire, each resetting its sandbox every few hundred payments.
// Every minute it prints, from /metrics, the server's resident memory,
// goroutines, 5xx answers and webhook events created against those
// delivered, failed, interrupted and pending.
//
// At the end it lets the last deliveries finish and exits 1 when the
// server answered any 5xx, when memory or goroutines kept growing over the
// second half (see levelsOff), or when an event is unaccounted for: events
// created must be what the merchants caused, each must have ended
// delivered, failed or interrupted by a reset, and the receiver must have
// seen what the server says it delivered. scripts/soak.sh builds and runs
// it. Nothing leaves the machine: the server and the receiver listen on
// 127.0.0.1 only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "paymock-soak:", err)
		os.Exit(1)
	}
}

// config is what one soak runs with.
type config struct {
	// paymock is the binary under test.
	paymock string
	// duration is how long the merchants drive the server.
	duration time.Duration
	// merchants is how many open-mode merchants drive it at once.
	merchants int
	// rate bounds the requests per second of all merchants together.
	rate int
	// resetMin and resetMax bound how many payments a merchant makes
	// between two resets of its sandbox (drawn anew after each reset).
	resetMin, resetMax int
	// failShare is the share of deliveries the receiver answers 500.
	failShare float64
	// sample is how often /metrics is read; every minute a row is printed.
	sample time.Duration
	// seed drives every random choice of the merchants and the receiver.
	seed uint64
}

// Bounds that keep a soak from being anything but a soak on this machine.
const (
	maxDuration  = 2 * time.Hour
	maxMerchants = 200
	maxRate      = 2000
)

func parse(args []string, out io.Writer) (config, error) {
	fs := flag.NewFlagSet("paymock-soak", flag.ContinueOnError)
	fs.SetOutput(out)
	var c config
	var minutes float64
	fs.StringVar(&c.paymock, "paymock", "", "the paymock binary to run (required)")
	fs.Float64Var(&minutes, "minutes", 10, "how long to drive the server, in minutes (at most 120)")
	fs.IntVar(&c.merchants, "merchants", 24, "open-mode merchants driving the server at once")
	fs.IntVar(&c.rate, "rate", 150, "requests per second of all merchants together")
	fs.IntVar(&c.resetMin, "reset-min", 200, "fewest payments a merchant makes between resets")
	fs.IntVar(&c.resetMax, "reset-max", 400, "most payments a merchant makes between resets")
	fs.Float64Var(&c.failShare, "fail-share", 1.0/3, "share of webhook deliveries the receiver fails")
	fs.DurationVar(&c.sample, "sample", 10*time.Second, "how often /metrics is read")
	fs.Uint64Var(&c.seed, "seed", uint64(time.Now().UnixNano()), "seed of the merchants' and the receiver's choices")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.duration = time.Duration(minutes * float64(time.Minute))
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.paymock == "":
		return c, errors.New("--paymock is required: the binary to soak")
	case c.duration <= 0 || c.duration > maxDuration:
		return c, fmt.Errorf("--minutes %v: want more than 0 and at most %v", minutes, maxDuration.Minutes())
	case c.merchants < 1 || c.merchants > maxMerchants:
		return c, fmt.Errorf("--merchants %d: want 1 to %d", c.merchants, maxMerchants)
	case c.rate < 1 || c.rate > maxRate:
		return c, fmt.Errorf("--rate %d: want 1 to %d requests per second", c.rate, maxRate)
	case c.resetMin < 1 || c.resetMax < c.resetMin:
		return c, fmt.Errorf("--reset-min %d, --reset-max %d: want 1 <= min <= max", c.resetMin, c.resetMax)
	case c.failShare < 0 || c.failShare >= 1:
		return c, fmt.Errorf("--fail-share %v: want at least 0 and less than 1", c.failShare)
	case c.sample < time.Second || c.sample > time.Minute:
		return c, fmt.Errorf("--sample %v: want 1s to 1m", c.sample)
	}
	return c, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parse(args, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "paymock-soak: %v, %d merchants, %d requests/s, reset every %d-%d payments, receiver fails %.0f%%, seed %d\n",
		c.duration, c.merchants, c.rate, c.resetMin, c.resetMax, c.failShare*100, c.seed)

	rcv, err := startReceiver(c.failShare, c.seed)
	if err != nil {
		return err
	}
	defer rcv.close()
	srv, err := startServer(ctx, c.paymock, rcv.url, rcv.secret)
	if err != nil {
		return err
	}
	defer srv.stop()

	scr := &scraper{url: srv.base + "/metrics"}
	d := newDriver(srv.base, c)
	res, err := soak(ctx, c, d, scr, out)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, srv.logTail())
	}
	problems := verdict(res, d.totals(), rcv.stats())
	report(out, res, d.totals(), rcv.stats(), problems)
	if len(problems) > 0 {
		return fmt.Errorf("the soak failed: %d problem(s)\n%s", len(problems), srv.logTail())
	}
	return nil
}
