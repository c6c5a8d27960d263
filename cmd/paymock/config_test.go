// Tests of the --config file and of merchants from --api-key.

package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/memory"
	"github.com/paymock/paymock/merchants"
)

const goodConfig = `# two merchants
merchants:
  - name: acme
    api_keys: [sk_test_acme, sk_test_acme_2]
    pci_approved: false
    accounts:
      - {id: acct_acme_main, active: true}
      - {id: acct_acme_old, active: false}
    webhooks:
      - {url: "http://localhost:9000/hooks", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
  - name: globex
    api_keys:
      - sk_test_globex
    pci_approved: true
`

func TestLoadMerchants_ReadsGoodConfig(t *testing.T) {
	path := writeFile(t, "paymock.yaml", goodConfig)
	list, err := loadMerchants(nil, "--api-key", path, nil)
	if err != nil {
		t.Fatalf("loadMerchants: %v", err)
	}
	if len(list) != 2 {
		t.Fatalf("got %d merchants, want 2", len(list))
	}
	acme, globex := list[0], list[1]
	if acme.Name != "acme" || !slices.Equal(acme.APIKeys, []string{"sk_test_acme", "sk_test_acme_2"}) || acme.PCIApproved {
		t.Errorf("acme = %+v", acme)
	}
	wantAccounts := []paymock.Account{{ID: "acct_acme_main", Active: true}, {ID: "acct_acme_old", Active: false}}
	if !slices.Equal(acme.Accounts, wantAccounts) {
		t.Errorf("acme accounts = %+v, want %+v", acme.Accounts, wantAccounts)
	}
	wantHooks := []paymock.WebhookEndpoint{{URL: "http://localhost:9000/hooks", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
	if !slices.Equal(acme.Webhooks, wantHooks) {
		t.Errorf("acme webhooks = %+v, want %+v", acme.Webhooks, wantHooks)
	}
	if globex.Name != "globex" || !globex.PCIApproved || !slices.Equal(globex.APIKeys, []string{"sk_test_globex"}) {
		t.Errorf("globex = %+v", globex)
	}
	if _, err := merchants.New(context.Background(), merchants.Config{Merchants: list, Store: memory.NewMerchants()}); err != nil {
		t.Errorf("merchants.New rejects the loaded list: %v", err)
	}
}

func TestLoadMerchants_APIKeysBecomeSandboxMerchants(t *testing.T) {
	list, err := loadMerchants([]string{"sk_one", "sk_two"}, "--api-key", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("got %d merchants, want 2", len(list))
	}
	for i, m := range list {
		wantName := []string{"key-1", "key-2"}[i]
		wantKey := []string{"sk_one", "sk_two"}[i]
		if m.Name != wantName || !slices.Equal(m.APIKeys, []string{wantKey}) || !m.PCIApproved {
			t.Errorf("merchant %d = %+v, want %s with key %s, PCI-approved", i, m, wantName, wantKey)
		}
		active, ok1 := m.Account(paymock.SandboxActiveAccount)
		inactive, ok2 := m.Account(paymock.SandboxInactiveAccount)
		if !ok1 || !active.Active || !ok2 || inactive.Active {
			t.Errorf("merchant %s accounts = %+v, want the sandbox active and inactive accounts", m.Name, m.Accounts)
		}
	}
}

func TestLoadMerchants_UnitesAPIKeysAndConfig(t *testing.T) {
	path := writeFile(t, "paymock.yaml", goodConfig)
	list, err := loadMerchants([]string{"sk_cli"}, "--api-key", path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	if want := []string{"key-1", "acme", "globex"}; !slices.Equal(names, want) {
		t.Errorf("merchants = %q, want %q", names, want)
	}
}

func TestLoadMerchants_RejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		apiKeys []string
		yaml    string
		want    []string // substrings of the error
	}{
		{
			name: "unknown merchant field",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    pci_aproved: true\n",
			want: []string{"line 4", `unknown field "pci_aproved"`, "a merchant"},
		},
		{
			name: "unknown top-level field",
			yaml: "merchant:\n  - name: acme\n",
			want: []string{"line 1", `unknown field "merchant"`, "top level"},
		},
		{
			name: "unknown account field",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    accounts:\n      - {id: acct_1, enabled: true}\n",
			want: []string{"line 5", `unknown field "enabled"`, "an account"},
		},
		{
			name: "api key used by two merchants",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_same]\n  - name: globex\n    api_keys:\n      - sk_other\n      - sk_same\n",
			want: []string{"line 7", `merchant "globex"`, "api key 2", `already used by merchant "acme" (line 3)`},
		},
		{
			name:    "api key also given with --api-key",
			apiKeys: []string{"sk_same"},
			yaml:    "merchants:\n  - name: acme\n    api_keys: [sk_same]\n",
			want:    []string{"line 3", `merchant "acme"`, "already used by", "key-1"},
		},
		{
			name: "duplicate mapping key",
			yaml: "merchants:\n  - name: acme\n    name: globex\n    api_keys: [sk_a]\n",
			want: []string{"line 3", `"name" already defined at line 2`},
		},
		{
			name: "merchant name used twice",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n  - name: acme\n    api_keys: [sk_b]\n",
			want: []string{"line 4", `merchant "acme"`, "already used by the merchant at line 2"},
		},
		{
			name:    "merchant named like an --api-key merchant",
			apiKeys: []string{"sk_cli"},
			yaml:    "merchants:\n  - name: key-1\n    api_keys: [sk_a]\n",
			want:    []string{"line 2", "--api-key key 1"},
		},
		{
			name: "merchant without name",
			yaml: "merchants:\n  - api_keys: [sk_a]\n",
			want: []string{"line 2", "merchant 1", "name is required"},
		},
		{
			name: "merchant without keys",
			yaml: "merchants:\n  - name: acme\n    pci_approved: true\n",
			want: []string{"line 2", `merchant "acme"`, "at least one key"},
		},
		{
			name: "malformed key",
			yaml: "merchants:\n  - name: acme\n    api_keys:\n      - \"sk a\"\n",
			want: []string{"line 4", "api key 1", "bearer token"},
		},
		{
			name: "keys as a string instead of a list",
			yaml: "merchants:\n  - name: acme\n    api_keys: sk_a\n",
			want: []string{"line 3", "want a list of strings, found a string"},
		},
		{
			name: "account listed twice",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    accounts:\n      - {id: acct_1, active: true}\n      - {id: acct_1, active: false}\n",
			want: []string{"line 6", `account "acct_1" is listed twice`},
		},
		{
			name: "pci_approved not a boolean",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    pci_approved: maybe\n",
			want: []string{"line 4", "want true or false"},
		},
		{
			name: "relative webhook url",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    webhooks:\n      - {url: /hooks}\n",
			want: []string{"line 5", "webhook 1", "absolute"},
		},
		{
			name: "webhook secret without prefix",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    webhooks:\n      - {url: \"http://h.example\", secret: abc}\n",
			want: []string{"line 5", "webhook 1", "whsec_"},
		},
		{
			name: "webhook without a secret",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    webhooks:\n      - {url: \"http://h.example\"}\n",
			want: []string{"line 5", "webhook 1", "secret is required"},
		},
		{
			name: "syntax error",
			yaml: "merchants:\n  - name: acme\n   api_keys: [sk_a\n",
			want: []string{"line"},
		},
		{
			name: "empty file",
			yaml: "",
			want: []string{"empty"},
		},
		{
			name: "no merchants",
			yaml: "merchants: []\n",
			want: []string{"no merchants"},
		},
		{
			name: "two documents",
			yaml: "merchants:\n  - name: acme\n    api_keys: [sk_a]\n---\nmerchants: []\n",
			want: []string{"one YAML document"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "paymock.yaml", tt.yaml)
			_, err := loadMerchants(tt.apiKeys, "--api-key", path, nil)
			wantUsageError(t, err, append([]string{"config file " + path}, tt.want...)...)
		})
	}
}

func TestLoadMerchants_ErrorsNeverQuoteKeysOrSecrets(t *testing.T) {
	tests := map[string]string{
		"short key in place of a list": "merchants:\n  - name: acme\n    api_keys: sk_k3y\n",
		"duplicate key":                "merchants:\n  - name: a\n    api_keys: [sk_k3y]\n  - name: b\n    api_keys: [sk_k3y]\n",
		"malformed key":                "merchants:\n  - name: a\n    api_keys: [\"sk k3y\"]\n",
		"bad secret":                   "merchants:\n  - name: a\n    api_keys: [ok]\n    webhooks: [{url: \"http://h.example\", secret: \"whsec_k3y!\"}]\n",
	}
	for name, yaml := range tests {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, "paymock.yaml", yaml)
			_, err := loadMerchants(nil, "--api-key", path, nil)
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), "k3y") {
				t.Errorf("error quotes a key or secret: %v", err)
			}
		})
	}
}

