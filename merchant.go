// Merchants and their API keys: who a bearer key belongs to, and what that
// merchant may do.
package paymock

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Account is one of a merchant's accounts, named by account_id on create.
type Account struct {
	ID     string `yaml:"id"`
	Active bool   `yaml:"active"`
}

// WebhookEndpoint is a URL that receives a merchant's events, signed with
// Secret (a "whsec_" key).
type WebhookEndpoint struct {
	URL    string `yaml:"url"`
	Secret string `yaml:"secret"`
}

// Merchant is one tenant of the sandbox. Merchants never see each other's
// payments.
type Merchant struct {
	ID          string            `yaml:"-"`
	Name        string            `yaml:"name"`
	APIKeys     []string          `yaml:"api_keys"`
	PCIApproved bool              `yaml:"pci_approved"`
	Accounts    []Account         `yaml:"accounts"`
	Webhooks    []WebhookEndpoint `yaml:"webhooks"`
}

// Account finds one of m's accounts by id.
func (m *Merchant) Account(id string) (Account, bool) {
	for _, a := range m.Accounts {
		if a.ID == id {
			return a, true
		}
	}
	return Account{}, false
}

// The accounts every open-mode merchant has.
const (
	SandboxActiveAccount   = "acct_sandbox_active"
	SandboxInactiveAccount = "acct_sandbox_inactive"
)

type keyEntry struct {
	key      []byte
	merchant *Merchant
}

// Merchants maps bearer keys to merchants. With no merchants configured it
// runs in open mode: every well-formed key is a merchant of its own.
type Merchants struct {
	open   bool
	byHash map[[32]byte]keyEntry
	byID   map[string]*Merchant
	mu     sync.Mutex // guards byHash in open mode, where merchants appear on first use
	list   []*Merchant
}

// NewMerchants builds the key map. An empty list means open mode.
func NewMerchants(list []Merchant) (*Merchants, error) {
	ms := &Merchants{open: len(list) == 0, byHash: make(map[[32]byte]keyEntry), byID: make(map[string]*Merchant)}
	names := make(map[string]bool)
	for i := range list {
		m := list[i]
		if m.Name == "" {
			return nil, fmt.Errorf("merchant %d: name is required", i+1)
		}
		if names[m.Name] {
			return nil, fmt.Errorf("merchant %q: name used twice", m.Name)
		}
		names[m.Name] = true
		if len(m.APIKeys) == 0 {
			return nil, fmt.Errorf("merchant %q: at least one api key is required", m.Name)
		}
		m.ID = m.Name
		m.APIKeys = append([]string(nil), m.APIKeys...)
		mp := &m
		for _, k := range m.APIKeys {
			if !WellFormedKey(k) {
				return nil, fmt.Errorf("merchant %q: an api key is not a valid bearer token (letters, digits and -._~+/ only)", m.Name)
			}
			h := sha256.Sum256([]byte(k))
			if _, dup := ms.byHash[h]; dup {
				return nil, fmt.Errorf("merchant %q: an api key is used twice", m.Name)
			}
			ms.byHash[h] = keyEntry{key: []byte(k), merchant: mp}
		}
		ms.list = append(ms.list, mp)
		ms.byID[mp.ID] = mp
	}
	return ms, nil
}

// Open reports whether any well-formed key is accepted.
func (ms *Merchants) Open() bool { return ms.open }

// Configured returns the configured merchants (none in open mode).
func (ms *Merchants) Configured() []*Merchant { return ms.list }

// ByID returns a merchant by its id (for pages, which carry no key).
func (ms *Merchants) ByID(id string) (*Merchant, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, ok := ms.byID[id]
	return m, ok
}

// ErrUnknownKey is returned for a well-formed key that no merchant has.
var ErrUnknownKey = errors.New("unknown api key")

// ErrMalformedKey is returned for a key that is not a bearer token.
var ErrMalformedKey = errors.New("malformed api key")

// Authenticate returns the merchant a key belongs to. The key is looked up
// by its SHA-256 digest and then compared in constant time, so response
// timing says nothing about how much of a guessed key was right.
func (ms *Merchants) Authenticate(key string) (*Merchant, error) {
	if !WellFormedKey(key) {
		return nil, ErrMalformedKey
	}
	h := sha256.Sum256([]byte(key))
	if ms.open {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		e, ok := ms.byHash[h]
		if !ok {
			e = keyEntry{key: []byte(key), merchant: openMerchant(h)}
			ms.byHash[h] = e
			ms.byID[e.merchant.ID] = e.merchant
		}
		return e.merchant, nil
	}
	e, ok := ms.byHash[h]
	if !ok || subtle.ConstantTimeCompare(e.key, []byte(key)) != 1 {
		return nil, ErrUnknownKey
	}
	return e.merchant, nil
}

// openMerchant is the merchant of an open-mode key. Its id is derived from
// the key's digest so logs can tell merchants apart without the key.
func openMerchant(h [32]byte) *Merchant {
	id := "key_" + hex.EncodeToString(h[:6])
	return &Merchant{
		ID:          id,
		Name:        id,
		PCIApproved: true,
		Accounts: []Account{
			{ID: SandboxActiveAccount, Active: true},
			{ID: SandboxInactiveAccount, Active: false},
		},
	}
}

// WellFormedKey reports whether k is an RFC 6750 b64token of sane length.
func WellFormedKey(k string) bool {
	body := strings.TrimRight(k, "=")
	if body == "" || len(k) > 512 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-._~+/", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
