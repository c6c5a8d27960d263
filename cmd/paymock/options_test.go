// Tests of serve's flags and environment variables.

package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/lifecycle"
)

// options parses args and env the way serve does.
func parseTestOptions(t *testing.T, args []string, env map[string]string) *options {
	t.Helper()
	raw, help, argErrs := parseFlags(args, envOf(env))
	if help || len(argErrs) > 0 {
		t.Fatalf("parseFlags: help %v, errors %v", help, argErrs)
	}
	o, err := parseOptions(raw, nil)
	if err != nil {
		t.Fatalf("parseOptions: %v", err)
	}
	return o
}

func TestParseOptions_DefaultsWhenNothingIsGiven(t *testing.T) {
	o := parseTestOptions(t, nil, nil)
	if o.addr != ":8080" {
		t.Errorf("addr = %q, want :8080", o.addr)
	}
	if o.publicURL != "" {
		t.Errorf("publicURL = %q, want empty (derived from the bound port)", o.publicURL)
	}
	if o.clockMode != lifecycle.ClockReal || !o.clockStart.IsZero() {
		t.Errorf("clock = %q start %v, want real, now", o.clockMode, o.clockStart)
	}
	if o.seed != nil {
		t.Errorf("seed = %d, want none (crypto-random ids)", *o.seed)
	}
	if o.logFormat != "text" || o.logLevel != slog.LevelInfo {
		t.Errorf("log = %s/%v, want text/info", o.logFormat, o.logLevel)
	}
	if o.bodyLimit != 1<<20 {
		t.Errorf("bodyLimit = %d, want 1 MiB", o.bodyLimit)
	}
	wantRetry := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour}
	if !slices.Equal(o.webhookRetry, wantRetry) || o.webhookRetrySet {
		t.Errorf("webhookRetry = %v (set %v), want default %v", o.webhookRetry, o.webhookRetrySet, wantRetry)
	}
	if len(o.apiKeys) != 0 || len(o.webhookURLs) != 0 || o.webhookSecret != "" || o.configPath != "" || o.scenariosPath != "" {
		t.Errorf("unexpected non-empty options: %+v", o)
	}
}

func TestParseOptions_ReadsEveryFlag(t *testing.T) {
	cfg := writeFile(t, "paymock.yaml", "merchants: []\n")
	scen := t.TempDir()
	args := []string{
		"--addr", "127.0.0.1:9999",
		"--public-url", "https://sandbox.example.com/pay/",
		"--config", cfg,
		"--api-key", "sk_test_one", "--api-key=sk_test_two",
		"--clock", "frozen",
		"--clock-start", "2030-01-02T03:04:05Z",
		"--seed", "18446744073709551615",
		"--log-format", "json",
		"--log-level", "debug",
		"--body-limit", "2048",
		"--webhook-url", "http://localhost:9000/hooks", "--webhook-url", "https://hooks.example.com/x",
		"--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"--webhook-retry", "1s, 2m",
		"--scenarios", scen,
	}
	o := parseTestOptions(t, args, nil)
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", o.addr, "127.0.0.1:9999"},
		{"publicURL", o.publicURL, "https://sandbox.example.com/pay"},
		{"configPath", o.configPath, cfg},
		{"apiKeys", strings.Join(o.apiKeys, ","), "sk_test_one,sk_test_two"},
		{"clockMode", o.clockMode, lifecycle.ClockFrozen},
		{"clockStart", o.clockStart.UTC(), time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"seed", *o.seed, uint64(18446744073709551615)},
		{"logFormat", o.logFormat, "json"},
		{"logLevel", o.logLevel, slog.LevelDebug},
		{"bodyLimit", o.bodyLimit, int64(2048)},
		{"webhookURLs", strings.Join(o.webhookURLs, " "), "http://localhost:9000/hooks https://hooks.example.com/x"},
		{"webhookSecret", o.webhookSecret, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"webhookRetry", slices.Equal(o.webhookRetry, []time.Duration{time.Second, 2 * time.Minute}), true},
		{"webhookRetrySet", o.webhookRetrySet, true},
		{"scenariosPath", o.scenariosPath, scen},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestParseOptions_CommandLineWinsOverEnv(t *testing.T) {
	env := map[string]string{
		"PAYMOCK_ADDR":       "127.0.0.1:1111",
		"PAYMOCK_CLOCK":      "frozen",
		"PAYMOCK_API_KEY":    "sk_env_a,sk_env_b",
		"PAYMOCK_LOG_FORMAT": "json",
	}
	tests := []struct {
		name     string
		args     []string
		wantAddr string
		wantKeys []string
		wantLog  string
	}{
		{"env only", nil, "127.0.0.1:1111", []string{"sk_env_a", "sk_env_b"}, "json"},
		{"flags override env", []string{"--addr", ":2222", "--api-key", "sk_flag", "--log-format", "text"}, ":2222", []string{"sk_flag"}, "text"},
		{"partly overridden", []string{"--addr=:3333"}, ":3333", []string{"sk_env_a", "sk_env_b"}, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parseTestOptions(t, tt.args, env)
			if o.addr != tt.wantAddr {
				t.Errorf("addr = %q, want %q", o.addr, tt.wantAddr)
			}
			if !slices.Equal(o.apiKeys, tt.wantKeys) {
				t.Errorf("apiKeys = %q, want %q", o.apiKeys, tt.wantKeys)
			}
			if o.logFormat != tt.wantLog {
				t.Errorf("logFormat = %q, want %q", o.logFormat, tt.wantLog)
			}
			if o.clockMode != lifecycle.ClockFrozen {
				t.Errorf("clockMode = %q, want frozen from PAYMOCK_CLOCK", o.clockMode)
			}
		})
	}
}

