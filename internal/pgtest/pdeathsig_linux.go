// Stopping the server with the test binary on Linux, even when the binary
// is killed before Main can stop it.

package pgtest

import (
	"os/exec"
	"syscall"
)

// stopWithParent has the kernel send SIGTERM to the server (or to runuser,
// which passes it on) when the test binary dies.
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
