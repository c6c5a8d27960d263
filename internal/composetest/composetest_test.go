package composetest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInterpolate_ReplacesVariablesAsDockerComposeDoes(t *testing.T) {
	env := map[string]string{"PORT": "28080", "EMPTY": ""}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a default when unset", "http://localhost:${UNSET:-8080}", "http://localhost:8080"},
		{"the value when set", "http://localhost:${PORT:-8080}", "http://localhost:28080"},
		{":- takes the default for an empty value", "${EMPTY:-d}", "d"},
		{"- keeps an empty value", "${EMPTY-d}", ""},
		{"- takes the default when unset", "${UNSET-d}", "d"},
		{"braces without a default", "${PORT}:8080", "28080:8080"},
		{"no braces", "$PORT:8080", "28080:8080"},
		{"unset is empty", "a${UNSET}b", "ab"},
		{"$$ is a dollar, not a variable", "$$PORT $${PORT}", "$PORT ${PORT}"},
		{"a shell's $( is no variable", `eval "$(scripts/image.sh)"`, `eval "$(scripts/image.sh)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Interpolate(tc.in, env)
			if err != nil || got != tc.want {
				t.Errorf("Interpolate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := Interpolate("${PORT:?needed}", env); err == nil {
		t.Error("the ${VAR:?} form was accepted")
	}
}

func TestRead_InterpolatesValuesThroughAnchorsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "compose.yml")
	err := os.WriteFile(path, []byte(`x-env: &env
  URL: http://localhost:${PORT:-8080}
  LITERAL: $$HOME
services:
  one:
    environment:
      <<: *env
    ports: ["${PORT:-8080}:8080"]
  two:
    environment: *env
    ports: ["127.0.0.1:${OTHER:-8082}:8080"]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := Read(path, map[string]string{"PORT": "28080"}, &f); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"one": "28080", "two": "8082"} {
		s := f.Services[name]
		if s.Environment["URL"] != "http://localhost:28080" || s.Environment["LITERAL"] != "$HOME" {
			t.Errorf("%s: environment %v", name, s.Environment)
		}
		if got := HostPort(s.Ports[0]); got != want {
			t.Errorf("%s: HostPort(%q) = %q, want %q", name, s.Ports[0], got, want)
		}
	}
	if got := HostPort("8080"); got != "" {
		t.Errorf("HostPort of a container port alone = %q, want none", got)
	}
}
