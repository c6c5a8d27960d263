//go:build unix

// Package docs_test checks that the project's documentation is true: every
// fenced block of README.md and docs/*.md is exercised, and a block that
// does not say how is a failure.
//
// Before each block a comment says how:
//
//	<!-- docs-test: serve FLAGS -->    a new session: paymock started with FLAGS, then the block's commands
//	<!-- docs-test: session -->        a new session with no server (the block may start one)
//	<!-- docs-test: run -->            more commands in the same session
//	<!-- docs-test: background -->     a long-running command (a receiver), started and waited for; it
//	                                   stops the session's previous one, as Ctrl-C in its terminal would
//	<!-- docs-test: output -->         the output of the last command (output background: of the receiver)
//	<!-- docs-test: write NAME -->     a file the next commands use, saved as NAME
//	<!-- docs-test: copy PATH -->      a region of PATH, byte for byte, where PATH is compiled and tested
//	<!-- docs-test: skip: REASON -->   only for what cannot run here (a Docker engine, a CI service)
//
// +retry after a kind runs a command again until its output matches (for
// a webhook still on its way); +needs=TOOL leaves the block out, with a log
// line, on a machine without TOOL (or without PostgreSQL for
// +needs=postgres).
//
// A session is one bash process in a scratch folder standing for the
// clone: the repository's top-level entries are linked there, ./paymock is
// the binary built once for the run, and go runs in the repository (an -o
// output lands in the scratch folder, so nothing is written into the
// tree). Shell variables live from block to block. A console block's
// commands start with "$ " and the lines after one are its shown output;
// an sh block is commands only. Each command must exit 0, unless the next
// one is "echo $?", which shows its status. A command that starts paymock
// in the foreground (go run ./cmd/paymock ..., ./paymock ...) starts it in
// the background instead, stopping the session's previous one as Ctrl-C
// would, and its shown log lines are matched against the server's.
//
// What varies by run is matched by pattern, what does not is matched
// exactly: see pattern. The docs are written for port 8080 (paymock) and
// 9000 (a receiver); a session uses free loopback ports instead, through
// PAYMOCK_ADDR, ADDR and PORT in its environment and localhost:8080 and
// localhost:9000 rewritten in its commands. The docs' database,
// postgres://paymock:secret@localhost:5432/paymock, is the test's own
// throwaway one (internal/pgtest).
//
// PAYMOCK_SKIP_DOCS=1 skips running the blocks; the markers, copies and
// links are still checked.
package docs_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// root is the repository, from this package's folder.
const root = ".."

// docFiles are the Markdown files whose blocks are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		files = append(files, filepath.Join("docs", filepath.Base(g)))
	}
	return files
}

// allBlocks reads every doc's blocks, failing the test on any block
// without a valid marker.
func allBlocks(t *testing.T) map[string][]block {
	t.Helper()
	out := map[string][]block{}
	var problems []string
	for _, f := range docFiles(t) {
		bs, err := readBlocks(root, f)
		if err != nil {
			problems = append(problems, err.Error())
		}
		out[f] = bs
	}
	if len(problems) > 0 {
		t.Fatalf("blocks the docs test cannot exercise:\n%s", strings.Join(problems, "\n"))
	}
	return out
}

// TestDocs_EveryBlockIsExercised runs every doc's sessions, each doc in
// parallel with the others.
func TestDocs_EveryBlockIsExercised(t *testing.T) {
	docs := allBlocks(t)
	if os.Getenv("PAYMOCK_SKIP_DOCS") == "1" {
		t.Skip("PAYMOCK_SKIP_DOCS=1: the docs' commands are not run")
	}
	h := newHarness(t)
	counts := map[string]int{}
	for _, f := range docFiles(t) {
		for _, b := range docs[f] {
			counts[b.marker.kind+" "+b.lang]++
		}
	}
	t.Logf("blocks by marker and language: %v", counts)
	for _, f := range docFiles(t) {
		runnable := slices.ContainsFunc(docs[f], func(b block) bool {
			return b.marker.kind != kindSkip && b.marker.kind != kindCopy
		})
		if !runnable {
			continue
		}
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			h.runDoc(t, docs[f])
		})
	}
}

