// Package merchants is the merchant registry: it maps bearer keys to
// merchants, makes an open-mode merchant of every new well-formed token,
// forgets idle ones, and keeps the API keys and webhook endpoints made at
// run time. Configured merchants, their keys and endpoints and the default
// endpoints are held here, from the configuration; everything made at run
// time is kept in a paymock.MerchantStore (memory or PostgreSQL), through
// one algorithm whichever store it is.
package merchants

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/egress"
)

// DefaultMaxMerchants is how many open-mode merchants are held at once
// when Config.MaxMerchants is 0.
const DefaultMaxMerchants = 10_000

// Config configures New. Store is required; the zero value of every other
// field is an open-mode sandbox with the default cap, no default webhook
// endpoints, the real clock and ids from crypto/rand.
type Config struct {
	// Merchants are the configured merchants; none means open mode.
	Merchants []paymock.Merchant
	// DefaultWebhooks receive the events of every merchant that has no
	// webhooks of its own in Merchants (the --webhook-url endpoints). They
	// are listed read-only to every such merchant.
	DefaultWebhooks []paymock.WebhookEndpoint
	// MaxMerchants caps the open-mode merchants held at once; a new token
	// past it gets paymock.ErrMerchantLimit. 0 means DefaultMaxMerchants,
	// a negative value no cap. Configured merchants never count.
	MaxMerchants int
	// Now reads the time of last use, key creation and endpoint creation;
	// nil means time.Now. It is wall time, not a merchant's sandbox clock:
	// idleness is about requests, not about the merchant's frozen clock.
	Now func() time.Time
	// IDs makes the ak_ and we_ ids of what is made at run time; nil means
	// unguessable ids from crypto/rand. API keys and webhook secrets
	// always come from crypto/rand, seed or no seed.
	IDs *paymock.MerchantIDs
	// Store keeps what is made at run time: created keys, revocations,
	// open-mode merchants, added endpoints (paymock.Backend.Merchants).
	Store paymock.MerchantStore
	// Logger receives what goes wrong with Store in the background; nil
	// discards it.
	Logger *slog.Logger
	// Empty reports whether the sandbox holds nothing of an open-mode
	// merchant outside this registry (no payments, no pending work, no
	// fault rules of its own). When the cap is reached, a new token evicts
	// the least recently used merchant that is empty and has no created
	// keys or added endpoints; nil means none is ever evicted.
	Empty func(ctx context.Context, merchantID string) bool
	// Evicted is told the id of each merchant evicted to make room, so
	// that the caller drops what it holds of it (its clock, journal); nil
	// does nothing.
	Evicted func(merchantID string)
	// Egress refuses an added endpoint whose host is, or resolves to, an
	// address webhooks may not reach; nil means egress.New(egress.Config{})
	// (link-local, metadata and unspecified addresses denied).
	Egress *egress.Policy
}

// Prefixes of the public handles of keys and endpoints; "key_" is taken
// by open-mode merchant ids.
const (
	keyIDPrefix      = "ak"
	endpointIDPrefix = "we"
)

// maxRevokedKept is how many revoked created keys an open-mode merchant
// keeps unknown; past it the oldest is dropped, so a loop of create and
// revoke cannot grow the store without end. A dropped one, presented
// again, is a new, empty merchant.
const maxRevokedKept = 1000

// revokedRefreshEvery is how often, at most, the registry reads the
// configured keys revoked by another replica sharing its store.
// Authenticating a configured key never waits for the store: the read
// runs in the background.
const revokedRefreshEvery = time.Second

// entry is what the registry holds of one merchant: the Merchant handed to
// callers, when it was last used and the requests under way. An idle
// open-mode merchant costs this one allocation here (128 bytes) besides
// its records in the store.
type entry struct {
	paymock.Merchant
	// lastUsed is the Unix nanosecond time of the last Authenticate, even
	// (used), and odd once eviction has found the merchant holding
	// something as of that use (keptMark): the merchant is then not asked
	// about again until its next use clears the mark (evictOne says why).
	// An atomic, so that recording a use takes no lock on every request;
	// the mark lives in it, not in a field of its own, so that visits
	// costs no more bytes per merchant.
	lastUsed atomic.Int64
	// visits counts the requests under way that identified this merchant
	// (Registry.Visit to End), or is taken once it is evicted or
	// forgotten, each with a compare-and-swap from 0: a merchant is
	// never taken from a request that has begun with it, and a request
	// that found it just before it was taken finds its key again.
	visits atomic.Int32
}

