// Fuzz targets for what faults reads from outside: the Paymock-Fault
// header a client sends and the rule files an operator writes. Neither
// may panic, and every refusal must speak the user's words, short enough
// to send back or log.

package faults_test

import (
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/faults"
	"github.com/paymock/paymock/memory"
)

// maxHeaderMessage bounds the message of a refused Paymock-Fault header.
// The header can be as long as the server's header limit (64 KiB), and
// the message goes back in the answer and into the journal, so it must
// not grow with what the client sent (quoting escapes each byte that is
// not UTF-8 as four characters, hence the room).
const maxHeaderMessage = 2048

// goTypeDump finds Go's words leaking into a message meant for a user:
// package-qualified types, pointer types, yaml tags.
var goTypeDump = regexp.MustCompile(`\b(faults|paymock|yaml|main|lifecycle)\.[A-Za-z]|\*(int|float64|bool|string)\b|\bfloat64\b|!!(str|int|float|bool|map|seq|null)\b|\[\](string|int)`)

func FuzzParseHeader(f *testing.F) {
	for _, v := range []string{
		"status=503", "status=429; retry_after=3", "delay=1500ms", "delay=2s; status=504", "reset",
		"reset; when=after", "status=503; when=after", "", " ; ", "status=418", "status", "status=",
		"delay=-1s", "delay=11m", "delay=1.5ns", "reset=1", "when=later", "status=503;status=503",
		"retry_after=3", "status=429; retry_after=-1", "status=503; reset", "colour=red", "status=5e2",
		"a;b;c;d;e;f;g;h;i;j;k;l;m;n;o;p", "status=\xff\xfe", "delay=9223372036854775807ns",
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, err := faults.ParseHeader(v)
		if err != nil {
			checkHeaderRefusal(t, v, err)
			return
		}
		if vs := r.Validate(); len(vs) > 0 {
			t.Fatalf("ParseHeader(%q) accepted a rule that does not validate: %+v", v, vs)
		}
		if r.ID != faults.HeaderRuleID || r.Source != faults.HeaderRuleID || r.Target != faults.TargetAPI ||
			r.Operation != faults.Wildcard || r.Times != nil || r.Probability == nil || *r.Probability != 1 {
			t.Fatalf("ParseHeader(%q) = %+v: want a header rule for every operation, always firing", v, r)
		}
		if r.When != faults.WhenBefore && r.When != faults.WhenAfter {
			t.Fatalf("ParseHeader(%q): when %q is neither before nor after", v, r.When)
		}
		if (r.APIError() != nil) != (r.Status != 0) {
			t.Fatalf("ParseHeader(%q): status %d but APIError %v", v, r.Status, r.APIError())
		}
		if !reflect.DeepEqual(r.Normalize(), r) {
			t.Fatalf("ParseHeader(%q) = %+v is not normalized", v, r)
		}
		// What was read, written back in the header's own form, reads the same.
		again, err := faults.ParseHeader(headerOf(r))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("ParseHeader(%q) = %+v, but its own form %q reads as %+v, %v", v, r, headerOf(r), again, err)
		}
	})
}

// checkHeaderRefusal checks the error of a refused header value: one
// invalid_request_error naming the header, in plain words, short.
func checkHeaderRefusal(t *testing.T, v string, err error) {
	t.Helper()
	e, ok := paymock.AsError(err)
	if !ok {
		t.Fatalf("ParseHeader(%q): error %T %v is not a paymock.Error", v, err, err)
	}
	if e.Type != paymock.InvalidRequest || e.Param != faults.Header || e.Code != "parameter_invalid" || len(e.Violations) != 1 {
		t.Fatalf("ParseHeader(%q): error %+v, want one parameter_invalid of %s", v, e, faults.Header)
	}
	if len(e.Message) > maxHeaderMessage {
		t.Fatalf("ParseHeader of a %d-byte value: message of %d bytes, want at most %d: %.300s...",
			len(v), len(e.Message), maxHeaderMessage, e.Message)
	}
	if !utf8.ValidString(e.Message) {
		t.Fatalf("ParseHeader(%q): message is not UTF-8: %q", v, e.Message)
	}
	if goTypeDump.MatchString(e.Message) {
		t.Fatalf("ParseHeader(%q): message speaks Go: %s", v, e.Message)
	}
}

// headerOf writes a header rule in the Paymock-Fault form.
func headerOf(r faults.Rule) string {
	var parts []string
	if r.Status != 0 {
		parts = append(parts, "status="+strconv.Itoa(r.Status))
	}
	if r.RetryAfter != 0 {
		parts = append(parts, "retry_after="+strconv.Itoa(r.RetryAfter))
	}
	if r.DelayMS != 0 {
		parts = append(parts, "delay="+strconv.Itoa(r.DelayMS)+"ms")
	}
	if r.Reset {
		parts = append(parts, "reset")
	}
	parts = append(parts, "when="+string(r.When))
	return strings.Join(parts, "; ")
}

