// Elsewhere than Linux there is no parent-death signal: the tests'
// cleanups kill the replicas, and a killed test binary leaves them running.

//go:build !linux

package postgres_test

import "os/exec"

func killWithParent(*exec.Cmd) {}
