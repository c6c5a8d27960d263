// Tests of "paymock version", down to what a plain "go build" in a clone prints.

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestRun_VersionPrintsVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		want    string
	}{
		{"default build", "dev", "paymock dev"},
		{"set by -ldflags", "v1.2.3", "paymock v1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := version
			version = tt.version
			t.Cleanup(func() { version = saved })
			var out strings.Builder
			if err := run(context.Background(), []string{"version"}, envOf(nil), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if !strings.HasPrefix(got, tt.want+" ") || !strings.Contains(got, runtime.Version()) || !strings.HasSuffix(got, "\n") {
				t.Errorf("version printed %q, want it to start with %q and name %s", got, tt.want, runtime.Version())
			}
		})
	}
}

func TestFormatVersionLine_NamesReleasesAndCommits(t *testing.T) {
	vcs := func(version, rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/paymock/paymock", Version: version}}
		if rev != "" {
			bi.Settings = []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
		}
		return bi
	}
	const rev = "9df7fb4bd47ea89f22e67f93145614d5465f47fe"
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"go build in a clean clone", "dev", vcs("v0.0.0-20261122075825-9df7fb4bd47e", rev, "false"),
			"paymock dev (commit 9df7fb4bd47e) go1.26.8 linux/amd64"},
		{"go build in a clone with changes", "dev", vcs("v0.0.0-20261122075825-9df7fb4bd47e+dirty", rev, "true"),
			"paymock dev (commit 9df7fb4bd47e, modified) go1.26.8 linux/amd64"},
		{"go build in a clone after a tag", "dev", vcs("v1.2.4-0.20261122075825-9df7fb4bd47e", rev, "false"),
			"paymock dev (commit 9df7fb4bd47e) go1.26.8 linux/amd64"},
		{"go build at a tag", "dev", vcs("v1.2.3", rev, "false"),
			"paymock v1.2.3 (commit 9df7fb4bd47e) go1.26.8 linux/amd64"},
		{"go build at a tag with changes", "dev", vcs("v1.2.3+dirty", rev, "true"),
			"paymock v1.2.3 (commit 9df7fb4bd47e, modified) go1.26.8 linux/amd64"},
		{"go install @v1.2.3", "dev", vcs("v1.2.3", "", ""), "paymock v1.2.3 go1.26.8 linux/amd64"},
		{"no VCS information", "dev", vcs("(devel)", "", ""), "paymock dev go1.26.8 linux/amd64"},
		{"no build information", "dev", nil, "paymock dev go1.26.8 linux/amd64"},
		{"-ldflags wins", "v0.1.0", vcs("v0.0.0-20261122075825-9df7fb4bd47e", rev, "false"),
			"paymock v0.1.0 (commit 9df7fb4bd47e) go1.26.8 linux/amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatVersionLine(tt.ldflags, tt.bi, "go1.26.8", "linux/amd64"); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestBuild_PlainGoBuildPrintsTheDocumentedVersionAndExitCodes builds the
// binary the way the README tells a newcomer to (go build -o paymock
// ./cmd/paymock, with Go's default VCS stamping) and checks what scripts
// rely on: the form of "paymock version" the README documents, and the
// exit codes, which "go run" would report as its own 1.
func TestBuild_PlainGoBuildPrintsTheDocumentedVersionAndExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	bin := filepath.Join(t.TempDir(), "paymock")
	build := exec.Command("go", "build", "-o", bin, "./cmd/paymock")
	build.Dir = strings.TrimSpace(string(root))
	// This machine's go env may turn VCS stamping off; a clone elsewhere
	// has it on, which is what the README shows.
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("paymock version: %v", err)
	}
	want := regexp.MustCompile(`^paymock (dev|v\d+\.\d+\.\d+\S*) \(commit [0-9a-f]{12}(, modified)?\) go1\.\d+(\.\d+)?\S* \w+/\w+\n$`)
	if st, err := os.Stat(filepath.Join(build.Dir, ".git")); err == nil && !st.IsDir() {
		// A checkout made by "git worktree add" has a .git file, which Go
		// does not take for a repository: no commit, as the README says.
		want = regexp.MustCompile(`^paymock (dev|v\d+\.\d+\.\d+\S*) go1\.\d+(\.\d+)?\S* \w+/\w+\n$`)
	}
	if !want.Match(out) {
		t.Errorf("paymock version printed %q, want the form %s", out, want)
	}

	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"-h"}, 0},
		{[]string{"report", "-h"}, 0},
		{[]string{"--bogus"}, 2},
		{[]string{"report", "--url", "http://localhost:1"}, 2},
		{[]string{"healthcheck", "--addr", closedPort(t)}, 1},
	} {
		err := exec.Command(bin, tt.args...).Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("paymock %s exited %d, want %d", strings.Join(tt.args, " "), code, tt.code)
		}
	}
}
