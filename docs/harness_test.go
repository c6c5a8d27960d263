//go:build unix

// Tests of the docs test itself: a harness that passes everything would
// prove nothing about the docs.

package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatches_StableTextExactlyVaryingPartsByPattern(t *testing.T) {
	p := ports{paymock: 41234, hooks: 41235}
	tests := []struct {
		name      string
		want, got string
		json      bool
		prefix    bool
		ok        bool
	}{
		{"same text", `{"status":"ok"}`, `{"status":"ok"}` + "\n", false, false, true},
		{"another value", `{"status":"ok"}`, `{"status":"down"}`, false, false, false},
		{"an elision inside a line", `{"id":"pay_...","amount":10.50}`, `{"id":"pay_AbC123","amount":10.50}`, false, false, true},
		{"an elision does not cross lines", `a...b`, "a\nb", false, false, false},
		{"a line of elision spans lines", "first\n...\nlast", "first\nx\ny\nlast", false, false, true},
		{"a line of elision may span none", "first\n...\nlast", "first\nlast", false, false, true},
		{"any time", `"created_at":"2026-11-21T12:59:17Z"`, `"created_at":"2031-01-02T03:04:05Z"`, false, false, true},
		{"a time is still a time", `"created_at":"2026-11-21T12:59:17Z"`, `"created_at":null`, false, false, false},
		{"a log time with milliseconds", `time=2026-11-21T12:59:10.570Z level=INFO`, `time=2031-01-02T03:04:05.001Z level=INFO`, false, false, true},
		{"a Go log prefix", `2026/11/21 12:59:29 listening`, `2031/01/02 03:04:05 listening`, false, false, true},
		{"the session's port for 8080", `http://localhost:8080/checkout/pay_...`, `http://localhost:41234/checkout/pay_x`, false, false, true},
		{"any host of the port", `addr=[::]:8080`, `addr=127.0.0.1:41234`, false, false, true},
		{"not another port", `http://localhost:8080/x`, `http://localhost:5555/x`, false, false, false},
		{"the receiver's port for 9000", `listening on :9000, POST /hooks`, `listening on 127.0.0.1:41235, POST /hooks`, false, false, true},
		{"aligned columns", "create    10  0", "create 10 0", false, false, true},
		{"columns never merge", "calls 1 0", "calls 10", false, false, false},
		{"a build commit, modified", `paymock dev (commit 9df7fb4bd47e) go1.26.8`, `paymock dev (commit 0123456789ab, modified) go1.26.8`, false, false, true},
		{"a build without VCS stamping", `paymock dev (commit 9df7fb4bd47e) go1.26.8`, `paymock dev go1.26.8`, false, false, true},
		{"the whole output", "one", "one\ntwo", false, false, false},
		{"the beginning of a stream", "one", "one\ntwo", false, true, true},
		{"indented JSON against compact", "{\n  \"a\": 1,\n  \"b\": \"x y\"\n}", `{"a":1,"b":"x y"}`, true, false, true},
		{"indented JSON with a different value", "{\n  \"a\": 1\n}", `{"a":2}`, true, false, false},
		{"special characters are literal", `a.b (c) [d]`, `aXb (c) [d]`, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := matches(tt.want, tt.got, p, tt.json, tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok {
				t.Errorf("matches(%q, %q) = %v, want %v (pattern %s)", tt.want, tt.got, ok, tt.ok, pattern(tt.want, p, tt.json))
			}
		})
	}
}

func TestSteps_SplitsCommandsAndTheirOutput(t *testing.T) {
	b := block{file: "x.md", line: 10, lang: "console", text: "$ echo 'a\nb'\na\nb\n$ curl -s x \\\n    -d '{}'\n$ true\n"}
	got, err := steps(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []step{
		{cmd: "echo 'a\nb'", want: "a\nb", hasWant: true, line: 11},
		{cmd: "curl -s x \\\n    -d '{}'", line: 15},
		{cmd: "true", line: 17},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d steps %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	sh := block{file: "x.md", line: 1, lang: "sh", text: "# a comment\nexport A=1 # it's one\n\necho \"$A\"\n"}
	got, err = steps(sh)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].cmd != "export A=1 # it's one" || got[1].cmd != `echo "$A"` || got[0].hasWant {
		t.Errorf("sh steps = %+v", got)
	}
}

func TestReadBlocks_RefusesABlockWithoutAMarker(t *testing.T) {
	tests := []struct {
		name, doc, problem string
	}{
		{"no marker", "text\n\n```sh\ntrue\n```\n", "no <!-- docs-test: ... --> marker"},
		{"a skip without a reason", "<!-- docs-test: skip: -->\n```sh\ntrue\n```\n", "skip needs a reason"},
		{"an unknown kind", "<!-- docs-test: maybe -->\n```sh\ntrue\n```\n", `unknown kind "maybe"`},
		{"a marker before text", "<!-- docs-test: run -->\nsome words\n```sh\ntrue\n```\n", "not a block, after it"},
		{"an indented fence", "<!-- docs-test: run -->\n  ```sh\n  true\n  ```\n", "an indented fence"},
		{"a block never closed", "<!-- docs-test: run -->\n```sh\ntrue\n", "never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readBlocks(dir, "x.md")
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("readBlocks = %v, want an error saying %q", err, tt.problem)
			}
		})
	}
}

func TestReadBlocks_ReadsMarkersAndOptions(t *testing.T) {
	dir := t.TempDir()
	doc := "<!-- docs-test: serve --clock frozen -->\n\n```console\n$ true\n```\n\n<!-- docs-test: run +retry +needs=python3 -->\n```sh\ntrue\n```\n<!-- docs-test: skip: needs a Docker engine -->\n```sh\ndocker run paymock\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := readBlocks(dir, "x.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 {
		t.Fatalf("got %d blocks, want 3", len(bs))
	}
	if m := bs[0].marker; m.kind != kindServe || m.arg != "--clock frozen" || bs[0].line != 3 || bs[0].text != "$ true\n" {
		t.Errorf("block 1 = %+v", bs[0])
	}
	if m := bs[1].marker; m.kind != kindRun || !m.retry || len(m.needs) != 1 || m.needs[0] != "python3" {
		t.Errorf("block 2 marker = %+v", m)
	}
	if m := bs[2].marker; m.kind != kindSkip || m.arg != "needs a Docker engine" {
		t.Errorf("block 3 marker = %+v", m)
	}
}

func TestIsStart_OnlyForegroundServes(t *testing.T) {
	tests := map[string]bool{
		"go run ./cmd/paymock":                                  true,
		"./paymock":                                             true,
		"./paymock serve --clock frozen":                        true,
		"PAYMOCK_API_KEY=sk_test_1 ./paymock --seed 7":          true,
		"go run ./cmd/paymock --webhook-url http://x:9000/hook": true,
		"./paymock version":                                     false,
		"./paymock report --url x":                              false,
		"./paymock --bogus; echo $?":                            false,
		"./paymock -h":                                          false,
		"go run ./cmd/paymock-load --url x":                     false,
		"go build -o paymock ./cmd/paymock":                     false,
	}
	for cmd, want := range tests {
		if got := isStart(cmd); got != want {
			t.Errorf("isStart(%q) = %v, want %v", cmd, got, want)
		}
	}
}
