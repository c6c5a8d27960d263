// Killing a replica with the test binary on Linux, even when the binary is
// killed before its cleanups run.

package postgres_test

import (
	"os/exec"
	"syscall"
)

func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