func TestParseOptions_RepeatableEnvIsCommaSeparated(t *testing.T) {
	o := parseTestOptions(t, nil, map[string]string{
		"PAYMOCK_WEBHOOK_URL": "http://a.example/h, http://b.example/h,,",
		"PAYMOCK_API_KEY":     " k1 ,k2",
	})
	if want := []string{"http://a.example/h", "http://b.example/h"}; !slices.Equal(o.webhookURLs, want) {
		t.Errorf("webhookURLs = %q, want %q", o.webhookURLs, want)
	}
	if want := []string{"k1", "k2"}; !slices.Equal(o.apiKeys, want) {
		t.Errorf("apiKeys = %q, want %q", o.apiKeys, want)
	}
}

func TestParseOptions_TrimsPublicURLTrailingSlash(t *testing.T) {
	tests := map[string]string{
		"http://localhost:8080/":    "http://localhost:8080",
		"https://x.example/base//":  "https://x.example/base",
		"https://x.example":         "https://x.example",
		"http://[::1]:9000/sandbox": "http://[::1]:9000/sandbox",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			o := parseTestOptions(t, []string{"--public-url", in}, nil)
			if o.publicURL != want {
				t.Errorf("publicURL = %q, want %q", o.publicURL, want)
			}
		})
	}
}

