// Merchants: who a tenant of the sandbox is, what it may do, and which
// bearer keys are well formed. The registry that maps keys to merchants
// is package merchants.

package paymock

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Account is one of a merchant's accounts, named by account_id on create.
type Account struct {
	ID     string `yaml:"id"`
	Active bool   `yaml:"active"`
}

// maxAccountID is the contract's maxLength of account_id: an account with
// a longer id could never be named by a create.
const maxAccountID = 255

// Validate returns every problem with a, with params relative to the
// account ("id"), for the caller to prefix with where a came from.
func (a Account) Validate() []Violation {
	switch {
	case a.ID == "":
		return []Violation{{Param: "id", Code: "parameter_missing", Message: "id is required"}}
	case len(a.ID) > maxAccountID:
		return []Violation{{Param: "id", Code: "parameter_invalid",
			Message: fmt.Sprintf("id is longer than %d characters, so no create could name it in account_id", maxAccountID)}}
	}
	return nil
}

// Merchant is one tenant of the sandbox. Merchants never see each other's
// payments.
type Merchant struct {
	ID   string `yaml:"-"`
	Name string `yaml:"name"`
	// APIKeys are the keys as configured. Keys revoked at run time stay
	// here; merchants.Registry.Keys lists the live ones.
	APIKeys     []string          `yaml:"api_keys"`
	PCIApproved bool              `yaml:"pci_approved"`
	Accounts    []Account         `yaml:"accounts"`
	Webhooks    []WebhookEndpoint `yaml:"webhooks"`
}

// maxMerchantName keeps names short enough for a log line and a page
// heading.
const maxMerchantName = 100

// Validate returns every problem with m on its own, with params relative
// to the merchant ("name", "api_keys.0", "accounts.1.id", "webhooks.0.url")
// for the caller to prefix with a file and line or a flag name. Rules that
// span merchants (a name or a key used twice across them) are merchants.New's.
// No message repeats a key or a secret.
func (m Merchant) Validate() []Violation {
	var vs []Violation
	switch {
	case m.Name == "":
		vs = append(vs, Violation{Param: "name", Code: "parameter_missing", Message: "name is required"})
	case len(m.Name) > maxMerchantName:
		vs = append(vs, Violation{Param: "name", Code: "parameter_invalid",
			Message: fmt.Sprintf("name is longer than %d characters", maxMerchantName)})
	case !utf8.ValidString(m.Name) || strings.IndexFunc(m.Name, unicode.IsControl) >= 0:
		vs = append(vs, Violation{Param: "name", Code: "parameter_invalid",
			Message: "name must be readable text, without control characters"})
	}

	if len(m.APIKeys) == 0 {
		vs = append(vs, Violation{Param: "api_keys", Code: "parameter_missing", Message: "api_keys needs at least one key"})
	}
	firstAt := make(map[string]int, len(m.APIKeys))
	for i, k := range m.APIKeys {
		param := "api_keys." + strconv.Itoa(i)
		if !WellFormedKey(k) {
			vs = append(vs, Violation{Param: param, Code: "parameter_invalid",
				Message: fmt.Sprintf("api key %d is not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)", i+1)})
			continue
		}
		if j, dup := firstAt[k]; dup {
			vs = append(vs, Violation{Param: param, Code: "parameter_invalid",
				Message: fmt.Sprintf("api key %d is used twice: it is the same as api key %d", i+1, j+1)})
			continue
		}
		firstAt[k] = i
	}

	seen := make(map[string]int, len(m.Accounts))
	for i, a := range m.Accounts {
		prefix := "accounts." + strconv.Itoa(i) + "."
		if avs := a.Validate(); len(avs) > 0 {
			vs = append(vs, nest(avs, prefix, fmt.Sprintf("account %d: ", i+1))...)
			continue
		}
		if _, dup := seen[a.ID]; dup {
			vs = append(vs, Violation{Param: prefix + "id", Code: "parameter_invalid",
				Message: fmt.Sprintf("account %q is listed twice", a.ID)})
			continue
		}
		seen[a.ID] = i
	}

	for i, w := range m.Webhooks {
		vs = append(vs, nest(w.Validate(), "webhooks."+strconv.Itoa(i)+".", fmt.Sprintf("webhook %d: ", i+1))...)
	}
	return vs
}

// nest puts violations of a part under the param prefix of the whole and
// says in the message which part it is.
func nest(vs []Violation, paramPrefix, messagePrefix string) []Violation {
	for i := range vs {
		vs[i].Param = paramPrefix + vs[i].Param
		vs[i].Message = messagePrefix + vs[i].Message
	}
	return vs
}

// String describes m without its keys or webhook secrets, so a merchant
// printed in a log or a test failure gives nothing away.
func (m Merchant) String() string {
	return fmt.Sprintf("merchant %s (name %q, %d api keys, pci_approved %t, accounts %v, webhooks %v)",
		m.ID, m.Name, len(m.APIKeys), m.PCIApproved, m.Accounts, m.Webhooks)
}

// GoString is String, so that %#v does not print the keys either.
func (m Merchant) GoString() string { return m.String() }

// LogValue keeps keys out of JSON logs, which do not use String.
func (m Merchant) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", m.ID), slog.String("name", m.Name))
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

// ErrUnknownKey is returned for a well-formed key that no merchant has,
// or one that was revoked.
var ErrUnknownKey = errors.New("unknown api key")

// ErrMalformedKey is returned for a key that is not a bearer token.
var ErrMalformedKey = errors.New("malformed api key")

// ErrMerchantLimit is wrapped by merchants.Registry.Authenticate when open
// mode already holds its cap of merchants and a new token arrives.
// Merchants already held are served as before.
var ErrMerchantLimit = errors.New("merchant limit reached")

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
