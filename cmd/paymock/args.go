// Reading a command line against the flags of one command, with every
// mistake named as the user typed it and gathered into one report.

package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/paymock/paymock/internal/typo"
)

// argSpec is one flag a command accepts.
type argSpec struct {
	name   string
	isBool bool // takes no value: --metrics, --metrics=false
}

// parsedArgs is a command line read against a command's flags.
type parsedArgs struct {
	// values holds every value given to each flag, in order.
	values map[string][]string
	// help is set when -h, -help or --help was given anywhere before "--".
	help bool
	// errs are the mistakes of the command line itself (unknown flags,
	// missing values, stray arguments), each worded for the user.
	errs []error
}

// set reports whether the flag was given on the command line.
func (p *parsedArgs) set(name string) bool { _, ok := p.values[name]; return ok }

// last is the last value given to a flag, or "".
func (p *parsedArgs) last(name string) string {
	v := p.values[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseArgs reads args the way Go's flag package does (-name and --name,
// a value after = or as the next argument, a bool flag alone means true,
// "--" ends the flags) but does not stop at the first mistake: every
// unknown flag, missing value and stray argument is collected, named as
// typed (--bogus stays --bogus), so that one run reports them all. cmd
// names the command in the stray-argument hint ("paymock report --url").
func parseArgs(cmd string, args []string, specs []argSpec) *parsedArgs {
	p := &parsedArgs{values: map[string][]string{}}
	byName := make(map[string]argSpec, len(specs))
	for _, s := range specs {
		byName[s.name] = s
	}
	var stray []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			stray = append(stray, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			stray = append(stray, a)
			// "--metrics false" reads as --metrics then a stray "false":
			// say how to write it.
			if i > 0 {
				if s, ok := byName[flagName(args[i-1])]; ok && s.isBool && !strings.Contains(args[i-1], "=") {
					if _, err := strconv.ParseBool(a); err == nil {
						p.errs = append(p.errs, fmt.Errorf("%s takes its value after =: write %s=%s", args[i-1], args[i-1], a))
						stray = stray[:len(stray)-1]
					}
				}
			}
			continue
		}
		typed, value, hasValue := strings.Cut(a, "=")
		name := flagName(typed)
		if name == "" || strings.HasPrefix(name, "-") {
			p.errs = append(p.errs, fmt.Errorf("bad flag syntax %q: want --name or --name=value", a))
			continue
		}
		if name == "h" || name == "help" {
			p.help = true
			continue
		}
		s, ok := byName[name]
		if !ok {
			msg := "unknown flag " + typed
			if near := nearest(name, specs); near != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", near)
			}
			p.errs = append(p.errs, errors.New(msg))
			// Its value, if it has one, is not a stray argument too:
			// "--bogus 1" is one mistake, not two.
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		switch {
		case s.isBool && !hasValue:
			value = "true"
		case s.isBool:
			if _, err := strconv.ParseBool(value); err != nil {
				p.errs = append(p.errs, fmt.Errorf("invalid %s: %q: want true or false", typed, value))
				continue
			}
		case !hasValue:
			if i+1 == len(args) {
				p.errs = append(p.errs, fmt.Errorf("%s needs a value: %s %s", typed, typed, placeholder(name)))
				continue
			}
			i++
			value = args[i]
		}
		p.values[name] = append(p.values[name], value)
	}
	for _, a := range stray {
		p.errs = append(p.errs, fmt.Errorf("unexpected argument %q (every option is a flag: %s --flag value)", a, cmd))
	}
	return p
}

// flagName is the name of a flag as typed: "--addr" -> "addr", "-addr" ->
// "addr"; "" when arg is not a flag.
func flagName(arg string) string {
	arg, _, _ = strings.Cut(arg, "=")
	if strings.HasPrefix(arg, "--") {
		return arg[2:]
	}
	if strings.HasPrefix(arg, "-") {
		return arg[1:]
	}
	return ""
}

// placeholder is the help text's name for a flag's value.
func placeholder(name string) string {
	for _, s := range flagSpecs {
		if s.name == name && s.arg != "" {
			return s.arg
		}
	}
	for _, s := range reportFlags {
		if s.name == name && s.arg != "" {
			return s.arg
		}
	}
	return "value"
}

// nearest is the flag whose name is closest to name when it is close
// enough to be a likely typo (at most 2 typos apart), else "".
func nearest(name string, specs []argSpec) string {
	if to := otherToolsName(name); to != "" {
		for _, s := range specs {
			if s.name == to {
				return to
			}
		}
	}
	best, bestDist := "", 3
	for _, s := range specs {
		if d := typo.Distance(name, s.name); d < bestDist {
			best, bestDist = s.name, d
		}
	}
	if len(name) < 3 {
		return "" // "-x" is close to every short name
	}
	return best
}

// otherToolsName is paymock's name for what other servers call name, too
// far from ours for an edit distance to find: --port means --addr
// (":8081"), --database-url means --store. "" when there is none.
func otherToolsName(name string) string {
	switch name {
	case "port", "listen", "bind", "host":
		return "addr"
	case "database-url", "db", "database":
		return "store"
	}
	return ""
}