func TestRun_RejectsBadFlagValues(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"bad clock mode", []string{"--clock", "fast"}, nil, []string{"--clock", `"fast"`, "real or frozen"}},
		{"bad clock mode from env", nil, map[string]string{"PAYMOCK_CLOCK": "fast"}, []string{"PAYMOCK_CLOCK", "real or frozen"}},
		{"bad clock start", []string{"--clock-start", "2030-01-02"}, nil, []string{"--clock-start", "RFC 3339"}},
		{"bad seed", []string{"--seed", "-1"}, nil, []string{"--seed", "unsigned"}},
		{"bad seed from env", nil, map[string]string{"PAYMOCK_SEED": "abc"}, []string{"PAYMOCK_SEED"}},
		{"addr without port", []string{"--addr", "localhost"}, nil, []string{"--addr", "host:port"}},
		{"addr with named port", []string{"--addr", ":http"}, nil, []string{"--addr", "port must be a number"}},
		{"relative public url", []string{"--public-url", "/sandbox"}, nil, []string{"--public-url", "absolute"}},
		{"ftp public url", []string{"--public-url", "ftp://x.example"}, nil, []string{"--public-url", "http"}},
		{"public url with query", []string{"--public-url", "http://x.example/?a=1"}, nil, []string{"--public-url", "query"}},
		{"public url from env", nil, map[string]string{"PAYMOCK_PUBLIC_URL": "localhost:8080"}, []string{"PAYMOCK_PUBLIC_URL"}},
		{"missing config file", []string{"--config", missing}, nil, []string{"--config", "missing.yaml"}},
		{"config is a folder", []string{"--config", t.TempDir()}, nil, []string{"--config", "directory"}},
		{"bad api key", []string{"--api-key", "sk test"}, nil, []string{"--api-key", "key 1", "bearer token"}},
		{"repeated api key", []string{"--api-key", "sk_a", "--api-key", "sk_a"}, nil, []string{"--api-key", "keys 1 and 2"}},
		{"bad api key from env", nil, map[string]string{"PAYMOCK_API_KEY": "ok,not ok"}, []string{"PAYMOCK_API_KEY", "key 2"}},
		{"bad log format", []string{"--log-format", "xml"}, nil, []string{"--log-format", "text or json"}},
		{"bad log level", []string{"--log-level", "loud"}, nil, []string{"--log-level", "debug, info, warn or error"}},
		{"zero body limit", []string{"--body-limit", "0"}, nil, []string{"--body-limit", "greater than 0"}},
		{"body limit with unit", []string{"--body-limit", "1MiB"}, nil, []string{"--body-limit", "bytes"}},
		{"relative webhook url", []string{"--webhook-url", "hooks"}, nil, []string{"--webhook-url", `"hooks"`}},
		{"bad webhook url from env", nil, map[string]string{"PAYMOCK_WEBHOOK_URL": "http://ok.example,mailto:x@y"}, []string{"PAYMOCK_WEBHOOK_URL", "mailto"}},
		{"webhook secret without prefix", []string{"--webhook-secret", "c2VjcmV0"}, nil, []string{"--webhook-secret", "whsec_"}},
		{"webhook secret not base64", []string{"--webhook-secret", "whsec_not*base64"}, nil, []string{"--webhook-secret", "base64"}},
		{"webhook secret ending in a CRLF env file's carriage return", nil, map[string]string{"PAYMOCK_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\r"}, []string{"PAYMOCK_WEBHOOK_SECRET", "line break"}},
		{"bad webhook retry", []string{"--webhook-retry", "5s,soon"}, nil, []string{"--webhook-retry", "delay 2", `"soon"`}},
		{"zero webhook retry", []string{"--webhook-retry", "0s"}, nil, []string{"--webhook-retry", "greater than 0"}},
		{"empty webhook retry", []string{"--webhook-retry", ""}, nil, []string{"--webhook-retry"}},
		{"negative webhook retry from env", nil, map[string]string{"PAYMOCK_WEBHOOK_RETRY": "-1s"}, []string{"PAYMOCK_WEBHOOK_RETRY"}},
		{"missing scenarios", []string{"--scenarios", missing}, nil, []string{"--scenarios", "missing.yaml"}},
		{"unknown flag", []string{"--colour", "x"}, nil, []string{"unknown flag --colour"}},
		{"flag without value", []string{"--addr"}, nil, []string{"--addr needs a value"}},
		{"stray argument", []string{"--addr", ":0", "extra"}, nil, []string{`"extra"`}},
		{"unknown command", []string{"start"}, nil, []string{`"start"`, "serve, healthcheck, report, verify, proxy or version"}},
		{"version with arguments", []string{"version", "--short"}, nil, []string{"version takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A cancelled context: should a case be wrongly accepted, the
			// server stops at once instead of running on.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := append([]string{}, tt.args...)
			if !slices.Contains(args, "--addr") && (len(args) == 0 || args[0] != "start" && args[0] != "version") {
				args = append(args, "--addr", "127.0.0.1:0")
			}
			err := run(ctx, args, envOf(tt.env), io.Discard, io.Discard)
			wantUsageError(t, err, tt.want...)
			if code := exitCode(err, io.Discard); code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
		})
	}
}

func TestRun_ReportsEveryBadFlagAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"--clock", "x", "--log-level", "y"}, envOf(map[string]string{"PAYMOCK_SEED": "z"}), io.Discard, io.Discard)
	wantUsageError(t, err, "--clock", "--log-level", "PAYMOCK_SEED")
}

func TestRun_ErrorsNeverContainSecrets(t *testing.T) {
	const secret = "whsec_s3cr3t!!"
	const key = "sk live"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"--webhook-secret", secret, "--api-key", key}, envOf(nil), io.Discard, io.Discard)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, s := range []string{secret, "s3cr3t", key} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains the secret %q", err, s)
		}
	}
}

func TestRun_HelpPrintsUsageAndSucceeds(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}, {"serve", "-h"}, {"--clock", "x", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out strings.Builder
			if err := run(context.Background(), args, envOf(nil), &out, io.Discard); err != nil {
				t.Fatalf("run: %v", err)
			}
			for _, want := range []string{"Usage:", "healthcheck", "--public-url", "PAYMOCK_PUBLIC_URL", "--webhook-retry", `"5s,30s,2m,10m,1h"`} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("usage lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestEnvName_UpperCasesAndReplacesDashes(t *testing.T) {
	tests := map[string]string{
		"addr":          "PAYMOCK_ADDR",
		"public-url":    "PAYMOCK_PUBLIC_URL",
		"webhook-retry": "PAYMOCK_WEBHOOK_RETRY",
	}
	for in, want := range tests {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExitCode_IsTwoForUsageAndOneForFailures(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"usage", usageErrorf("invalid --clock"), 2},
		{"failure", io.ErrUnexpectedEOF, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if got := exitCode(tt.err, &stderr); got != tt.want {
				t.Errorf("exitCode = %d, want %d", got, tt.want)
			}
			if tt.err != nil && !strings.Contains(stderr.String(), tt.err.Error()) {
				t.Errorf("stderr %q does not report %q", stderr.String(), tt.err)
			}
		})
	}
}

