// Elsewhere than Linux there is no parent-death signal: Main stops the
// server, and a killed test binary leaves it running.

//go:build !linux

package pgtest

import "os/exec"

func stopWithParent(*exec.Cmd) {}
