// Merchants and their API keys: who a bearer key belongs to, what that
// merchant may do, and how long an open-mode merchant is remembered.

package paymock

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	// here; Merchants.Keys lists the live ones.
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
// span merchants (a name or a key used twice across them) are NewMerchants'.
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

// DefaultMaxMerchants is how many open-mode merchants are held at once
// when MerchantsConfig.MaxMerchants is 0.
const DefaultMaxMerchants = 10_000

// MerchantsConfig configures NewMerchantsFromConfig. The zero value is an
// open-mode sandbox with the default cap, no default webhook endpoints,
// the real clock and ids from crypto/rand.
type MerchantsConfig struct {
	// Merchants are the configured merchants; none means open mode.
	Merchants []Merchant
	// DefaultWebhooks receive the events of every merchant that has no
	// webhooks of its own in Merchants (the --webhook-url endpoints). They
	// are listed read-only to every such merchant.
	DefaultWebhooks []WebhookEndpoint
	// MaxMerchants caps the open-mode merchants held at once; a new token
	// past it gets ErrMerchantLimit. 0 means DefaultMaxMerchants, a
	// negative value no cap. Configured merchants never count.
	MaxMerchants int
	// Now reads the time of last use, key creation and endpoint creation;
	// nil means time.Now. It is wall time, not a merchant's sandbox clock:
	// idleness is about requests, not about the merchant's frozen clock.
	Now func() time.Time
	// IDs makes the ak_ and we_ ids; nil means unguessable ids from
	// crypto/rand. API keys and webhook secrets always come from
	// crypto/rand, seed or no seed.
	IDs *IDs
	// Store keeps what is made at run time (created keys, revocations,
	// open-mode merchants, added endpoints) for every replica sharing it;
	// nil keeps everything in this process's memory. With a store,
	// configured keys and endpoints get ids derived from their place in
	// the configuration, the same on every replica.
	Store MerchantStore
	// Logger receives what goes wrong with Store in the background; nil
	// discards it.
	Logger *slog.Logger
}

// merchantEntry is what Merchants holds for one merchant: the Merchant
// handed to callers, plus what only this file needs. Everything an idle
// open-mode merchant needs is in this one allocation (about 190 bytes),
// because open mode can hold many thousands of them.
type merchantEntry struct {
	Merchant
	// lastUsed is the Unix nanosecond time of the last Authenticate; an
	// atomic so that recording it takes no lock on every request.
	lastUsed atomic.Int64
	// created is the Unix nanosecond time the merchant appeared.
	created int64
	// ext holds keys created at run time, revoked digests and endpoints;
	// nil for an open-mode merchant that never used them.
	ext *merchantExtras
	// hash is the SHA-256 digest of an open-mode merchant's own token.
	hash [32]byte
	// tokenMask is the masked form of that token, tokenMaskLen bytes long;
	// kept as bytes so it costs no extra allocation.
	tokenMask    [maxMaskLen]byte
	tokenMaskLen uint8
	// open marks a merchant made by open mode: one that can be forgotten.
	open bool
	// tokenRevoked: the open-mode token itself was revoked.
	tokenRevoked bool
}

// merchantExtras is the state of a merchant that uses the developer
// section; guarded by Merchants.mu.
type merchantExtras struct {
	keys      []*keyRecord      // live configured and created keys, oldest first
	revoked   [][32]byte        // open mode: digests that must stay unknown, oldest first
	endpoints []*endpointRecord // configured endpoints, then added ones
	// lastAdded, on a shared store, are the enabled added endpoints read
	// at the merchant's last event: what its next one goes to should the
	// store not answer.
	lastAdded []WebhookEndpoint
}

// keyRecord is one configured or created key.
type keyRecord struct {
	id      string
	key     []byte
	masked  string
	source  KeySource
	created time.Time
	owner   *merchantEntry
}

// Merchants maps bearer keys to merchants. With no merchants configured it
// runs in open mode: every well-formed key is a merchant of its own, up to
// a cap, and idle ones can be forgotten.
type Merchants struct {
	open         bool
	maxMerchants int // < 0: no cap
	now          func() time.Time
	ids          *IDs
	list         []*Merchant       // configured, in order; never changes
	defaults     []*endpointRecord // DefaultWebhooks with their ids; never changes
	sandboxAccts []Account         // shared by every open-mode merchant, never written
	// store, when not nil, holds created keys, revocations, open-mode
	// merchants and added endpoints for every replica; only configured
	// keys (in keys) and configured and default endpoints stay here.
	store MerchantStore
	log   *slog.Logger
	// revokedRead is when configured keys revoked on other replicas were
	// last read (Unix ns); refreshing is set while a read runs.
	revokedRead atomic.Int64
	refreshing  atomic.Bool

	mu   sync.RWMutex
	keys map[[32]byte]*keyRecord // configured and created keys
	// tokens finds an open-mode merchant by the first 8 bytes of its
	// token's digest (a 32-byte key would cost every idle merchant 24
	// bytes more); token() checks the whole digest.
	tokens    map[uint64]*merchantEntry
	revoked   map[[32]byte]*merchantEntry // open mode: revoked digests -> their merchant
	byID      map[string]*merchantEntry
	openCount int
}