func TestStore_NoPartOfThePasswordIsEverPrinted(t *testing.T) {
	// Each password holds "Zq9" and "Xw7" apart, so that any piece of it
	// left in a message shows.
	for _, u := range []string{
		"postgres://u:Zq9@Xw7@127.0.0.1:1/db",
		"postgres://u:12/Zq9Xw7@127.0.0.1:1/db",
		"postgres://u:Zq9?Xw7@127.0.0.1:1/db",
		"postgres://u:Zq9#Xw7@127.0.0.1:1/db",
		"postgres://u:Zq9%zzXw7@127.0.0.1:1/db",
		"postgres://u:Zq9 Xw7@127.0.0.1:1/db",
		"postgres://u:Zq9Xw7@127.0.0.1:1/db?sslmode=bogus",
		"postgres://u@127.0.0.1:1/db?password=Zq9Xw7&connect_timeout=x",
		"postgres://u:Zq9Xw7@127.0.0.1:1/db",
		"host=127.0.0.1 password=Zq9Xw7 port=1",
	} {
		t.Run(u, func(t *testing.T) {
			_, stderr, code := runCLI(cancelled(), []string{"--store", u, "--addr", "127.0.0.1:0"}, nil)
			if code == 0 {
				t.Fatalf("exit 0 for %s", u)
			}
			if strings.Contains(stderr, "Zq9") || strings.Contains(stderr, "Xw7") {
				t.Errorf("the message shows part of the password:\n%s", stderr)
			}
		})
	}
}

// docsTypos are the PAYMOCK_* names the docs show as mistakes: serve must
// go on refusing them.
var docsTypos = map[string]bool{"PAYMOCK_ADRR": true}

// paymockVarRe finds PAYMOCK_* names; one ending in "_" is a prefix
// named in prose (PAYMOCK_SKIP_*).
var paymockVarRe = regexp.MustCompile(`PAYMOCK_[A-Z0-9_]+`)

// getenvRe finds a Go file's os.Getenv of a PAYMOCK_* name.
var getenvRe = regexp.MustCompile(`Getenv\("(PAYMOCK_[A-Z0-9_]+)"\)`)

// repoVariables is every PAYMOCK_* name in the text files of docs/,
// scripts/ and examples/, and every one a Go file of the repository reads
// with os.Getenv (the tests' and benchmarks' switches), with where it was
// first seen.
func repoVariables(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "third_party":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		prose := top == "docs" || top == "scripts" || top == "examples"
		if !prose && !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(data, 0) >= 0 { // unreadable or binary
			return err
		}
		var names []string
		if prose {
			names = paymockVarRe.FindAllString(string(data), -1)
		} else {
			for _, m := range getenvRe.FindAllStringSubmatch(string(data), -1) {
				names = append(names, m[1])
			}
		}
		for _, name := range names {
			if _, ok := found[name]; !ok && !strings.HasSuffix(name, "_") {
				found[name] = rel
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// sourceVariables is every PAYMOCK_* name in the string literals of this
// package's own (non-test) files: the variables the subcommands read and
// their help texts name.
func sourceVariables(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				for _, name := range paymockVarRe.FindAllString(lit.Value, -1) {
					if !strings.HasSuffix(name, "_") {
						found[name] = fset.Position(lit.Pos()).String()
					}
				}
			}
			return true
		})
	}
	return found
}

// TestUnknownEnv_AcceptsEveryVariableTheRepositoryNames: a variable of
// another subcommand, of a script or of a compose file, set in the shell
// that starts serve, must not stop the start. Every name the docs,
// scripts and examples mention, and every name the subcommands read,
// is accepted; the docs' own typo examples stay refused.
func TestUnknownEnv_AcceptsEveryVariableTheRepositoryNames(t *testing.T) {
	names := repoVariables(t)
	for name, where := range sourceVariables(t) {
		names[name] = where
	}
	for _, name := range []string{"PAYMOCK_VERIFY_API_KEY", "PAYMOCK_PROXY_UPSTREAM", "PAYMOCK_PORT", "PAYMOCK_IMAGE", "PAYMOCK_UPDATE_DOCS"} {
		if names[name] == "" {
			t.Errorf("%s was not found in the repository: the scan is broken", name)
		}
	}
	for name, where := range names {
		errs := unknownEnv([]string{name + "=x"})
		switch {
		case docsTypos[name] && len(errs) == 0:
			t.Errorf("%s (the docs' example of a typo, %s) is accepted", name, where)
		case !docsTypos[name] && len(errs) > 0:
			t.Errorf("%s, named in %s, stops serve: %v", name, where, errs)
		}
	}
}