func TestRun_RejectsBadConfigWithExitCodeTwo(t *testing.T) {
	path := writeFile(t, "paymock.yaml", "merchants:\n  - name: acme\n    api_keys: [sk_a]\n    colour: red\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, src := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--config", path, "--addr", "127.0.0.1:0"}, nil},
		{[]string{"--addr", "127.0.0.1:0"}, map[string]string{"PAYMOCK_CONFIG": path}},
	} {
		err := run(ctx, src.args, envOf(src.env), io.Discard, io.Discard)
		wantUsageError(t, err, path, "line 4", `unknown field "colour"`)
		var ue *usageError
		if !errors.As(err, &ue) || exitCode(err, io.Discard) != 2 {
			t.Errorf("exit code = %d, want 2", exitCode(err, io.Discard))
		}
	}
}

func TestRun_RefusesABadScenarioFileAtStartWithItsLine(t *testing.T) {
	path := writeFile(t, "scenarios.yaml", "scenarios:\n  - name: slow\n    steps:\n      - after: 30s\n        do: completed\n")
	err := run(context.Background(), []string{"--scenarios", path, "--addr", "127.0.0.1:0"}, envOf(nil), io.Discard, io.Discard)
	wantUsageError(t, err, path+":5:", `"completed": want complete, fail or expire`)
	if code := exitCode(err, io.Discard); code != 2 {
		t.Errorf("exit code = %d, want 2", code)
	}
}

