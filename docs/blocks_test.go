//go:build unix

// Reading the docs: fenced blocks, the docs-test marker before each, and
// the commands and shown output inside a shell block.

package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// block is one fenced block of a Markdown file, with the marker that says
// how it is exercised.
type block struct {
	file   string // relative to the repository, e.g. docs/faults.md
	line   int    // of the opening fence, 1-based
	lang   string // the info string's first word: sh, console, go, json...
	text   string // the content, each line ending in "\n"
	marker marker
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// marker is a parsed <!-- docs-test: KIND ARGS +OPTION... --> comment.
type marker struct {
	kind string // one of the kinds below
	arg  string // the reason, path or flags, as written
	// needs names a command or facility the block requires; without it
	// the block is reported and left out, never passed silently.
	needs []string
	retry bool // run a command again until its output matches (a few seconds)
}

// The marker kinds.
const (
	kindSkip       = "skip"       // skip: REASON, for what cannot run here
	kindCopy       = "copy"       // copy PATH: the block is a region of PATH, byte for byte
	kindServe      = "serve"      // serve FLAGS: a new session with paymock started with FLAGS
	kindSession    = "session"    // session: a new session, no server yet
	kindRun        = "run"        // run: the same session as the block before
	kindBackground = "background" // background: start the command, wait for its shown output
	kindOutput     = "output"     // output: the output of the last command (or of "background")
	kindWrite      = "write"      // write NAME: the block is saved as NAME in the session's folder
)

var markerRE = regexp.MustCompile(`^<!--\s*docs-test:\s*(.*?)\s*-->$`)

// parseMarker reads the inside of a docs-test comment.
func parseMarker(s string) (marker, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	if k, reason, ok := strings.Cut(strings.TrimSpace(s), ":"); ok && k == kindSkip {
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return marker{}, fmt.Errorf("skip needs a reason: <!-- docs-test: skip: why it cannot run here -->")
		}
		return marker{kind: kindSkip, arg: reason}, nil
	}
	m := marker{kind: kind}
	var args []string
	for _, w := range strings.Fields(rest) {
		switch {
		case w == "+retry":
			m.retry = true
		case strings.HasPrefix(w, "+needs="):
			m.needs = append(m.needs, strings.TrimPrefix(w, "+needs="))
		case strings.HasPrefix(w, "+"):
			return marker{}, fmt.Errorf("unknown option %s (want +retry or +needs=TOOL)", w)
		default:
			args = append(args, w)
		}
	}
	m.arg = strings.Join(args, " ")
	switch kind {
	case kindCopy, kindWrite:
		if m.arg == "" || len(args) != 1 {
			return marker{}, fmt.Errorf("%s takes one path", kind)
		}
	case kindServe:
	case kindSession, kindRun, kindBackground, kindOutput:
		if m.arg != "" && !(kind == kindOutput && m.arg == kindBackground) {
			return marker{}, fmt.Errorf("%s takes no argument, got %q", kind, m.arg)
		}
	case kindSkip:
		return marker{}, fmt.Errorf("skip needs a reason: <!-- docs-test: skip: why it cannot run here -->")
	default:
		return marker{}, fmt.Errorf("unknown kind %q (want skip:, copy, serve, session, run, background, output or write)", kind)
	}
	return m, nil
}

// readBlocks returns every fenced block of a Markdown file with its
// marker. A block without a marker, a marker without a block, or a fence
// the reader would not see as one at column 0 is an error: nothing in the
// docs goes unchecked by accident.
func readBlocks(root, rel string) ([]block, error) {
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var (
		blocks   []block
		problems []string
		pending  *marker // the last marker, waiting for its block
		pendLine int
	)
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		trimmed := strings.TrimSpace(line)
		if m := markerRE.FindStringSubmatch(trimmed); m != nil {
			mk, err := parseMarker(m[1])
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", rel, i+1, err))
				continue
			}
			if pending != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: a docs-test marker with no block after it", rel, pendLine))
			}
			pending, pendLine = &mk, i+1
			continue
		}
		if strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(line, "```") {
			problems = append(problems, fmt.Sprintf("%s:%d: an indented fence; put code blocks at column 0 so the docs test reads them", rel, i+1))
			continue
		}
		if !strings.HasPrefix(line, "```") {
			if trimmed != "" && pending != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: a docs-test marker with text, not a block, after it", rel, pendLine))
				pending = nil
			}
			continue
		}
		fence := line[:len(line)-len(strings.TrimLeft(line, "`"))]
		lang, _, _ := strings.Cut(strings.TrimSpace(line[len(fence):]), " ")
		b := block{file: rel, line: i + 1, lang: lang}
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimRight(lines[i], "\r\n") == fence {
				closed = true
				break
			}
			b.text += strings.TrimRight(lines[i], "\r\n") + "\n"
		}
		if !closed {
			problems = append(problems, fmt.Sprintf("%s: a block that is never closed", b))
			break
		}
		if pending == nil {
			problems = append(problems, fmt.Sprintf("%s: a %q block with no <!-- docs-test: ... --> marker before it saying how it is exercised", b, lang))
			continue
		}
		b.marker, pending = *pending, nil
		blocks = append(blocks, b)
	}
	if pending != nil {
		problems = append(problems, fmt.Sprintf("%s:%d: a docs-test marker with no block after it", rel, pendLine))
	}
	if len(problems) > 0 {
		return blocks, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return blocks, nil
}

// step is one command of a shell block and the output the doc shows for
// it.
type step struct {
	cmd     string
	want    string // the shown output, "" when none is shown
	hasWant bool
	line    int // in the Markdown file
}

// steps splits a shell block into commands. In a console block a command
// starts with "$ " and the lines after it, up to the next "$ ", are its
// output; in an sh block every line starts a command and no output is
// shown. A command goes on while a quote is open or a line ends in "\".
func steps(b block) ([]step, error) {
	lines := strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
	console := b.lang == "console"
	var out []step
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		isCmd := !console || strings.HasPrefix(line, "$ ")
		if !console && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		if !isCmd {
			if len(out) == 0 {
				if strings.TrimSpace(line) == "" {
					continue
				}
				return nil, fmt.Errorf("%s: output before any \"$ \" command", b)
			}
			s := &out[len(out)-1]
			s.want += line + "\n"
			s.hasWant = true
			continue
		}
		cmd := strings.TrimPrefix(line, "$ ")
		start := i
		for continues(cmd) {
			if i+1 >= len(lines) {
				return nil, fmt.Errorf("%s: the command at line %d never ends (an open quote or a trailing \\)", b, b.line+1+start)
			}
			i++
			cmd += "\n" + lines[i]
		}
		out = append(out, step{cmd: cmd, line: b.line + 1 + start})
	}
	for i := range out {
		out[i].want = strings.TrimRight(out[i].want, "\n")
		if strings.TrimSpace(out[i].want) == "" {
			out[i].want, out[i].hasWant = "", false
		}
	}
	return out, nil
}

// continues reports whether shell text ends inside a quote or with a
// line-continuing backslash. A comment runs to the end of its line.
func continues(s string) bool {
	var single, double, escaped, comment bool
	prev := ' '
	for _, c := range s {
		p := prev
		prev = c
		switch {
		case comment:
			comment = c != '\n'
		case escaped:
			escaped = false
		case !single && !double && c == '#' && (p == ' ' || p == '\t' || p == '\n'):
			comment = true // to the end of the line: "it's" there opens no quote
		case single:
			single = c != '\''
		case c == '\\':
			escaped = true
		case double:
			double = c != '"'
		case c == '\'':
			single = true
		case c == '"':
			double = true
		}
	}
	return single || double || escaped
}