// harness is what every doc's sessions share: the binary and the go shim.
type harness struct {
	root string // the repository, absolute
	bin  string // paymock, built once
	shim string // a folder holding the go shim
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := &harness{root: abs, bin: filepath.Join(dir, "paymock"), shim: filepath.Join(dir, "shim")}
	build := exec.Command("go", "build", "-o", h.bin, "./cmd/paymock")
	build.Dir = abs
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/paymock: %v\n%s", err, out)
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(h.shim, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := fmt.Sprintf(`#!/usr/bin/env bash
# The docs test's go: the docs' commands run in a scratch folder standing
# for the clone, so go runs in the clone and an -o output lands in the
# scratch folder.
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = -o ] && [ $# -gt 1 ]; then args+=(-o "$(realpath -m -- "$2")"); shift 2; continue; fi
  args+=("$1"); shift
done
exec %q -C %q "${args[@]}"
`, realGo, abs)
	if err := os.WriteFile(filepath.Join(h.shim, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// env is a session's environment: the test's, without any PAYMOCK_
// setting of its own nor a GOGC or GOMEMLIMIT (which turn the binary's
// collector floor off, and the docs show its defaults), with the
// session's ports and the go shim first on PATH.
func (h *harness) env(p ports) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PAYMOCK_") || strings.HasPrefix(kv, "PATH=") ||
			strings.HasPrefix(kv, "ADDR=") || strings.HasPrefix(kv, "PORT=") ||
			strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+h.shim+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("PAYMOCK_ADDR=127.0.0.1:%d", p.paymock),
		fmt.Sprintf("ADDR=127.0.0.1:%d", p.hooks),
		fmt.Sprintf("PORT=%d", p.hooks),
	)
}

// scratch makes a doc's folder: links to the repository's top-level
// entries and a copy of the binary as ./paymock.
func (h *harness) scratch(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(h.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" || e.Name() == "paymock" {
			continue
		}
		if err := os.Symlink(filepath.Join(h.root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(h.bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "paymock"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runDoc runs one doc's blocks in order.
func (h *harness) runDoc(t *testing.T, blocks []block) {
	dir := h.scratch(t)
	p := ports{paymock: freePort(t), hooks: freePort(t)}
	pgURL := ""
	var s *session
	defer func() {
		if s != nil {
			s.close()
		}
	}()
	skipping := false // a session left out for a missing tool: its blocks too
	for _, b := range blocks {
		m := b.marker
		switch m.kind {
		case kindSkip, kindCopy:
			continue
		case kindServe, kindSession:
			skipping = false
		}
		if skipping {
			t.Logf("%s: not run: its session was left out", b)
			continue
		}
		if missing := h.missing(m.needs); missing != "" {
			t.Logf("%s: not run: this machine has no %s", b, missing)
			if m.kind == kindServe || m.kind == kindSession || m.kind == kindRun || m.kind == kindBackground {
				skipping = true
			}
			continue
		}
		if slices.Contains(m.needs, "postgres") && pgURL == "" {
			pgURL = pgtest.URL(t)
		}
		switch m.kind {
		case kindWrite:
			if err := os.WriteFile(filepath.Join(dir, m.arg), []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		case kindServe, kindSession:
			if s != nil {
				s.close()
			}
			s = newSession(t, h, dir, p, pgURL)
			if m.kind == kindServe {
				if _, err := s.startServer("./paymock " + s.rewrite(m.arg)); err != nil {
					t.Fatalf("%s: starting paymock %s: %v", b, m.arg, err)
				}
			}
		}
		if s == nil {
			t.Fatalf("%s: a %q block before any session: start one with serve or session", b, m.kind)
		}
		if err := s.runBlock(b); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
}

// missing names the first of needs this machine lacks, or "".
func (h *harness) missing(needs []string) string {
	for _, n := range needs {
		if n == "postgres" {
			if os.Getenv(pgtest.EnvSkip) == "1" {
				return "PostgreSQL (" + pgtest.EnvSkip + "=1)"
			}
			continue
		}
		if _, err := exec.LookPath(n); err != nil {
			return n
		}
	}
	return ""
}

// runBlock runs or checks one block in the session.
func (s *session) runBlock(b block) error {
	switch b.marker.kind {
	case kindOutput:
		json := b.lang == "json"
		if b.marker.arg == kindBackground {
			got, err := s.waitFor(s.background, b.text, json, outputWait)
			if err != nil {
				return fmt.Errorf("the background command's output:\n%s\ndoes not begin as shown: %v", got, err)
			}
			return nil
		}
		ok, err := matches(b.text, s.lastOutput, s.ports, json, false)
		if err != nil || !ok {
			return fmt.Errorf("the last command printed\n%s\nnot what the block shows (%v)", s.lastOutput, err)
		}
		return nil
	case kindBackground:
		st, err := steps(b)
		if err != nil {
			return err
		}
		if len(st) != 1 || !st[0].hasWant {
			return fmt.Errorf("a background block is one command and the first output it prints, to know it is ready")
		}
		if err := s.stopBackground(); err != nil {
			return err
		}
		s.n++
		s.background = filepath.Join(s.outDir, fmt.Sprintf("background-%d.out", s.n))
		pid, err := s.send(s.rewrite(st[0].cmd), s.background, true, true, commandTimeout)
		if err != nil {
			return err
		}
		s.backgroundPID = pid
		if got, err := s.waitFor(s.background, st[0].want, false, backgroundWait); err != nil {
			return fmt.Errorf("%q printed\n%s\n%v", st[0].cmd, got, err)
		}
		return nil
	}
	if b.lang != "console" && b.lang != "sh" {
		return fmt.Errorf("a %q block cannot be run: mark it copy, write, output or skip", b.lang)
	}
	st, err := steps(b)
	if err != nil {
		return err
	}
	for i, c := range st {
		cmd := s.rewrite(c.cmd)
		if isStart(cmd) {
			logs, err := s.startServer(cmd)
			if err != nil {
				return fmt.Errorf("line %d: %v", c.line, err)
			}
			if c.hasWant {
				if got, err := s.waitFor(s.server.log, c.want, false, outputWait); err != nil {
					return fmt.Errorf("line %d: paymock logged\n%s\nnot what the doc shows:\n%s\n(%v; at start: %s)", c.line, got, c.want, err, logs)
				}
			}
			continue
		}
		s.n++
		out := filepath.Join(s.outDir, fmt.Sprintf("%d.out", s.n))
		deadline := time.Now().Add(retryWait)
		for {
			rc, err := s.send(cmd, out, false, false, commandTimeout)
			if err != nil {
				return fmt.Errorf("line %d: %q: %v", c.line, c.cmd, err)
			}
			got := readFile(out)
			s.lastOutput = got
			showsStatus := i+1 < len(st) && strings.TrimSpace(st[i+1].cmd) == "echo $?"
			if rc != 0 && !showsStatus {
				return fmt.Errorf("line %d: %q exited %d (show it with a following \"echo $?\" if that is meant):\n%s", c.line, c.cmd, rc, got)
			}
			if !c.hasWant {
				break
			}
			ok, err := matches(c.want, got, s.ports, false, false)
			if err != nil {
				return fmt.Errorf("line %d: the shown output is not a pattern: %v", c.line, err)
			}
			if ok {
				break
			}
			if !b.marker.retry || time.Now().After(deadline) {
				return fmt.Errorf("line %d: %q printed\n%s\nnot what the doc shows:\n%s", c.line, c.cmd, normalize(got), c.want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// TestDocs_CopiesAreRegionsOfTestedFiles checks each copy block against
// its file, and that the file is compiled and tested (Go) or used by a
// test, a script or a doc's command (anything else).
func TestDocs_CopiesAreRegionsOfTestedFiles(t *testing.T) {
	docs := allBlocks(t)
	testSh := readFile(filepath.Join(root, "scripts", "test.sh"))
	var commands strings.Builder
	for _, bs := range docs {
		for _, b := range bs {
			if b.lang == "sh" || b.lang == "console" {
				commands.WriteString(b.text)
			}
		}
	}
	used := usedByTests(t)
	for _, f := range docFiles(t) {
		for _, b := range docs[f] {
			if b.marker.kind != kindCopy {
				continue
			}
			path := b.marker.arg
			data, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Errorf("%s: copy of %s: %v", b, path, err)
				continue
			}
			if !strings.Contains(string(data), b.text) {
				t.Errorf("%s: not a byte-for-byte region of %s; copy it again from the file", b, path)
				continue
			}
			if strings.HasSuffix(path, ".go") {
				if err := compiledAndTested(path, testSh); err != nil {
					t.Errorf("%s: %v", b, err)
				}
				continue
			}
			if !used[filepath.Base(path)] && !strings.Contains(commands.String(), path) && !strings.Contains(commands.String(), filepath.Dir(path)) {
				t.Errorf("%s: %s is used by no test, script or doc command, so the copy proves nothing", b, path)
			}
		}
	}
}

// compiledAndTested reports why a Go file would not be built and tested
// by the test command: it must be in the main module (go vet ./... and
// go test ./...) or in a nested module scripts/test.sh tests.
func compiledAndTested(path, testSh string) error {
	for dir := filepath.Dir(path); dir != "." && dir != "/"; dir = filepath.Dir(dir) {
		if strings.HasPrefix(filepath.Base(dir), "_") || filepath.Base(dir) == "testdata" {
			return fmt.Errorf("%s is under %s, which go ./... leaves out", path, dir)
		}
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
			if !strings.Contains(testSh, dir) {
				return fmt.Errorf("%s is in the module %s, which scripts/test.sh does not test", path, dir)
			}
			return nil
		}
	}
	return nil
}

// usedByTests is the set of file names that a test outside docs/ or a
// script mentions.
func usedByTests(t *testing.T) map[string]bool {
	t.Helper()
	var texts []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "test-output" || path == filepath.Join(root, "docs")) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join(root, "scripts")+"/") {
			texts = append(texts, readFile(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts, "\n")
	used := map[string]bool{}
	for _, w := range regexp.MustCompile(`[\w.-]+\.(?:ya?ml|json|mjs|js|py|sh|sql)\b`).FindAllString(all, -1) {
		used[w] = true
	}
	return used
}

// TestDocs_LinksResolve checks every relative link and #anchor of the
// docs, so moving text between files cannot leave a dead link.
func TestDocs_LinksResolve(t *testing.T) {
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		text := readFile(filepath.Join(root, f))
		prose := stripBlocks(text)
		for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s: link %s: %v", f, target, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchors(readFile(filepath.Join(root, path))), anchor) {
				t.Errorf("%s: link %s: %s has no heading with that anchor", f, target, path)
			}
		}
	}
}

// stripBlocks drops fenced blocks, whose text is not links.
func stripBlocks(text string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(stripBlocks(text)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestREADME_IsANewcomersPage keeps the README short, and its Go version
// the one go.mod asks for.
func TestREADME_IsANewcomersPage(t *testing.T) {
	readme := readFile(filepath.Join(root, "README.md"))
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; at most 300, the rest belongs in docs/", n)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readFile(filepath.Join(root, "go.mod")))
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	if !strings.Contains(readme, "Go "+m[1]) {
		t.Errorf("README.md does not name Go %s, the version go.mod asks for", m[1])
	}
}
