// Package composetest reads the example compose files as docker compose
// does, for the tests that run their settings without docker: every
// ${VAR}, ${VAR:-default}, ${VAR-default} and $VAR in a value replaced
// from an environment the test chooses. A test can so publish on ports of
// its own and check that what a file derives from them (the port of its
// checkout links) follows, as it does under docker compose.
package composetest

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Read decodes the compose file at path into v, its values interpolated
// from env as docker compose interpolates them from the shell's.
func Read(path string, env map[string]string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := interpolate(&doc, env, map[*yaml.Node]bool{}); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := doc.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// interpolate replaces the variables of every value under n, each node
// once: an alias is the node it names, which is reached where it is
// defined, and a second pass would read a "$$" already made "$" again.
func interpolate(n *yaml.Node, env map[string]string, done map[*yaml.Node]bool) error {
	if done[n] || n.Kind == yaml.AliasNode {
		return nil
	}
	done[n] = true
	switch n.Kind {
	case yaml.ScalarNode:
		s, err := Interpolate(n.Value, env)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		n.Value = s
	case yaml.MappingNode:
		// Keys are not interpolated; values are.
		for i := 1; i < len(n.Content); i += 2 {
			if err := interpolate(n.Content[i], env, done); err != nil {
				return err
			}
		}
	default:
		for _, c := range n.Content {
			if err := interpolate(c, env, done); err != nil {
				return err
			}
		}
	}
	return nil
}

var variable = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// Interpolate replaces the variables of one value: $$ is a $, ${VAR} and
// $VAR are VAR or empty, ${VAR:-default} is the default when VAR is unset
// or empty, ${VAR-default} when it is unset. The error forms (${VAR:?},
// ${VAR?}) are refused: the examples use none.
func Interpolate(s string, env map[string]string) (string, error) {
	var err error
	out := variable.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := variable.FindStringSubmatch(m)
		name, op, def := sub[1], sub[2], sub[3]
		if name == "" {
			name = sub[4]
		}
		value, set := env[name]
		switch op {
		case ":-":
			if value == "" {
				return def
			}
		case "-":
			if !set {
				return def
			}
		case ":?", "?":
			err = fmt.Errorf("%s: the ${VAR?error} form is not supported", m)
		}
		return value
	})
	return out, err
}

// HostPort is the host port of a short-syntax ports entry: "8080" of
// "8080:8080", "28080" of "127.0.0.1:28080:8080", "" of "8080" (docker
// picks one then).
func HostPort(entry string) string {
	parts := strings.Split(entry, ":")
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2]
}