func FuzzParse(f *testing.F) {
	// The committed corpus under testdata/fuzz/FuzzParse holds the rule
	// files of testdata/ and more; these are the smallest cases.
	for _, s := range []string{
		"- status: 503\n",
		"- target: webhooks\n  duplicate: 2\n",
		"[]\n",
		"",
		"status: 503\n",
		"- {operation: createPayment, status: 503, times: 2, when: after}\n",
		"- {target: webhooks, reorder: true, window_ms: 60001}\n",
		"- status: [503]\n",
		"- &a {status: 503}\n- *a\n",
		"- probability: .nan\n  status: 503\n",
	} {
		f.Add(s)
	}
	ops := faults.DefaultOperations()
	f.Fuzz(func(t *testing.T, data string) {
		const name = "rules.yaml"
		rules, err := faults.Parse(name, []byte(data), ops...)
		if err != nil {
			if rules != nil {
				t.Fatalf("Parse refused the file but returned %d rules", len(rules))
			}
			checkFileErrors(t, data, err, name)
			return
		}
		if len(rules) == 0 {
			t.Fatalf("Parse accepted %q with no rules", data)
		}
		for i, r := range rules {
			if vs := r.ValidateFor(ops); len(vs) > 0 {
				t.Fatalf("rule %d of %q does not validate: %+v", i+1, data, vs)
			}
			if !reflect.DeepEqual(r.Normalize(), r) {
				t.Fatalf("rule %d of %q is not normalized: %+v", i+1, data, r)
			}
			if r.ID != "" || !strings.HasPrefix(r.Source, name+":") {
				t.Fatalf("rule %d of %q: id %q, source %q", i+1, data, r.ID, r.Source)
			}
		}
		// What a file accepts, a rule set takes, and matching it is safe.
		set, err := faults.New(faults.Config{Store: memory.NewFaultRules(), Seed: 1, FileRules: rules, Operations: ops})
		if err != nil {
			t.Fatalf("faults.New refused rules Parse accepted from %q: %v", data, err)
		}
		for _, op := range ops {
			if _, _, err := set.MatchAPI(t.Context(), "mer_fuzz", op); err != nil {
				t.Fatal(err)
			}
		}
		for _, et := range faults.EventTypes() {
			if _, _, err := set.MatchWebhook(t.Context(), "mer_fuzz", string(et)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// checkFileErrors checks a refused file: every error is a *FileError of
// that file at a real line, in plain words.
func checkFileErrors(t *testing.T, data string, err error, name string) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lines := lineCount(data)
	for _, e := range errs {
		var fe *faults.FileError
		if !errors.As(e, &fe) {
			t.Fatalf("Parse(%q): error %T %v is not a *FileError", data, e, e)
		}
		if fe.File != name || fe.Line < 1 || fe.Line > lines+1 || fe.Reason == "" {
			t.Fatalf("Parse(%q): error at %s:%d (file has %d lines): %q", data, fe.File, fe.Line, lines, fe.Reason)
		}
		if goTypeDump.MatchString(fe.Reason) {
			t.Fatalf("Parse(%q): message speaks Go: %s", data, fe.Reason)
		}
	}
}

// lineCount is an upper bound of the lines YAML sees in data: it breaks
// lines at \r and at NEL, LS and PS too.
func lineCount(data string) int {
	n := 1
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += strings.Count(data, br)
	}
	return n
}

// Found by FuzzParseHeader: a repeated unknown setting was echoed raw
// ("\x87 is given twice"), so the answer carried bytes that are not
// UTF-8, and every distinct setting added to the message without bound.
func TestParseHeader_RefusalIsUTF8AndBrief(t *testing.T) {
	many := make([]string, 2000)
	for i := range many {
		many[i] = "k" + strconv.Itoa(i)
	}
	cases := []struct {
		name, value string
		want        string // a fragment of the message
	}{
		{"repeated unknown bytes", "\x87;\x87", `unknown setting "\x87"`},
		{"repeated unknown setting", "colour=red; colour=blue", `unknown setting "colour"`},
		{"repeated known setting", "status=503; status=500", "status is given twice"},
		{"thousands of settings", strings.Join(many, ";"), "and 1995 more"},
		{"a whole header limit of one setting", strings.Repeat("x", 64<<10), `unknown setting "xxxx`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := faults.ParseHeader(c.value)
			if err == nil {
				t.Fatal("accepted")
			}
			checkHeaderRefusal(t, c.value, err)
			if msg := err.Error(); !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not contain %q", msg, c.want)
			}
			if c.name == "repeated unknown setting" && strings.Count(err.Error(), "unknown setting") != 1 {
				t.Errorf("message names the unknown setting more than once: %s", err)
			}
		})
	}
}
