// The --config file: merchants, keys, accounts and webhooks, refused at
// start with file and line on any mistake.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	yaml "github.com/oasdiff/yaml3"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/egress"
)

// configFile is the shape of the --config YAML file.
type configFile struct {
	Merchants []paymock.Merchant `yaml:"merchants"`
}

// apiKeyMerchant is the merchant of the n-th --api-key: like an open-mode
// merchant, PCI-approved with one active and one inactive account.
func apiKeyMerchant(n int, key string) paymock.Merchant {
	return paymock.Merchant{
		Name:        fmt.Sprintf("key-%d", n),
		APIKeys:     []string{key},
		PCIApproved: true,
		Accounts: []paymock.Account{
			{ID: paymock.SandboxActiveAccount, Active: true},
			{ID: paymock.SandboxInactiveAccount, Active: false},
		},
	}
}

// loadMerchants builds the merchants of --api-key (apiKeysFrom names the
// flag or env variable they came from) and of the --config file, if any.
// No merchants at all means open mode. A webhook of the file whose host is
// an address deny refuses is an error (nil deny: egress.DefaultDeny).
// Errors never contain a key.
func loadMerchants(apiKeys []string, apiKeysFrom, configPath string, deny *egress.Policy) ([]paymock.Merchant, error) {
	var list []paymock.Merchant
	keyOwner := map[string]string{}  // api key -> who has it, for errors
	nameOwner := map[string]string{} // merchant name -> where it is defined
	for i, k := range apiKeys {
		m := apiKeyMerchant(i+1, k)
		list = append(list, m)
		keyOwner[k] = fmt.Sprintf("merchant %q (%s key %d)", m.Name, apiKeysFrom, i+1)
		nameOwner[m.Name] = fmt.Sprintf("the merchant of %s key %d", apiKeysFrom, i+1)
	}
	if configPath == "" {
		return list, nil
	}
	if deny == nil {
		deny = egress.New(egress.Config{})
	}
	fromFile, err := readConfig(configPath, keyOwner, nameOwner, deny)
	if err != nil {
		return nil, &usageError{err: withoutKeys(err, keyOwner)}
	}
	return append(list, fromFile...), nil
}

// withoutKeys hides in err's message every key of keyOwner (those of the
// flags, and of the file as far as it was read). The messages quote names
// and unknown fields, and a key typed where a name or a field goes would
// be shown with them. A key shorter than 8 bytes guards nothing and would
// be found in any word or path, so it is left. err stays what errors.Is
// and errors.As find.
func withoutKeys(err error, keyOwner map[string]string) error {
	msg := err.Error()
	for k := range keyOwner {
		if len(k) >= 8 {
			msg = strings.ReplaceAll(msg, k, "[an API key, not shown]")
		}
	}
	if msg == err.Error() {
		return err
	}
	return &keysHidden{msg: msg, err: err}
}

// keysHidden is an error whose message has its keys hidden.
type keysHidden struct {
	msg string
	err error
}

func (e *keysHidden) Error() string { return e.msg }
func (e *keysHidden) Unwrap() error { return e.err }

