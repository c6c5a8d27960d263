// Advances of one merchant on several replicas at once add up.

package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/paymock/paymock/lifecycle"
)

func TestReplicas_SimultaneousAdvancesAddUp(t *testing.T) {
	rs := inProcess(t, 3, lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen, Start: testStart}, nil)
	id := rs[0].create(25, nil)
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { r.advance(10) })
	}
	wg.Wait()
	if got, want := rs[1].clock(), testStart.Add(30*time.Second).Format(time.RFC3339); got != want {
		t.Errorf("clock after three advances of 10 s at once: %s, want %s", got, want)
	}
	if s := rs[2].status(id); s != "expired" {
		t.Errorf("a payment due after 25 s is %s", s)
	}
	if n := eventsOn(rs, "payment.expired"); n != 1 {
		t.Errorf("%d payment.expired events, want 1", n)
	}
}
