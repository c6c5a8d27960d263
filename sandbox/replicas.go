// The sweep that fires due payments on real clocks, whichever replica
// created them: on memory it finds what the scheduler's timers have not
// fired yet, on a shared store also what other replicas created.

package sandbox

import (
	"context"
	"time"

	"github.com/paymock/paymock/lifecycle"
)

// sweeper runs the engine's SweepAll every lifecycle.SweepInterval until
// stopped. Its zero value is a sweeper that never started.
type sweeper struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startSweeps starts the sweep of due payments when the clocks are real;
// frozen clocks move only when advanced, and an advance sweeps the
// merchant's payments itself. The first sweep runs at
// once, so that a restarted replica fires what fell due while it was
// down before its first interval.
func (s *Sandbox) startSweeps() {
	if s.clocks.Mode() != lifecycle.ClockReal {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.sweeps = sweeper{cancel: cancel, done: make(chan struct{})}
	go s.sweepLoop(ctx, s.sweeps.done)
}

// stopSweeps ends the sweep loop and waits for a sweep under way, which
// stops at its next payment.
func (s *Sandbox) stopSweeps() {
	if s.sweeps.cancel == nil {
		return
	}
	s.sweeps.cancel()
	<-s.sweeps.done
}

func (s *Sandbox) sweepLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(lifecycle.SweepInterval)
	defer t.Stop()
	failing := false
	for {
		n, err := s.engine.SweepAll(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			// Once per outage, not once a second: requests report it too.
			failing = true
			s.log.Warn("due payments not swept; retrying every interval", "interval", lifecycle.SweepInterval.String(), "error", err)
		case err == nil && failing:
			failing = false
			s.log.Info("due payments swept again", "fired", n)
		case n > 0:
			s.log.Debug("due payments swept", "fired", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
