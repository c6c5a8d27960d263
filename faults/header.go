// The Paymock-Fault request header: a fault asked for one request.

package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// Header is the request header that asks for a fault on that request.
const Header = paymock.FaultHeader

// HeaderRuleID is the ID (and Source) of a rule read from the header.
const HeaderRuleID = paymock.FaultHeaderRuleID

const headerForms = "accepted: status=503, status=429; retry_after=3, delay=1500ms, delay=2s; status=504 or reset, " +
	"each optionally followed by ; when=after"

// ParseHeader reads a Paymock-Fault value such as "status=503",
// "status=429; retry_after=3", "delay=1500ms", "delay=2s; status=504" or
// "reset", each optionally with "; when=after". The rule is normalized,
// matches any operation and has ID "header". A malformed value is an
// invalid_request_error with param Paymock-Fault that says what was wrong
// and what is accepted.
func ParseHeader(v string) (Rule, error) {
	r := Rule{ID: HeaderRuleID, Source: HeaderRuleID, Target: TargetAPI, Operation: Wildcard}
	var problems []string
	seen := map[string]bool{}
	if strings.TrimSpace(v) == "" {
		problems = append(problems, "the value is empty")
	} else {
		for part := range strings.SplitSeq(v, ";") {
			part = strings.TrimSpace(part)
			key, val, hasVal := strings.Cut(part, "=")
			key, val = strings.TrimSpace(key), strings.TrimSpace(val)
			switch {
			case part == "":
				problems = append(problems, "an empty setting between semicolons")
				continue
			case seen[key] && knownHeaderKey(key):
				problems = append(problems, key+" is given twice")
				continue
			case seen[key]:
				continue // an unknown setting is named once, however often it is sent
			}
			seen[key] = true
			if p := setHeaderField(&r, key, val, hasVal); p != "" {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) == 0 {
		for _, vl := range r.Validate() {
			if vl.Code == "parameter_missing" {
				// Validate speaks of delay_ms; the header's word is delay.
				vl.Message = "no effect: give status, delay or reset"
			}
			problems = append(problems, vl.Message)
		}
	}
	if len(problems) > 0 {
		// The value may be as long as the server's header limit: the
		// message names the first few problems only, so it stays short
		// in the answer and in the journal.
		if n := len(problems); n > maxHeaderProblems {
			problems = append(problems[:maxHeaderProblems], fmt.Sprintf("and %d more", n-maxHeaderProblems))
		}
		msg := fmt.Sprintf("%s %q: %s; %s", Header, clip(v, 100), strings.Join(problems, "; "), headerForms)
		return Rule{}, paymock.Invalid(paymock.Violation{Param: Header, Code: "parameter_invalid", Message: msg})
	}
	return r.Normalize(), nil
}

// maxHeaderProblems is how many problems of one header value a message
// names.
const maxHeaderProblems = 5

// knownHeaderKey reports whether key is a setting of the header.
func knownHeaderKey(key string) bool {
	switch key {
	case "status", "retry_after", "delay", "when", "reset":
		return true
	}
	return false
}

// setHeaderField applies one key=value setting, or says what is wrong.
func setHeaderField(r *Rule, key, val string, hasVal bool) string {
	if key == "reset" {
		if hasVal {
			return "reset takes no value"
		}
		r.Reset = true
		return ""
	}
	if !hasVal || val == "" {
		switch key {
		case "status", "retry_after", "delay", "when":
			return key + " needs a value, as in " + key + "=" + example(key)
		}
		return fmt.Sprintf("unknown setting %q", clip(key, 40))
	}
	switch key {
	case "status":
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Sprintf("status %q is not a number", clip(val, 20))
		}
		r.Status = n
	case "retry_after":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Sprintf("retry_after %q is not a whole number of seconds", clip(val, 20))
		}
		r.RetryAfter = n
	case "delay":
		d, err := time.ParseDuration(val)
		switch {
		case err != nil:
			return fmt.Sprintf("delay %q is not a duration such as 1500ms or 2s", clip(val, 20))
		case d < 0:
			return "delay must not be negative"
		case d > MaxDelayMS*time.Millisecond:
			return "delay must be at most 10m"
		case d%time.Millisecond != 0:
			return "delay is counted in whole milliseconds"
		}
		r.DelayMS = int(d / time.Millisecond)
	case "when":
		if val != string(WhenBefore) && val != string(WhenAfter) {
			return fmt.Sprintf("when %q is not a moment: want before or after", clip(val, 20))
		}
		r.When = When(val)
	default:
		return fmt.Sprintf("unknown setting %q", clip(key, 40))
	}
	return ""
}

func example(key string) string {
	switch key {
	case "status":
		return "503"
	case "retry_after":
		return "3"
	case "delay":
		return "1500ms"
	}
	return "after"
}

// clip keeps a quoted client value short in messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