// A merchant's name is logged at start and shown on the hosted pages, so
// a name that is also a key (its own, another merchant's, an --api-key
// one) would show the key: such a file is refused, in words that do not
// repeat it.
func TestRun_RefusesAMerchantNamedLikeAKey(t *testing.T) {
	const key = "sk_live_abcdefgh12345"
	for _, tc := range []struct {
		name, yaml string
		args       []string
		want       []string
	}{
		{"its own key", "merchants:\n  - name: " + key + "\n    api_keys: [" + key + "]\n", nil,
			[]string{"line 2", "merchant 1", "the name is also an API key"}},
		{"a later merchant's key", "merchants:\n  - name: acme\n    api_keys: [sk_test_acme]\n  - name: globex\n    api_keys: [sk_test_globex]\n" +
			"  - name: " + key + "\n    api_keys: [sk_test_other]\n  - name: initech\n    api_keys: [" + key + "]\n", nil,
			[]string{"line 6", "merchant 3", "the name is also an API key"}},
		{"an --api-key key", "merchants:\n  - name: " + key + "\n    api_keys: [sk_test_acme]\n", []string{"--api-key", key},
			[]string{"line 2", "merchant 1", "the name is also an API key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "paymock.yaml", tc.yaml)
			_, stderr, code := runCLI(cancelled(), append(tc.args, "--config", path, "--addr", "127.0.0.1:0"), nil)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if strings.Contains(stderr, key) || strings.Contains(stderr, "abcdefgh") {
				t.Errorf("stderr shows the key:\n%s", stderr)
			}
			for _, w := range append([]string{"config file " + path}, tc.want...) {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}