// NewMerchants builds the key map. An empty list means open mode, with the
// default cap and no default webhook endpoints.
func NewMerchants(list []Merchant) (*Merchants, error) {
	return NewMerchantsFromConfig(MerchantsConfig{Merchants: list})
}

// NewMerchantsFromConfig validates the configured merchants and default
// endpoints and builds the key map. The error is an *Error listing every
// violation, params prefixed "merchants.N." or "default_webhooks.N.".
func NewMerchantsFromConfig(cfg MerchantsConfig) (*Merchants, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ids := cfg.IDs
	if ids == nil {
		ids = NewIDs(nil)
	}
	maxM := cfg.MaxMerchants
	if maxM == 0 {
		maxM = DefaultMaxMerchants
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// On a shared store configured ids must be the same on every replica,
	// which draws from ids would not be without a seed.
	keyID := func(merchant string, i int) string { return ids.New(keyIDPrefix) }
	endpointID := func(merchant string, i int) string { return ids.New(endpointIDPrefix) }
	if cfg.Store != nil {
		keyID = func(merchant string, i int) string {
			return sharedID(keyIDPrefix, "config key", merchant, strconv.Itoa(i))
		}
		endpointID = func(merchant string, i int) string {
			return sharedID(endpointIDPrefix, "config endpoint", merchant, strconv.Itoa(i))
		}
	}
	ms := &Merchants{
		store:        cfg.Store,
		log:          logger,
		open:         len(cfg.Merchants) == 0,
		maxMerchants: maxM,
		now:          now,
		ids:          ids,
		sandboxAccts: []Account{
			{ID: SandboxActiveAccount, Active: true},
			{ID: SandboxInactiveAccount, Active: false},
		},
		keys:    make(map[[32]byte]*keyRecord),
		tokens:  make(map[uint64]*merchantEntry),
		revoked: make(map[[32]byte]*merchantEntry),
		byID:    make(map[string]*merchantEntry),
	}

	var vs []Violation
	for i, w := range cfg.DefaultWebhooks {
		vs = append(vs, nest(w.Validate(), "default_webhooks."+strconv.Itoa(i)+".", fmt.Sprintf("default webhook %d: ", i+1))...)
	}
	at := now()
	nameAt := make(map[string]int)
	keyAt := make(map[[32]byte]int)
	for i := range cfg.Merchants {
		m := cfg.Merchants[i]
		prefix := "merchants." + strconv.Itoa(i) + "."
		who := fmt.Sprintf("merchant %d: ", i+1)
		if m.Name != "" {
			who = fmt.Sprintf("merchant %q: ", m.Name)
		}
		mvs := m.Validate()
		vs = append(vs, nest(mvs, prefix, who)...)
		if j, dup := nameAt[m.Name]; dup && m.Name != "" {
			vs = append(vs, Violation{Param: prefix + "name", Code: "parameter_invalid",
				Message: fmt.Sprintf("%sname used twice: merchant %d has it too", who, j+1)})
		} else {
			nameAt[m.Name] = i
		}
		for k, key := range m.APIKeys {
			if !WellFormedKey(key) {
				continue // reported by Validate
			}
			h := sha256.Sum256([]byte(key))
			if j, dup := keyAt[h]; dup && j != i {
				vs = append(vs, Violation{Param: prefix + "api_keys." + strconv.Itoa(k), Code: "parameter_invalid",
					Message: fmt.Sprintf("%sapi key %d is used twice: merchant %d has it too", who, k+1, j+1)})
			} else if !dup {
				keyAt[h] = i
			}
		}
		if len(vs) > 0 {
			continue // build nothing more once anything is wrong
		}

		e := &merchantEntry{Merchant: m, created: at.UnixNano(), ext: &merchantExtras{}}
		e.ID = m.Name
		e.APIKeys = append([]string(nil), m.APIKeys...)
		e.Accounts = append([]Account(nil), m.Accounts...)
		e.Webhooks = append([]WebhookEndpoint(nil), m.Webhooks...)
		e.lastUsed.Store(at.UnixNano())
		for k, key := range e.APIKeys {
			h := sha256.Sum256([]byte(key))
			if _, dup := ms.keys[h]; dup {
				continue // the same key twice in one merchant is reported above
			}
			r := &keyRecord{id: keyID(e.ID, k), key: []byte(key), masked: MaskKey(key),
				source: KeyFromConfig, created: at, owner: e}
			ms.keys[h] = r
			e.ext.keys = append(e.ext.keys, r)
		}
		for j := range e.Webhooks {
			r := &endpointRecord{id: endpointID(e.ID, j), url: e.Webhooks[j].URL, secret: e.Webhooks[j].Secret,
				source: EndpointFromConfig, created: at}
			e.Webhooks[j].ID = r.id
			e.ext.endpoints = append(e.ext.endpoints, r)
		}
		ms.list = append(ms.list, &e.Merchant)
		ms.byID[e.ID] = e
	}
	if len(vs) > 0 {
		return nil, Invalid(vs...)
	}
	for i, w := range cfg.DefaultWebhooks {
		id := ids.New(endpointIDPrefix)
		if cfg.Store != nil {
			id = sharedID(endpointIDPrefix, "default endpoint", strconv.Itoa(i))
		}
		ms.defaults = append(ms.defaults, &endpointRecord{id: id, url: w.URL, secret: w.Secret,
			source: EndpointDefault, created: at})
	}
	if cfg.Store != nil && len(ms.list) > 0 {
		// A configured key revoked on any replica, before this one
		// started, is refused from the first request on.
		ctx, cancel := storeCtx()
		defer cancel()
		if err := ms.refreshRevoked(ctx); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// Open reports whether any well-formed key is accepted.
func (ms *Merchants) Open() bool { return ms.open }

// Configured returns the configured merchants (none in open mode).
func (ms *Merchants) Configured() []*Merchant { return ms.list }

// ByID returns a merchant by its id (for pages, which carry no key). On a
// shared store it finds an open-mode merchant this replica has not seen
// there; a store that cannot be read is logged and reads as not found.
func (ms *Merchants) ByID(id string) (*Merchant, bool) {
	ms.mu.RLock()
	e, ok := ms.byID[id]
	ms.mu.RUnlock()
	if !ok {
		if ms.store != nil {
			return ms.byIDShared(id)
		}
		return nil, false
	}
	return &e.Merchant, true
}

// OpenCount is the number of open-mode merchants held now (by this
// replica, on a shared store).
func (ms *Merchants) OpenCount() int {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.openCount
}

// ErrUnknownKey is returned for a well-formed key that no merchant has,
// or one that was revoked.
var ErrUnknownKey = errors.New("unknown api key")

// ErrMalformedKey is returned for a key that is not a bearer token.
var ErrMalformedKey = errors.New("malformed api key")

// ErrMerchantLimit is wrapped by Authenticate when open mode already holds
// its cap of merchants and a new token arrives. Merchants already held
// are served as before.
var ErrMerchantLimit = errors.New("merchant limit reached")

// Authenticate returns the merchant a key belongs to and records the use.
// The key is looked up by its SHA-256 digest and then compared in constant
// time, so response timing says nothing about how much of a guessed key
// was right. A known key takes a read lock and an atomic store, and
// allocates nothing.
//
// On a shared store a configured key is still found in memory, without
// asking the store; any other key is looked up in the store on every call,
// so that a key created or revoked on another replica counts here at once.
// A store that cannot be reached is an error wrapping ErrUnavailable.
func (ms *Merchants) Authenticate(key string) (*Merchant, error) {
	if !WellFormedKey(key) {
		return nil, ErrMalformedKey
	}
	h := sha256.Sum256([]byte(key))
	ms.mu.RLock()
	r := ms.keys[h]
	var e *merchantEntry
	if r == nil && ms.store != nil {
		ms.mu.RUnlock()
		e, err := ms.authenticateShared(h, key)
		if err != nil {
			return nil, err
		}
		e.lastUsed.Store(ms.now().UnixNano())
		return &e.Merchant, nil
	}
	if r == nil && ms.open {
		e = ms.token(h)
		if e == nil && ms.revoked[h] != nil {
			ms.mu.RUnlock()
			return nil, ErrUnknownKey
		}
	}
	ms.mu.RUnlock()

	switch {
	case r != nil:
		if subtle.ConstantTimeCompare(r.key, []byte(key)) != 1 {
			return nil, ErrUnknownKey
		}
		e = r.owner
		if ms.store != nil {
			ms.maybeRefreshRevoked()
		}
	case e != nil:
		// An open-mode token: its digest is the whole of what is kept.
	case !ms.open:
		return nil, ErrUnknownKey
	default:
		var err error
		if e, err = ms.addOpen(h, key); err != nil {
			return nil, err
		}
	}
	e.lastUsed.Store(ms.now().UnixNano())
	return &e.Merchant, nil
}

// tokenKey is where tokens keeps the merchant of a token's digest.
func tokenKey(h [32]byte) uint64 { return binary.LittleEndian.Uint64(h[:8]) }

// token is the open-mode merchant of a token's digest, if any; callers
// hold ms.mu.
func (ms *Merchants) token(h [32]byte) *merchantEntry {
	if e := ms.tokens[tokenKey(h)]; e != nil && e.hash == h {
		return e
	}
	return nil
}

// addOpen makes the open-mode merchant of a token seen for the first time,
// unless another request made it meanwhile, the token was revoked, or the
// cap is reached.
func (ms *Merchants) addOpen(h [32]byte, key string) (*merchantEntry, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if e := ms.token(h); e != nil {
		return e, nil
	}
	if ms.tokens[tokenKey(h)] != nil {
		// Another token's digest starts with the same 8 bytes: a crafted
		// collision, since chance would take billions of tokens.
		return nil, ErrUnknownKey
	}
	if r := ms.keys[h]; r != nil {
		// Created while this request waited for the lock.
		if subtle.ConstantTimeCompare(r.key, []byte(key)) != 1 {
			return nil, ErrUnknownKey
		}
		return r.owner, nil
	}
	if ms.revoked[h] != nil {
		return nil, ErrUnknownKey
	}
	if ms.maxMerchants >= 0 && ms.openCount >= ms.maxMerchants {
		return nil, fmt.Errorf("%w: this sandbox holds at most %d merchants in open mode; use a key that has been used before, or wait until idle merchants are forgotten",
			ErrMerchantLimit, ms.maxMerchants)
	}
	id := "key_" + hex.EncodeToString(h[:6])
	if ms.byID[id] != nil {
		// Two tokens whose digests share 48 bits: rare enough that the
		// longer id costs nothing in practice.
		id = "key_" + hex.EncodeToString(h[:16])
	}
	e := &merchantEntry{open: true, hash: h, created: ms.now().UnixNano()}
	e.ID, e.Name = id, id
	e.PCIApproved = true
	e.Accounts = ms.sandboxAccts
	e.tokenMaskLen = uint8(copy(e.tokenMask[:], MaskKey(key)))
	ms.tokens[tokenKey(h)] = e
	ms.byID[id] = e
	ms.openCount++
	return e, nil
}

// Forget removes the open-mode merchants that have had no request for
// idle and are not busy (busy reports pending deliveries or scheduled
// work), with their created keys, revoked digests and added endpoints, and
// returns their ids so the caller can drop their data elsewhere.
// Configured merchants are never forgotten. busy is called without any
// lock of Merchants held, so it may take locks of its own.
//
// A token of a forgotten merchant that comes back is a new merchant with
// the same id (the id is derived from the token); the caller drops the
// old data before that can matter, as it runs right after Forget.
//
// On a shared store Forget drops only this replica's copy of a merchant:
// its token, created keys, revocations and added endpoints stay in the
// store for the other replicas, and its token coming back here is the same
// merchant again, with all of them. The caller must likewise keep what
// the store shares (payments, clocks).
func (ms *Merchants) Forget(now time.Time, idle time.Duration, busy func(merchantID string) bool) []string {
	if !ms.open {
		return nil
	}
	cutoff := now.Add(-idle).UnixNano()
	var candidates []*merchantEntry
	ms.mu.RLock()
	for _, e := range ms.byID {
		if e.open && e.lastUsed.Load() <= cutoff {
			candidates = append(candidates, e)
		}
	}
	ms.mu.RUnlock()

	var quiet []*merchantEntry
	for _, e := range candidates {
		if busy == nil || !busy(e.ID) {
			quiet = append(quiet, e)
		}
	}
	if len(quiet) == 0 {
		return nil
	}

	ms.mu.Lock()
	defer ms.mu.Unlock()
	var gone []string
	for _, e := range quiet {
		// A request that authenticated while busy ran keeps its merchant.
		if ms.byID[e.ID] != e || e.lastUsed.Load() > cutoff {
			continue
		}
		ms.removeLocked(e)
		gone = append(gone, e.ID)
	}
	return gone
}

// removeLocked drops an open-mode merchant and everything Merchants holds
// for it.
func (ms *Merchants) removeLocked(e *merchantEntry) {
	delete(ms.byID, e.ID)
	if e.tokenRevoked {
		delete(ms.revoked, e.hash)
	} else {
		delete(ms.tokens, tokenKey(e.hash))
	}
	if e.ext != nil {
		for _, r := range e.ext.keys {
			delete(ms.keys, sha256.Sum256(r.key))
		}
		for _, h := range e.ext.revoked {
			if ms.revoked[h] == e {
				delete(ms.revoked, h)
			}
		}
	}
	ms.openCount--
}

// entryLocked finds a merchant by id; ms.mu must be held.
func (ms *Merchants) entryLocked(merchantID string) (*merchantEntry, error) {
	e, ok := ms.byID[merchantID]
	if !ok {
		return nil, fmt.Errorf("no such merchant: %w", ErrNotFound)
	}
	return e, nil
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
