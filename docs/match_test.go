//go:build unix

// Matching the output a doc shows against what a command printed: the
// stable parts exactly, the parts that vary from run to run by pattern.

package docs_test

import (
	"regexp"
	"strconv"
	"strings"
)

// ports maps the ports the docs are written with to the ones a session
// really uses: 8080 for paymock, 9000 for a webhook receiver.
type ports struct{ paymock, hooks int }

// The parts of shown output that vary by run and are matched by kind.
var (
	// An RFC 3339 time (payments, logs) or a Go log prefix.
	rfc3339RE  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z`)
	goLogRE    = regexp.MustCompile(`\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`)
	commitRE   = regexp.MustCompile(` \(commit [0-9a-f]{12}\)`)
	docPortRE  = regexp.MustCompile(`(?:localhost|127\.0\.0\.1|\[::\])?:(8080|9000)\b`)
	ellipsisRE = regexp.MustCompile(`\.\.\.`)
)

// pattern turns shown output into a regular expression. "..." stands for
// anything on its line, and a line of only "..." for any number of
// lines. Times, Go log prefixes and build commits match any value of
// their form; ports 8080 and 9000 match the session's, with any host.
// In JSON mode (a pretty-printed json block) all whitespace is flexible,
// so an indented document matches the compact one the server sends.
func pattern(want string, p ports, json bool) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(want, "\n"), "\n")
	for i, line := range lines {
		last := i == len(lines)-1
		if !json && strings.TrimSpace(line) == "..." {
			b.WriteString(`(?:[^\n]*\n)*?`)
			if last {
				b.WriteString(`[^\n]*`)
			}
			continue
		}
		b.WriteString(linePattern(strings.TrimRight(line, " \t"), p, json))
		if !last {
			if json {
				b.WriteString(`\s*`)
			} else {
				b.WriteString(`\n`)
			}
		}
	}
	return b.String()
}

// linePattern is pattern for one line.
func linePattern(line string, p ports, json bool) string {
	type span struct {
		start, end int
		re         string
	}
	var spans []span
	add := func(re *regexp.Regexp, repl func(m []int) string) {
		for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
			overlaps := false
			for _, s := range spans {
				if m[0] < s.end && s.start < m[1] {
					overlaps = true
				}
			}
			if !overlaps {
				spans = append(spans, span{m[0], m[1], repl(m)})
			}
		}
	}
	anyChars := `[^\n]*?`
	if json {
		anyChars = `.*?`
	}
	add(ellipsisRE, func([]int) string { return anyChars })
	add(rfc3339RE, func([]int) string { return `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z` })
	add(goLogRE, func([]int) string { return `\d{4}/\d\d/\d\d \d\d:\d\d:\d\d` })
	// A build without VCS stamping (GOFLAGS=-buildvcs=false) shows no commit.
	add(commitRE, func([]int) string { return `(?: \(commit [0-9a-f]{12}(?:, modified)?\))?` })
	add(docPortRE, func(m []int) string {
		port := p.paymock
		if line[m[2]:m[3]] == "9000" {
			port = p.hooks
		}
		return `[^\s"/]*:` + strconv.Itoa(port)
	})
	var b strings.Builder
	literal := func(s string) {
		// Runs of blanks are flexible (aligned columns, indentation), but
		// never vanish between two words.
		for len(s) > 0 {
			i := strings.IndexAny(s, " \t")
			if i < 0 {
				b.WriteString(regexp.QuoteMeta(s))
				return
			}
			b.WriteString(regexp.QuoteMeta(s[:i]))
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if i > 0 && j < len(s) && isWord(s[i-1]) && isWord(s[j]) {
				b.WriteString(`[ \t]+`)
			} else {
				b.WriteString(`[ \t]*`)
			}
			s = s[j:]
		}
	}
	pos := 0
	for len(spans) > 0 {
		// Earliest span first.
		k := 0
		for i := range spans {
			if spans[i].start < spans[k].start {
				k = i
			}
		}
		s := spans[k]
		spans = append(spans[:k], spans[k+1:]...)
		literal(line[pos:s.start])
		b.WriteString(s.re)
		pos = s.end
	}
	literal(line[pos:])
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// normalize prepares a command's real output for matching: CRLF as LF,
// no trailing blanks on a line, no trailing newlines.
func normalize(got string) string {
	got = strings.ReplaceAll(got, "\r\n", "\n")
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// matches reports whether got is the shown output want: all of it, or
// (prefix) its beginning, for a stream still being written.
func matches(want, got string, p ports, json, prefix bool) (bool, error) {
	expr := `^(?:` + pattern(want, p, json) + `)`
	if !prefix {
		expr += `$`
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return false, err
	}
	return re.MatchString(normalize(got)), nil
}