// keptMark is the bit of entry.lastUsed that says eviction found the
// merchant holding something as of that use; a use stores a time without
// it.
const keptMark = 1

// used records a use at now (Unix ns), which clears the kept mark.
func (e *entry) used(now int64) { e.lastUsed.Store(now &^ keptMark) }

// fixed is what the configuration gives a configured merchant.
type fixed struct {
	keys      []*keyRecord      // in the configuration's order
	endpoints []*endpointRecord // its webhooks, in order
}

// keyRecord is one configured key.
type keyRecord struct {
	id      string
	digest  [32]byte
	key     []byte
	masked  string
	created time.Time
	owner   *entry
}

func (k *keyRecord) listed() paymock.APIKey {
	return paymock.APIKey{ID: k.id, Masked: k.masked, Source: paymock.KeyFromConfig, Created: k.created}
}

// Registry maps bearer keys to merchants. With no merchants configured it
// runs in open mode: every well-formed key is a merchant of its own, up to
// a cap, and idle ones can be forgotten. It is safe for concurrent use.
type Registry struct {
	open         bool
	maxMerchants int // < 0: no cap
	now          func() time.Time
	ids          *paymock.MerchantIDs
	store        paymock.MerchantStore
	log          *slog.Logger
	egress       *egress.Policy
	empty        func(ctx context.Context, merchantID string) bool
	evicted      func(merchantID string)
	evictMu      sync.Mutex          // one eviction at a time: two must not pick one merchant
	list         []*paymock.Merchant // configured, in order; never changes
	config       map[string]*fixed   // configured merchants by id; never changes
	defaults     []*endpointRecord   // DefaultWebhooks with their ids; never changes
	sandboxAccts []paymock.Account   // shared by every open-mode merchant, never written

	// keys are the configured keys not revoked, by digest. Every request
	// with a configured key reads it without a lock; a revocation replaces
	// the whole map (under keysMu), which happens a handful of times.
	keys   atomic.Pointer[map[[32]byte]*keyRecord]
	keysMu sync.Mutex
	// revokedRead is when the configured keys revoked in the store were
	// last read (Unix ns of now); refreshing is set while a read runs.
	revokedRead atomic.Int64
	refreshing  atomic.Bool

	mu   sync.RWMutex
	byID map[string]*entry
	// reserved counts new open-mode merchants being stored: their room
	// under the cap is taken before the store is asked.
	reserved int
	// lastAdded are the enabled added endpoints read at a merchant's last
	// event: what its next one goes to should the store not answer.
	lastAdded map[string][]paymock.WebhookEndpoint

	// foundToVisit, when set, runs in Visit between finding a merchant and
	// holding it: a test takes the merchant there, as an eviction or a
	// forgetting racing the request would.
	foundToVisit func()
}

