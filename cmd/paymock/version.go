package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3". Without it, the module version from
// the build info is used (set by "go install ...@v1.2.3").
var version = "dev"

// buildVersion is the version to show: the -ldflags one, else the
// module's, else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// versionLine is what "paymock version" prints, e.g.
// "paymock v1.2.3 (commit 1a2b3c4d5e6f, modified) go1.26.8 linux/amd64".
func versionLine() string {
	var extra []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			c := "commit " + rev
			if modified == "true" {
				c += ", modified"
			}
			extra = append(extra, c)
		}
	}
	line := "paymock " + buildVersion()
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, "; ") + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
