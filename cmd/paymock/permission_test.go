// What a start says when a file it must read is not readable to its user,
// as a config mounted private into the image (uid 65532) is not.

package main

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestExitCode_APermissionDeniedFileSaysWhichUserCouldNotReadIt(t *testing.T) {
	uid := os.Getuid()
	hint := func(path string) string {
		return fmt.Sprintf("paymock runs as uid %d, which may not read %s: make it readable to that user (chmod a+r), "+
			"or run paymock as the file's owner (in docker: --user \"$(id -u)\")\n", uid, path)
	}
	// The error a config, fault or scenario file refused by the kernel
	// comes back as, through the same wrapping.
	refused := &fs.PathError{Op: "open", Path: "/paymock.yaml", Err: syscall.EACCES}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a config file", &usageError{err: fmt.Errorf("config file: %w", refused)},
			"paymock: config file: open /paymock.yaml: permission denied\n" + hint("/paymock.yaml") + "Run \"paymock -h\" for usage.\n"},
		{"a file that is missing gets no hint", &usageError{err: fmt.Errorf("config file: %w", &fs.PathError{Op: "open", Path: "/x.yaml", Err: syscall.ENOENT})},
			"paymock: config file: open /x.yaml: no such file or directory\nRun \"paymock -h\" for usage.\n"},
		{"a refused listen is no file", fmt.Errorf("listen: %w", &os.SyscallError{Syscall: "bind", Err: syscall.EACCES}),
			"paymock: listen: bind: permission denied\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			exitCode(tc.err, &b)
			if b.String() != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestRun_AnUnreadableConfigNamesTheUser runs the start itself; root reads
// any file, so it needs a user that is not root.
func TestRun_AnUnreadableConfigNamesTheUser(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads a file of mode 0000; TestExitCode_APermissionDeniedFileSaysWhichUserCouldNotReadIt covers the message")
	}
	path := writeFile(t, "paymock.yaml", "merchants: []\n")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(cancelled(), []string{"--config", path, "--addr", "127.0.0.1:0"}, nil)
	want := fmt.Sprintf("paymock runs as uid %d, which may not read %s", os.Getuid(), path)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant 2 and %q", code, stderr, want)
	}
}