// New validates the configured merchants and default endpoints and builds
// the registry. The error is a *paymock.Error listing every violation,
// params prefixed "merchants.N." or "default_webhooks.N.", or the store's
// error reading the configured keys revoked in it.
func New(ctx context.Context, cfg Config) (*Registry, error) {
	if cfg.Store == nil {
		return nil, errors.New("merchants: Config.Store is required (memory.NewMerchants() keeps them in this process)")
	}
	r := &Registry{
		store:        cfg.Store,
		log:          cfg.Logger,
		egress:       cfg.Egress,
		empty:        cfg.Empty,
		evicted:      cfg.Evicted,
		open:         len(cfg.Merchants) == 0,
		maxMerchants: cfg.MaxMerchants,
		now:          cfg.Now,
		ids:          cfg.IDs,
		sandboxAccts: []paymock.Account{
			{ID: paymock.SandboxActiveAccount, Active: true},
			{ID: paymock.SandboxInactiveAccount, Active: false},
		},
		config:    make(map[string]*fixed),
		byID:      make(map[string]*entry),
		lastAdded: make(map[string][]paymock.WebhookEndpoint),
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.ids == nil {
		r.ids = paymock.NewMerchantIDs(nil, nil, nil)
	}
	if r.maxMerchants == 0 {
		r.maxMerchants = DefaultMaxMerchants
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.egress == nil {
		r.egress = egress.New(egress.Config{})
	}
	keys, err := r.configure(cfg)
	if err != nil {
		return nil, err
	}
	r.keys.Store(&keys)
	if len(r.list) > 0 {
		// A configured key revoked before this process started (by another
		// replica, or by an earlier run on a durable store) is refused from
		// the first request on.
		if err := r.refreshRevoked(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// configure validates cfg's merchants and default endpoints and holds
// them, returning the configured keys by digest.
func (r *Registry) configure(cfg Config) (map[[32]byte]*keyRecord, error) {
	keys := make(map[[32]byte]*keyRecord)
	var vs []paymock.Violation
	for i, w := range cfg.DefaultWebhooks {
		vs = append(vs, nest(w.Validate(), "default_webhooks."+strconv.Itoa(i)+".", fmt.Sprintf("default webhook %d: ", i+1))...)
	}
	at := stamp(r.now())
	nameAt := make(map[string]int)
	keyAt := make(map[[32]byte]int)
	for i := range cfg.Merchants {
		m := cfg.Merchants[i]
		prefix := "merchants." + strconv.Itoa(i) + "."
		who := fmt.Sprintf("merchant %d: ", i+1)
		if m.Name != "" {
			who = fmt.Sprintf("merchant %q: ", m.Name)
		}
		vs = append(vs, nest(m.Validate(), prefix, who)...)
		if j, dup := nameAt[m.Name]; dup && m.Name != "" {
			vs = append(vs, paymock.Violation{Param: prefix + "name", Code: "parameter_invalid",
				Message: fmt.Sprintf("%sname used twice: merchant %d has it too", who, j+1)})
		} else {
			nameAt[m.Name] = i
		}
		for k, key := range m.APIKeys {
			if !paymock.WellFormedKey(key) {
				continue // reported by Validate
			}
			h := sha256.Sum256([]byte(key))
			if j, dup := keyAt[h]; dup && j != i {
				vs = append(vs, paymock.Violation{Param: prefix + "api_keys." + strconv.Itoa(k), Code: "parameter_invalid",
					Message: fmt.Sprintf("%sapi key %d is used twice: merchant %d has it too", who, k+1, j+1)})
			} else if !dup {
				keyAt[h] = i
			}
		}
		if len(vs) > 0 {
			continue // build nothing more once anything is wrong
		}

		e := &entry{Merchant: m}
		e.ID = m.Name
		e.APIKeys = append([]string(nil), m.APIKeys...)
		e.Accounts = append([]paymock.Account(nil), m.Accounts...)
		e.Webhooks = append([]paymock.WebhookEndpoint(nil), m.Webhooks...)
		e.used(at.UnixNano())
		f := &fixed{}
		for k, key := range e.APIKeys {
			h := sha256.Sum256([]byte(key))
			if _, dup := keys[h]; dup {
				continue // the same key twice in one merchant is reported above
			}
			rec := &keyRecord{id: configID(keyIDPrefix, "config key", e.ID, strconv.Itoa(k)), digest: h,
				key: []byte(key), masked: paymock.MaskKey(key), created: at, owner: e}
			keys[h] = rec
			f.keys = append(f.keys, rec)
		}
		for j := range e.Webhooks {
			rec := &endpointRecord{id: configID(endpointIDPrefix, "config endpoint", e.ID, strconv.Itoa(j)),
				url: e.Webhooks[j].URL, secret: e.Webhooks[j].Secret, source: paymock.EndpointFromConfig, created: at}
			e.Webhooks[j].ID = rec.id
			f.endpoints = append(f.endpoints, rec)
		}
		r.list = append(r.list, &e.Merchant)
		r.byID[e.ID] = e
		r.config[e.ID] = f
	}
	if len(vs) > 0 {
		return nil, paymock.Invalid(vs...)
	}
	for i, w := range cfg.DefaultWebhooks {
		r.defaults = append(r.defaults, &endpointRecord{id: configID(endpointIDPrefix, "default endpoint", strconv.Itoa(i)),
			url: w.URL, secret: w.Secret, source: paymock.EndpointDefault, created: at})
	}
	return keys, nil
}

// nest puts violations of a part under the param prefix of the whole and
// says in the message which part it is.
func nest(vs []paymock.Violation, paramPrefix, messagePrefix string) []paymock.Violation {
	for i := range vs {
		vs[i].Param = paramPrefix + vs[i].Param
		vs[i].Message = messagePrefix + vs[i].Message
	}
	return vs
}

// base62 is the alphabet of derived ids and created keys.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// configID is the id of a configured key or endpoint: derived from where
// it is in the configuration, so that every replica of one configuration
// (and every run of it) gives it the same id, and not from the key, which
// may be short enough to find again from a digest of it.
func configID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	out := make([]byte, 0, len(prefix)+1+paymock.IDLength)
	out = append(out, prefix...)
	out = append(out, '_')
	for _, b := range sum[:paymock.IDLength] {
		out = append(out, base62[int(b)%len(base62)])
	}
	return string(out)
}

// stamp is a time as the store gives it back: UTC, no monotonic reading.
func stamp(t time.Time) time.Time { return t.Round(0).UTC() }

// Open reports whether any well-formed key is accepted.
func (r *Registry) Open() bool { return r.open }

// Configured returns the configured merchants (none in open mode).
func (r *Registry) Configured() []*paymock.Merchant { return r.list }

// OpenCount is the number of open-mode merchants this registry holds now.
func (r *Registry) OpenCount() int {
	if !r.open {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byID)
}

// ByID returns a merchant by its id (for pages, which carry no key),
// including an open-mode merchant the store knows and this registry does
// not hold (first seen by another replica). A store that cannot be read is
// logged and reads as not found.
func (r *Registry) ByID(ctx context.Context, id string) (*paymock.Merchant, bool) {
	e, err := r.entryOf(ctx, id)
	if err != nil {
		if !errors.Is(err, paymock.ErrNotFound) {
			r.log.Warn("merchant not read from the store", "merchant", id, "error", err)
		}
		return nil, false
	}
	return &e.Merchant, true
}

// entryOf finds a merchant: one held here, or an open-mode merchant the
// store knows, which is then held (past the cap it is served without
// being held). An unknown one wraps paymock.ErrNotFound.
func (r *Registry) entryOf(ctx context.Context, merchantID string) (*entry, error) {
	r.mu.RLock()
	e := r.byID[merchantID]
	r.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	if !r.open {
		return nil, fmt.Errorf("no such merchant: %w", paymock.ErrNotFound)
	}
	_, found, err := r.store.OpenKey(ctx, merchantID)
	if err != nil {
		return nil, err
	} else if !found {
		return nil, fmt.Errorf("no such merchant: %w", paymock.ErrNotFound)
	}
	return r.hold(merchantID), nil
}

// Authenticate returns the merchant a key belongs to and records the use.
// A configured key is found by its SHA-256 digest in memory, with no lock,
// and compared in constant time, so response timing says nothing about
// how much of a guessed key was right. Any other key is looked up by its
// digest in the store on every call, so that a key created or revoked by
// another replica counts here at once; an in-process store answers from a
// map. A known key allocates nothing. A store that cannot be reached is
// an error wrapping paymock.ErrUnavailable.
func (r *Registry) Authenticate(ctx context.Context, key string) (*paymock.Merchant, error) {
	e, err := r.authenticate(ctx, key)
	if err != nil {
		return nil, err
	}
	return &e.Merchant, nil
}

// authenticate is Authenticate's lookup: the merchant's entry, its use
// recorded.
func (r *Registry) authenticate(ctx context.Context, key string) (*entry, error) {
	if !paymock.WellFormedKey(key) {
		return nil, paymock.ErrMalformedKey
	}
	h := sha256.Sum256([]byte(key))
	now := r.now().UnixNano()
	if k := (*r.keys.Load())[h]; k != nil {
		if subtle.ConstantTimeCompare(k.key, []byte(key)) != 1 {
			return nil, paymock.ErrUnknownKey
		}
		k.owner.used(now)
		r.maybeRefreshRevoked(now)
		return k.owner, nil
	}
	e, err := r.runTimeKey(ctx, h, key)
	if err != nil {
		return nil, err
	}
	e.used(now)
	return e, nil
}

// runTimeKey finds the merchant of a key the configuration does not name,
// and in open mode makes the merchant of a new token.
func (r *Registry) runTimeKey(ctx context.Context, h [32]byte, key string) (*entry, error) {
	k, found, err := r.store.Key(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	switch {
	case found && k.Revoked:
		return nil, paymock.ErrUnknownKey
	case found && r.open:
		return r.hold(k.MerchantID), nil
	case found:
		r.mu.RLock()
		e := r.byID[k.MerchantID]
		r.mu.RUnlock()
		if e == nil || k.Source == paymock.KeyOpen {
			return nil, paymock.ErrUnknownKey // left by an earlier configuration
		}
		return e, nil
	case !r.open:
		return nil, paymock.ErrUnknownKey
	}
	return r.addOpen(ctx, h, key)
}

// limitError is the refusal of a new open-mode merchant past the cap.
func (r *Registry) limitError() error {
	merchants := "merchants"
	if r.maxMerchants == 1 {
		merchants = "merchant"
	}
	return fmt.Errorf("%w: this sandbox holds at most %d %s in open mode; use a key that has been used before, or wait until idle merchants are forgotten",
		paymock.ErrMerchantLimit, r.maxMerchants, merchants)
}

// addOpen stores the token of a new open-mode merchant and holds it.
// At the cap it first evicts an empty merchant (evictOne); only when none
// can be is the token refused. Its room under the cap is reserved before the
// store is asked, so that concurrent new tokens cannot overshoot it. Two
// requests (or replicas) seeing one new token at once make one merchant:
// the second finds the first's.
func (r *Registry) addOpen(ctx context.Context, h [32]byte, key string) (*entry, error) {
	for tries := 0; ; tries++ {
		r.mu.Lock()
		if r.maxMerchants < 0 || len(r.byID)+r.reserved < r.maxMerchants {
			r.reserved++
			r.mu.Unlock()
			break
		}
		r.mu.Unlock()
		// Room made by an eviction may be taken by a racing new token:
		// try a few times, then refuse.
		if tries == 3 || !r.evictOne(ctx) {
			return nil, r.limitError()
		}
	}
	release := func() {
		r.mu.Lock()
		r.reserved--
		r.mu.Unlock()
	}

	k := paymock.StoredKey{Digest: h, ID: tokenID(h), Masked: paymock.MaskKey(key), Source: paymock.KeyOpen, Created: stamp(r.now())}
	// Two tokens whose digests share 48 bits get the longer id.
	for _, long := range [...]bool{false, true} {
		id := paymock.OpenMerchantID(h, long)
		k.MerchantID = id
		err := r.store.AddKey(ctx, k, -1)
		if err == nil {
			// Held under the store's copy of the id when it gives one: an
			// in-process store keeps the id anyway, so the merchant's id
			// is then allocated once.
			if got, found, err := r.store.Key(ctx, h); err == nil && found && got.MerchantID == id {
				id = got.MerchantID
			}
			r.mu.Lock()
			r.reserved--
			e := r.byID[id]
			if e == nil { // not held again meanwhile by a racing request
				e = r.newOpen(id)
				r.byID[id] = e
			}
			r.mu.Unlock()
			return e, nil
		}
		if !errors.Is(err, paymock.ErrDuplicate) {
			release()
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		// Stored meanwhile by another request, or the id is another
		// token's merchant.
		got, found, err := r.store.Key(ctx, h)
		if err != nil {
			release()
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if found {
			release()
			if got.Revoked {
				return nil, paymock.ErrUnknownKey
			}
			return r.hold(got.MerchantID), nil
		}
	}
	release()
	// Digests sharing 128 bits: a crafted collision.
	return nil, paymock.ErrUnknownKey
}

// OpenMerchantName is the name of every open-mode merchant, what the
// hosted pages show a customer. The id is derived from the token, so it
// must not be shown where the token's owner does not sign in: a public
// page that showed 48 bits of the token's SHA-256 would let anyone find a
// weak token again by dictionary.
const OpenMerchantName = "Sandbox merchant"

// newOpen is the entry of an open-mode merchant: everything but its id is
// shared by all of them. Its ids' seed is the digest of its token, which
// paymock.MerchantIDs reads from the store in a seeded run only, so that
// an unseeded run keeps no 32 bytes per merchant for it.
func (r *Registry) newOpen(id string) *entry {
	e := &entry{}
	e.ID, e.Name = id, OpenMerchantName
	e.PCIApproved = true
	e.Accounts = r.sandboxAccts
	e.used(r.now().UnixNano())
	return e
}

// hold returns the entry of an open-mode merchant the store knows, held
// from now on unless the registry already holds its cap of them: then the
// entry is served for this request only. The cap bounds what this process
// keeps; it never refuses a merchant the store knows.
func (r *Registry) hold(id string) *entry {
	r.mu.RLock()
	e := r.byID[id]
	r.mu.RUnlock()
	if e != nil {
		return e
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byID[id]; e != nil {
		return e
	}
	e = r.newOpen(id)
	if r.maxMerchants < 0 || len(r.byID)+r.reserved < r.maxMerchants {
		r.byID[id] = e
	}
	return e
}

// Forget drops the open-mode merchants that have had no request for idle,
// have none under way (Registry.Visit) and are not busy (busy reports
// pending deliveries or scheduled work),
// tells the store it holds them no more (paymock.MerchantStore's
// ReleaseMerchant: an in-process store drops their keys, revocations and
// endpoints, a shared one keeps them for the other replicas), and returns
// their ids so the caller can drop their data elsewhere. Configured
// merchants are never forgotten. busy is called without any lock of the
// registry held, so it may take locks of its own.
//
// A token of a forgotten merchant that comes back makes the merchant of
// the same id again (the id is derived from the token): a new, empty one
// when the store dropped it, the same one when the store kept it.
func (r *Registry) Forget(ctx context.Context, now time.Time, idle time.Duration, busy func(merchantID string) bool) []string {
	if !r.open {
		return nil
	}
	cutoff := now.Add(-idle).UnixNano()
	var candidates []*entry
	r.mu.RLock()
	for _, e := range r.byID {
		if e.lastUsed.Load() <= cutoff && e.visits.Load() == 0 {
			candidates = append(candidates, e)
		}
	}
	r.mu.RUnlock()

	var quiet []*entry
	for _, e := range candidates {
		if busy == nil || !busy(e.ID) {
			quiet = append(quiet, e)
		}
	}
	if len(quiet) == 0 {
		return nil
	}

	var gone []string
	r.mu.Lock()
	for _, e := range quiet {
		// A request that authenticated while busy ran keeps its merchant,
		// as does one under way since before the cutoff (a body still
		// coming, a delay fault).
		if r.byID[e.ID] != e || e.lastUsed.Load() > cutoff || !e.take() {
			continue
		}
		delete(r.byID, e.ID)
		delete(r.lastAdded, e.ID)
		gone = append(gone, e.ID)
	}
	r.mu.Unlock()
	for _, id := range gone {
		if err := r.store.ReleaseMerchant(ctx, id); err != nil {
			r.log.Warn("forgotten merchant not released in the store", "merchant", id, "error", err)
		}
	}
	return gone
}
