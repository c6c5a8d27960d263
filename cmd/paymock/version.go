// What "paymock version" prints, from -ldflags or the build information.

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3". Without it, a release version from
// the build info is used (set by "go install ...@v1.2.3", or by "go build"
// in a clone checked out at a tag).
var version = "dev"

// buildVersion is the version to show.
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

// versionOf is the version to show: the -ldflags one, else the module's
// when it is a release, else "dev". Since Go 1.24 "go build" in a clone
// stamps a pseudo-version such as v0.0.0-20261122075825-9df7fb4bd47e+dirty:
// that is a commit, not a release, so it shows as dev, and the commit is
// shown apart.
func versionOf(ldflags string, bi *debug.BuildInfo) string {
	if ldflags != "dev" && ldflags != "" {
		return ldflags
	}
	if bi == nil {
		return "dev"
	}
	v, _, _ := strings.Cut(bi.Main.Version, "+") // +dirty: shown as "modified"
	if v == "" || v == "(devel)" || isPseudoVersion(v) {
		return "dev"
	}
	return v
}

// isPseudoVersion reports whether v is a Go pseudo-version, whose last two
// parts are a 14-digit UTC time and a 12-digit commit hash:
// v0.0.0-20261122075825-9df7fb4bd47e, v1.2.4-0.20261122075825-9df7fb4bd47e.
func isPseudoVersion(v string) bool {
	parts := strings.Split(v, "-")
	if len(parts) < 3 {
		return false
	}
	rev, stamp := parts[len(parts)-1], parts[len(parts)-2]
	if len(rev) != 12 || strings.Trim(rev, "0123456789abcdef") != "" || len(stamp) < 14 {
		return false
	}
	return strings.Trim(stamp[len(stamp)-14:], "0123456789") == ""
}

// versionLine is what "paymock version" prints, e.g.
// "paymock dev (commit 9df7fb4bd47e) go1.26.8 linux/amd64" from "go build"
// in a clone, "paymock v1.2.3 go1.26.8 linux/amd64" from go install.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersionLine(version, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersionLine is versionLine for the given build facts.
func formatVersionLine(ldflags string, bi *debug.BuildInfo, goVersion, platform string) string {
	line := "paymock " + versionOf(ldflags, bi)
	if bi != nil {
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
			line += " (" + c + ")"
		}
	}
	return fmt.Sprintf("%s %s %s", line, goVersion, platform)
}
