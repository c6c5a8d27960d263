// What paymock says when a file it must read is not readable to its user,
// as a config mounted private into the image (uid 65532) is not, and when
// a file it must write (report --junit, verify --out) cannot be written,
// as into a mounted folder owned by another uid.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

func TestExitCode_AFileThatCouldNotBeWrittenSaysWriteNotRead(t *testing.T) {
	uid := os.Getuid()
	// The errors report --junit and verify --out come back as when the
	// kernel refuses the write: the same "open ...: permission denied" a
	// refused read gives.
	refused := &writeError{err: &fs.PathError{Op: "open", Path: "/out/contract.xml", Err: syscall.EACCES}}
	readOnly := &writeError{err: &fs.PathError{Op: "open", Path: "/contract.xml", Err: syscall.EROFS}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a folder of another uid", fmt.Errorf("report: writing the JUnit report: %w", refused),
			"paymock: report: writing the JUnit report: open /out/contract.xml: permission denied\n" +
				fmt.Sprintf("paymock runs as uid %d, which may not write /out/contract.xml: write it to a folder that user may write to, ", uid) +
				"or run paymock as the folder's owner (in docker: -v \"$PWD:/out\" --user \"$(id -u)\", and a path in /out)\n"},
		{"a read-only file system", fmt.Errorf("writing the report: %w", readOnly),
			"paymock: writing the report: open /contract.xml: read-only file system\n" +
				"/contract.xml is on a read-only file system: write it to a mounted folder " +
				"(in docker: -v \"$PWD:/out\" --user \"$(id -u)\", and a path in /out)\n"},
		{"a missing folder gets no hint", fmt.Errorf("writing the report: %w", &writeError{err: &fs.PathError{Op: "open", Path: "/x/y", Err: syscall.ENOENT}}),
			"paymock: writing the report: open /x/y: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			exitCode(tc.err, &b)
			// Whatever the exit code, the line on where to find the help
			// may follow; the hint is what is tested.
			got := b.String()
			if i := strings.Index(got, "Run \""); i >= 0 {
				got = got[:i]
			}
			if got != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestWriteFailures_AreWriteErrorsThatExit2 checks that both files
// paymock writes on request are written through writeOutputFile, which
// the hint above needs, and that failing to write one exits 2, as a
// usage error does, not 1, which reads as a failed gate or a broken
// contract; a missing folder fails the write as root too.
func TestWriteFailures_AreWriteErrorsThatExit2(t *testing.T) {
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
	base := "http://" + r.addr
	missing := filepath.Join(t.TempDir(), "missing", "out.xml")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"report --junit", []string{"report", "--url", base, "--api-key", "sk_test_write", "--min-calls", "0", "--junit", missing}},
		{"verify --out", []string{"verify", "--base-url", base, "--api-key", "sk_test_write", "--out", missing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, envOf(nil), io.Discard, io.Discard)
			var we *writeError
			if !errors.As(err, &we) || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("err = %v (%T), want a writeError of the missing folder", err, err)
			}
			if code := exitCode(err, io.Discard); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
		})
	}
}

// TestRun_AnUnwritableJUnitFileNamesTheUser writes the JUnit report into
// a folder of mode 0555; root writes anywhere, so it needs a user that is
// not root.
func TestRun_AnUnwritableJUnitFileNamesTheUser(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes into a folder of mode 0555; TestExitCode_AFileThatCouldNotBeWrittenSaysWriteNotRead covers the message")
	}
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{})
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	path := filepath.Join(dir, "contract.xml")
	_, stderr, _ := runCLI(context.Background(), []string{"report", "--url", "http://" + r.addr, "--api-key", "sk_test_write",
		"--min-calls", "0", "--junit", path}, nil)
	want := fmt.Sprintf("paymock runs as uid %d, which may not write %s", os.Getuid(), path)
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr:\n%s\nwant %q", stderr, want)
	}
}
