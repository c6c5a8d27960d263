// Fuzz targets for what the binary reads from its operator: the --config
// file and the --webhook-retry flag. Either the value is taken and the
// sandbox can run on it, or it is refused in plain words that never show
// an API key.

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/merchants"
)

// fuzzFlagKey is the --api-key every config is loaded beside, so that a
// file reusing it is refused, and never quoted.
const fuzzFlagKey = "sk_test_flag_Qm9vZGxl"

// goTypeDump finds Go's words leaking into a message meant for a user.
var goTypeDump = regexp.MustCompile(`\b(paymock|yaml|main)\.[A-Za-z]|\*(int|float64|bool|string)\b|\bfloat64\b|time\.Duration|!!(str|int|float|bool|map|seq|null)\b|\[\](string|int|paymock)`)

func FuzzLoadMerchants(f *testing.F) {
	// The committed corpus under testdata/fuzz/FuzzLoadMerchants holds
	// whole files; these are the smallest cases.
	for _, s := range []string{
		"merchants:\n  - name: acme\n    api_keys: [sk_test_acme_Zm9vYmFy]\n",
		"merchants:\n  - name: acme\n    api_keys: sk_test_acme_Zm9vYmFy\n",
		"merchants:\n  - name: acme\n    api_keys: [" + fuzzFlagKey + "]\n",
		"merchants: []\n",
		"",
		"merchants:\n  - {name: a, api_keys: [k1]}\n---\nmerchants: []\n",
		"merchants:\n  - name: acme\n    api_keys: [\"sk test\"]\n    webhooks: [{url: ftp://x, secret: nope}]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(t.TempDir(), "paymock.yaml")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := loadMerchants([]string{fuzzFlagKey}, "--api-key", path, nil)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "config file "+path) {
				t.Fatalf("loadMerchants(%q): the error does not name the file: %s", data, msg)
			}
			if !utf8.ValidString(msg) {
				t.Fatalf("loadMerchants(%q): message is not UTF-8: %q", data, msg)
			}
			if goTypeDump.MatchString(strings.ReplaceAll(msg, path, "FILE")) {
				t.Fatalf("loadMerchants(%q): message speaks Go: %s", data, msg)
			}
			for _, k := range append(apiKeys(data), fuzzFlagKey) {
				if strings.Contains(msg, k) {
					t.Fatalf("loadMerchants(%q): message shows API key %s: %s", data, k, msg)
				}
			}
			return
		}
		if len(list) < 2 {
			t.Fatalf("loadMerchants(%q) accepted a file without merchants: %+v", data, list)
		}
		names, keys := map[string]bool{}, map[string]bool{}
		for _, m := range list {
			if m.Name == "" || names[m.Name] || len(m.APIKeys) == 0 {
				t.Fatalf("loadMerchants(%q): merchant %+v: no name, a name used twice, or no key", data, m)
			}
			names[m.Name] = true
			for _, k := range m.APIKeys {
				if !paymock.WellFormedKey(k) || keys[k] {
					t.Fatalf("loadMerchants(%q): merchant %q: key %q is not a bearer token or is used twice", data, m.Name, k)
				}
				keys[k] = true
			}
		}
		for _, m := range list[1:] { // the file's; the --api-key merchant's name is made up
			if keys[m.Name] {
				t.Fatalf("loadMerchants(%q): merchant %q is named like a key, which the log and the pages would show", data, m.Name)
			}
		}
		// What the loader accepts, the sandbox's merchants take.
		if _, err := merchants.New(context.Background(), merchants.Config{Merchants: list, Store: memory.NewMerchants()}); err != nil {
			t.Fatalf("loadMerchants(%q) accepted merchants merchants.New refuses: %v", data, err)
		}
	})
}

// apiKeys lists the values given as api_keys in a config file that are
// long enough to be recognised and appear once in the file: a key that is
// also a name, say, may rightly be quoted as that name.
func apiKeys(data string) []string {
	var root yaml.Node
	if yaml.Unmarshal([]byte(data), &root) != nil {
		return nil
	}
	var keys []string
	var walk func(n *yaml.Node, underKeys bool)
	walk = func(n *yaml.Node, underKeys bool) {
		switch {
		case n == nil:
		case n.Kind == yaml.ScalarNode:
			if underKeys && len(n.Value) >= 12 && strings.Count(data, n.Value) == 1 {
				keys = append(keys, n.Value)
			}
		case n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], n.Content[i].Value == "api_keys")
			}
		default:
			for _, c := range n.Content {
				walk(c, underKeys)
			}
		}
	}
	walk(&root, false)
	return keys
}