// readConfig reads, decodes and checks a config file. keyOwner and
// nameOwner hold the keys and names already taken, and are updated; deny
// judges the webhooks' hosts that are addresses.
func readConfig(path string, keyOwner, nameOwner map[string]string, deny *egress.Policy) ([]paymock.Merchant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	where := func(line int) string {
		if line > 0 {
			return fmt.Sprintf("config file %s, line %d", path, line)
		}
		return "config file " + path
	}

	var cfg configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the file is empty, want a merchants: list", where(0))
		}
		return nil, yamlError(path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: want one YAML document, found more", where(extra.Line))
	}
	if len(cfg.Merchants) == 0 {
		return nil, fmt.Errorf("%s: no merchants, want a merchants: list (leave out --config for open mode)", where(0))
	}

	// The decode above succeeded, so the node tree has the same shape: it
	// gives the line of each part for the checks below.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	mNodes := items(field(root, "merchants"))

	// Every key, of the flags and of the whole file: a merchant's name is
	// logged at start and shown on the hosted pages, so one that is also
	// a key is refused, and such a merchant is named by its place.
	keys := make(map[string]bool, len(keyOwner))
	for k := range keyOwner {
		keys[k] = true
	}
	for _, m := range cfg.Merchants {
		for _, k := range m.APIKeys {
			keys[k] = true
		}
	}

	var errs []error
	for i := range cfg.Merchants {
		m := &cfg.Merchants[i]
		mNode := at(mNodes, i)
		mLine := lineOf(mNode, 0)
		who := fmt.Sprintf("merchant %d", i+1)
		if m.Name != "" && !keys[m.Name] {
			who = fmt.Sprintf("merchant %q", m.Name)
		}
		fail := func(line int, format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: %s: %s", where(line), who, fmt.Sprintf(format, a...)))
		}

		switch {
		case m.Name == "":
			fail(mLine, "name is required")
		case keys[m.Name]:
			fail(lineOf(field(mNode, "name"), mLine), "the name is also an API key, and a name is logged at start "+
				"and shown on the hosted pages: choose another")
		case nameOwner[m.Name] != "":
			fail(lineOf(field(mNode, "name"), mLine), "the name is already used by %s", nameOwner[m.Name])
		default:
			nameOwner[m.Name] = fmt.Sprintf("the merchant at line %d", mLine)
		}

		keyNodes := items(field(mNode, "api_keys"))
		if len(m.APIKeys) == 0 {
			fail(mLine, "api_keys needs at least one key")
		}
		for j, k := range m.APIKeys {
			line := lineOf(at(keyNodes, j), mLine)
			switch {
			case !paymock.WellFormedKey(k):
				fail(line, "api key %d is not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)", j+1)
			case keyOwner[k] != "":
				fail(line, "api key %d is already used by %s", j+1, keyOwner[k])
			default:
				keyOwner[k] = fmt.Sprintf("%s (line %d)", who, line)
			}
		}

		accNodes := items(field(mNode, "accounts"))
		accSeen := map[string]bool{}
		for j, a := range m.Accounts {
			line := lineOf(at(accNodes, j), mLine)
			switch {
			case a.ID == "":
				fail(line, "account %d: id is required", j+1)
			case accSeen[a.ID]:
				fail(line, "account %q is listed twice", a.ID)
			}
			accSeen[a.ID] = true
		}

		hookNodes := items(field(mNode, "webhooks"))
		for j, w := range m.Webhooks {
			line := lineOf(at(hookNodes, j), mLine)
			if err := checkHTTPURL(w.URL); err != nil {
				fail(line, "webhook %d: url %q: %v", j+1, w.URL, err)
			} else if err := deny.CheckLiteral(w.URL); err != nil {
				fail(line, "webhook %d: url %q: %v", j+1, w.URL, err)
			}
			// A receiver can only verify what it has the secret of, so an
			// endpoint without one is refused here rather than failing at
			// every delivery.
			if w.Secret == "" {
				fail(line, "webhook %d: secret is required (whsec_ followed by base64)", j+1)
			} else if err := checkWebhookSecret(w.Secret); err != nil {
				fail(line, "webhook %d: %v", j+1, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg.Merchants, nil
}

// yamlError turns a yaml.v3 error into messages that name the file and
// line, speak of the config's own terms rather than Go types, and never
// quote a value (it could be an API key).
func yamlError(path string, err error) error {
	// Compiled here, on the error path, rather than in every start.
	// (?s): a value may run over several lines, and a key may hold spaces
	// or be empty; a tag may be the user's own (!custom).
	reYAMLLine := regexp.MustCompile(`(?s)^(?:yaml: )?line (\d+): (.*)$`)
	reUnknownKey := regexp.MustCompile(`(?s)^field (.*) not found in type (\S+)$`)
	reCannotParse := regexp.MustCompile("(?s)^cannot unmarshal (!\\S*)(?: `.*`)? into (\\S+)$")
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]error, 0, len(msgs))
	for _, msg := range msgs {
		line := ""
		if m := reYAMLLine.FindStringSubmatch(msg); m != nil {
			line, msg = m[1], m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		if m := reUnknownKey.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("unknown field %q in %s", m[1], yamlTypeNames[m[2]])
		} else if m := reCannotParse.FindStringSubmatch(msg); m != nil {
			found, ok := yamlTagNames[m[1]]
			if !ok {
				found = "a value with a tag of its own (" + m[1] + ")"
			}
			msg = fmt.Sprintf("want %s, found %s", describeType(m[2]), found)
		}
		if line != "" {
			out = append(out, fmt.Errorf("config file %s, line %s: %s", path, line, msg))
		} else {
			out = append(out, fmt.Errorf("config file %s: %s", path, msg))
		}
	}
	return errors.Join(out...)
}

// yamlTypeNames describes the mappings of the config file.
var yamlTypeNames = map[string]string{
	"main.configFile":         "the top level (want merchants)",
	"paymock.Merchant":        "a merchant (want name, api_keys, pci_approved, accounts, webhooks)",
	"paymock.Account":         "an account (want id, active)",
	"paymock.WebhookEndpoint": "a webhook (want url, secret)",
}

var yamlTagNames = map[string]string{
	"!!str":   "a string",
	"!!int":   "a number",
	"!!float": "a number",
	"!!bool":  "true or false",
	"!!null":  "nothing",
	"!!map":   "a mapping",
	"!!seq":   "a list",
}

func describeType(goType string) string {
	switch goType {
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "[]string":
		return "a list of strings"
	case "[]paymock.Merchant":
		return "a list of merchants"
	case "[]paymock.Account":
		return "a list of accounts"
	case "[]paymock.WebhookEndpoint":
		return "a list of webhooks"
	case "main.configFile":
		return "a mapping with merchants:"
	}
	if s, ok := yamlTypeNames[goType]; ok {
		return s
	}
	return goType
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// field is the value of key in mapping m, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

// items is the entries of sequence n, or nil.
func items(n *yaml.Node) []*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out
}

func at(ns []*yaml.Node, i int) *yaml.Node {
	if i < len(ns) {
		return ns[i]
	}
	return nil
}

// lineOf is n's line, or fallback when n is unknown.
func lineOf(n *yaml.Node, fallback int) int {
	if n == nil || n.Line == 0 {
		return fallback
	}
	return n.Line
}
