// What the first New of a test binary costs, measured in a fresh process
// of its own and logged (never asserted: a loaded machine is slower).

package paymocktest_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paymock/paymock/paymocktest"
)

// firstNewEnv makes the test binary, run again by
// TestNew_LogsWhatTheFirstStartCosts, time its first New and print it.
const firstNewEnv = "PAYMOCKTEST_TIME_FIRST_NEW"

func TestNew_LogsWhatTheFirstStartCosts(t *testing.T) {
	if os.Getenv(firstNewEnv) == "1" {
		// The child: nothing of the sandbox has run in this process yet.
		// CPU time as well as wall: on a shared machine the wall time
		// is mostly waiting for a core.
		start, cpu0 := time.Now(), cpuTime()
		paymocktest.New(t)
		first, firstCPU := time.Since(start), cpuTime()-cpu0
		start, cpu0 = time.Now(), cpuTime()
		paymocktest.New(t)
		fmt.Printf("first New %.1f ms (CPU %.1f ms), second New %.1f ms (CPU %.1f ms)\n",
			ms(first), ms(firstCPU), ms(time.Since(start)), ms(cpuTime()-cpu0))
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNew_LogsWhatTheFirstStartCosts$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), firstNewEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "first New") {
		t.Fatalf("the timed run failed: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "first New") {
			t.Log(line) // docs/go.md quotes it
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
