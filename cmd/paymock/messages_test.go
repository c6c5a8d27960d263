// What the user reads when a command line is wrong, byte for byte, and the
// help of each command.

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRun_CommandLineMistakesReadAsTypedInOneMessage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantStderr string
	}{
		{
			name: "an unknown flag is named as typed, with every other flag error",
			args: []string{"--bogus", "--clock", "fast", "--addr", "127.0.0.1:0"},
			wantStderr: `paymock: unknown flag --bogus
invalid --clock: "fast": want real or frozen
Run "paymock -h" for usage.
`,
		},
		{
			name: "a single-dash unknown flag keeps its single dash",
			args: []string{"-bogus=1"},
			wantStderr: `paymock: unknown flag -bogus
Run "paymock -h" for usage.
`,
		},
		{
			name: "a near miss suggests the flag",
			args: []string{"--adr", "127.0.0.1:0", "--webhok-url", "http://x.example"},
			wantStderr: `paymock: unknown flag --adr (did you mean --addr?)
unknown flag --webhok-url (did you mean --webhook-url?)
Run "paymock -h" for usage.
`,
		},
		{
			name: "a flag without its value",
			args: []string{"--seed", "1", "--addr"},
			wantStderr: `paymock: --addr needs a value: --addr host:port
Run "paymock -h" for usage.
`,
		},
		{
			name: "a bool flag given its value after a space",
			args: []string{"--metrics", "false", "--addr", "127.0.0.1:0"},
			wantStderr: `paymock: --metrics takes its value after =: write --metrics=false
Run "paymock -h" for usage.
`,
		},
		{
			name: "stray arguments, environment errors and flag errors together",
			args: []string{"serve", "extra", "--log-level", "loud", "--addr", "127.0.0.1:0"},
			env:  map[string]string{"PAYMOCK_SEED": "abc"},
			wantStderr: `paymock: unexpected argument "extra" (every option is a flag: paymock --flag value)
invalid PAYMOCK_SEED: "abc" is not an unsigned 64-bit integer
invalid --log-level: "loud": want debug, info, warn or error
Run "paymock -h" for usage.
`,
		},
		{
			name: "the new flags' values",
			args: []string{"--max-merchants", "-5", "--merchant-idle-ttl", "1d", "--metrics=maybe", "--store", "mysql://u:pw@db/x", "--addr", "127.0.0.1:0"},
			wantStderr: `paymock: invalid --metrics: "maybe": want true or false
invalid --max-merchants: "-5": want a whole number of merchants, or 0 for no cap
invalid --merchant-idle-ttl: "1d": want a duration such as 24h or 30m, or 0 to keep merchants for ever
invalid --store: mysql:// URLs are not supported: want memory, or a postgres:// URL
Run "paymock -h" for usage.
`,
		},
		{
			name: "the new flags from the environment",
			env: map[string]string{"PAYMOCK_MAX_MERCHANTS": "lots", "PAYMOCK_MERCHANT_IDLE_TTL": "-1h",
				"PAYMOCK_METRICS": "off", "PAYMOCK_STORE": "sqlite", "PAYMOCK_ADDR": "127.0.0.1:0"},
			wantStderr: `paymock: invalid PAYMOCK_MAX_MERCHANTS: "lots": want a whole number of merchants, or 0 for no cap
invalid PAYMOCK_MERCHANT_IDLE_TTL: "-1h": want a duration such as 24h or 30m, or 0 to keep merchants for ever
invalid PAYMOCK_METRICS: "off": want true or false
invalid PAYMOCK_STORE: "sqlite": want memory, or a URL such as postgres://user:password@host:5432/paymock
Run "paymock -h" for usage.
`,
		},
		{
			name: "an unknown PAYMOCK_ variable stops the start, with the nearest name",
			env: map[string]string{"PAYMOCK_ADRR": ":9090", "PAYMOCK_LISTEN": "9090", "PAYMOCK_WEBHOOKURL": "http://x.example", "PAYMOCK_TEST_STORE": "postgres", "HOME": "/root",
				"PAYMOCK_PORT": "8081", "PAYMOCK_VERIFY_API_KEY": "sk_live_x"}, // compose's port and verify's key are not serve's, and no mistake
			wantStderr: `paymock: unknown environment variable PAYMOCK_ADRR (did you mean PAYMOCK_ADDR?); paymock reads PAYMOCK_<FLAG> for each flag of "paymock --help"
unknown environment variable PAYMOCK_LISTEN (did you mean PAYMOCK_ADDR?); paymock reads PAYMOCK_<FLAG> for each flag of "paymock --help"
unknown environment variable PAYMOCK_WEBHOOKURL (did you mean PAYMOCK_WEBHOOK_URL?); paymock reads PAYMOCK_<FLAG> for each flag of "paymock --help"
Run "paymock -h" for usage.
`,
		},
		{
			name: "--port is --addr here",
			args: []string{"--port", "8081"},
			wantStderr: `paymock: unknown flag --port (did you mean --addr?)
Run "paymock -h" for usage.
`,
		},
		{
			name: "an unknown command",
			args: []string{"start"},
			wantStderr: `paymock: unknown command "start" (want serve, healthcheck, report, verify, proxy or version)
Run "paymock -h" for usage.
`,
		},
		{
			name: "report points to its own help",
			args: []string{"report", "--bogus", "--min-calls", "few"},
			wantStderr: `paymock: report: unknown flag --bogus
--url (or PAYMOCK_REPORT_URL) is required
--api-key (or PAYMOCK_REPORT_API_KEY) is required
invalid --min-calls: "few": want a whole number of calls, or 0 to turn the check off
Run "paymock report -h" for usage.
`,
		},
		{
			name: "report suggests its own flags",
			args: []string{"report", "--url", "http://localhost:1", "--api-key", "sk_x", "--fail-on-violation"},
			wantStderr: `paymock: report: unknown flag --fail-on-violation (did you mean --fail-on-violations?)
Run "paymock report -h" for usage.
`,
		},
		{
			name: "healthcheck points to its own help",
			args: []string{"healthcheck", "--bogus"},
			wantStderr: `paymock: healthcheck: unknown flag --bogus
Run "paymock healthcheck -h" for usage.
`,
		},
		{
			name: "healthcheck's bad address",
			args: []string{"healthcheck", "--addr", "localhost"},
			wantStderr: `paymock: healthcheck: invalid --addr: "localhost": want host:port, e.g. :8080 or 127.0.0.1:8080
Run "paymock healthcheck -h" for usage.
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(cancelled(), tt.args, tt.env)
			if code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
			if stderr != tt.wantStderr {
				t.Errorf("stderr =\n%s\nwant\n%s", stderr, tt.wantStderr)
			}
		})
	}
}

func TestRun_EachCommandPrintsItsOwnHelp(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string
		mustLack []string
	}{
		{"healthcheck -h", []string{"healthcheck", "-h"},
			[]string{"Usage:\n  paymock healthcheck [--addr host:port]", "PAYMOCK_ADDR", "0  the server answered 200"},
			[]string{"--webhook-retry", "--public-url"}},
		{"healthcheck --help", []string{"healthcheck", "--help"},
			[]string{"paymock healthcheck [--addr host:port]"}, nil},
		{"help healthcheck", []string{"help", "healthcheck"},
			[]string{"paymock healthcheck [--addr host:port]"}, nil},
		{"report -h", []string{"report", "-h"},
			[]string{"Usage:\n  paymock report --url URL --api-key KEY [flags]", "--min-calls N", "(default 1; 0 turns it off)"},
			[]string{"--webhook-retry", "--public-url"}},
		{"report -h among mistakes", []string{"report", "--bogus", "-h"},
			[]string{"paymock report --url URL --api-key KEY [flags]"}, nil},
		{"help report", []string{"help", "report"},
			[]string{"paymock report --url URL --api-key KEY [flags]"}, nil},
		{"version -h", []string{"version", "-h"}, []string{"Usage: paymock version"}, nil},
		{"-h lists the new flags", []string{"-h"},
			[]string{"--max-merchants n  (env PAYMOCK_MAX_MERCHANTS, default \"10000\")",
				"--merchant-idle-ttl duration  (env PAYMOCK_MERCHANT_IDLE_TTL, default \"24h\")",
				"--faults file  (env PAYMOCK_FAULTS)",
				"--metrics  (env PAYMOCK_METRICS, default \"true\")",
				"--store memory|url  (env PAYMOCK_STORE, default \"memory\")",
				`see "paymock healthcheck -h"`, `see "paymock report -h"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(context.Background(), tt.args, nil)
			if code != 0 || stderr != "" {
				t.Fatalf("exit code = %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.mustLack {
				if strings.Contains(stdout, w) {
					t.Errorf("help shows serve's %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestRun_UsageListsEveryCommand(t *testing.T) {
	// The commands run accepts are those its unknown-command error names,
	// and help besides; the usage must show each on a line of its own.
	_, stderr, code := runCLI(context.Background(), []string{"no-such-command"}, nil)
	_, list, ok := strings.Cut(stderr, "(want ")
	if code != 2 || !ok {
		t.Fatalf("an unknown command: exit %d, %q; want 2 and the commands wanted", code, stderr)
	}
	list, _, _ = strings.Cut(list, ")")
	commands := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ","), func(r rune) bool { return r == ',' || r == ' ' })
	commands = append(commands, "help")
	if len(commands) < 5 {
		t.Fatalf("commands %v from %q, want serve, healthcheck, report, version and help at least", commands, stderr)
	}
	for _, args := range [][]string{{"-h"}, {"help"}} {
		stdout, _, _ := runCLI(context.Background(), args, nil)
		usage, _, _ := strings.Cut(stdout, "\nFlags:")
		for _, c := range commands {
			if !strings.Contains(usage, "\n  paymock "+c+" ") && !strings.Contains(usage, "\n  paymock ["+c+"] ") {
				t.Errorf("paymock %s: the usage lists no %q line:\n%s", strings.Join(args, " "), c, usage)
			}
		}
	}
}

func TestRun_FlagHelpSaysWhatTheDocsSay(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(` \(\[[^]]*\]\([^)]*\)\)`)
	for _, name := range []string{"seed", "scenarios", "max-payments"} {
		t.Run(name, func(t *testing.T) {
			var row string
			for _, line := range strings.Split(string(docs), "\n") {
				if strings.HasPrefix(line, "| `--"+name+" ") {
					row = line
				}
			}
			cols := strings.Split(row, " | ")
			if len(cols) < 4 {
				t.Fatalf("docs/configuration.md has no row of --%s", name)
			}
			want := strings.TrimSuffix(link.ReplaceAllString(strings.ReplaceAll(cols[3], "`", ""), ""), " |")
			i := slices.IndexFunc(flagSpecs, func(s flagSpec) bool { return s.name == name })
			if i < 0 {
				t.Fatalf("no flag --%s", name)
			}
			got, _, _ := strings.Cut(flagSpecs[i].usage, " (default ")
			if got != want {
				t.Errorf("--%s help says\n%s\nthe docs say\n%s", name, got, want)
			}
			stdout, _, _ := runCLI(context.Background(), []string{"-h"}, nil)
			if !strings.Contains(stdout, got) {
				t.Errorf("paymock -h does not show --%s's help %q", name, got)
			}
		})
	}
}