func FuzzParseRetry(f *testing.F) {
	for _, s := range []string{
		"5s,30s,2m,10m,1h", "1s", "100ms, 1s ,10s", "", ",", "0s", "-1s", "1", "1s,,2s", "1h30m",
		"9223372036854775807ns", "9223372036854775808ns", "1e3s", "1s;2s", "２s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseRetry(s)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "delay ") || !utf8.ValidString(msg) || goTypeDump.MatchString(msg) {
				t.Fatalf("parseRetry(%q): message %q does not name the delay in plain words", s, msg)
			}
			return
		}
		if len(got) == 0 || len(got) != strings.Count(s, ",")+1 {
			t.Fatalf("parseRetry(%q) = %v: want one delay per comma-separated item", s, got)
		}
		if slices.ContainsFunc(got, func(d time.Duration) bool { return d <= 0 }) {
			t.Fatalf("parseRetry(%q) = %v: a delay that is not positive", s, got)
		}
		// The schedule written back the way the help text shows it reads
		// the same.
		parts := make([]string, len(got))
		for i, d := range got {
			parts[i] = d.String()
		}
		again, err := parseRetry(strings.Join(parts, ","))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("parseRetry(%q) = %v, but written back it reads %v, %v", s, got, again, err)
		}
	})
}

// Found by FuzzLoadMerchants: YAML the config's patterns did not expect
// came out as yaml.v3's own text, naming Go types (main.configFile,
// []string) instead of the config's terms.
func TestLoadMerchants_RefusesOddYAMLInPlainWords(t *testing.T) {
	cases := []struct {
		name, data string
		want       string // a fragment of the message
	}{
		{"an unknown top-level key with a space", "0 0: x\n", `unknown field "0 0" in the top level`},
		{"an unknown merchant key with a space", "merchants:\n  - name: acme\n    api keys: [sk_test_acme]\n",
			`unknown field "api keys" in a merchant`},
		{"an empty key", "\"\": x\n", `unknown field "" in the top level`},
		{"a tag of the user's own", "!0\n", "want a mapping with merchants:"},
		{"a tagged merchant list", "merchants: !custom x\n", "want a list of merchants"},
		{"a value over two lines", "0\r\r0", "want a mapping with merchants:"},
		{"a block of keys where a list belongs", "merchants:\n  - name: acme\n    api_keys: |\n      sk_t\n      sk_live_Zm9vYmFy\n",
			"want a list of strings, found a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "paymock.yaml")
			if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadMerchants(nil, "--api-key", path, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if goTypeDump.MatchString(strings.ReplaceAll(msg, path, "FILE")) || !strings.Contains(msg, c.want) ||
				!strings.Contains(msg, "config file "+path+", line ") {
				t.Errorf("message %q: want the line and %q, in the config's own terms", msg, c.want)
			}
		})
	}
}

// Found by FuzzLoadMerchants: a field name or a merchant's name holding
// a key (typed where a name or a field goes) was quoted in the message.
func TestLoadMerchants_AKeyWhereANameOrFieldGoesIsNotShown(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"an unknown field", "merchants:\n  - name: acme\n    a[" + fuzzFlagKey + "]pi_keys: [sk_test_acme_Zm9vYmFy]\n",
			`line 3: unknown field "a[[an API key, not shown]]pi_keys" in a merchant`},
		{"a merchant's name", "merchants:\n  - name: " + fuzzFlagKey + "\n",
			`line 2: merchant 1: the name is also an API key`},
		{"a name holding a key of the file", "merchants:\n  - name: a\n    api_keys: [sk_test_acme_Zm9vYmFy]\n  - name: xsk_test_acme_Zm9vYmFy\n",
			`merchant "x[an API key, not shown]": api_keys needs at least one key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "paymock.yaml")
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadMerchants([]string{fuzzFlagKey}, "--api-key", path, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Contains(msg, fuzzFlagKey) || strings.Contains(msg, "sk_test_acme_Zm9vYmFy") || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q: want %q, and no key", msg, tc.want)
			}
		})
	}
}
