// The flags of serve and their PAYMOCK_* environment twins, validated
// into the options of one run.

package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/egress"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/merchants"
	"github.com/paymock/paymock/mockserver"
)

// envPrefix starts the environment variable of every flag:
// --public-url is also read from PAYMOCK_PUBLIC_URL.
const envPrefix = "PAYMOCK_"

// defaultWebhookRetry is the delay schedule between webhook delivery attempts.
const defaultWebhookRetry = "5s,30s,2m,10m,1h"

// options is the validated configuration of one run.
type options struct {
	addr       string
	publicURL  string // without trailing slash; "" means http://localhost:<bound port>
	configPath string
	apiKeys    []string

	clockMode  lifecycle.ClockMode
	clockStart time.Time // zero means now
	seed       *uint64   // nil means crypto-random ids

	logFormat string // "text" or "json"
	logLevel  slog.Level
	bodyLimit int64

	webhookURLs     []string
	webhookSecret   string
	webhookRetry    []time.Duration
	webhookRetrySet bool // --webhook-retry was given (flag or env), not defaulted
	webhookDeny     []netip.Prefix
	scenariosPath   string
	variants        string // validated; the seeded Variants is built at serve
	journalSize     int
	fakePayments    int

	faultsPath      string
	maxMerchants    int           // 0: no cap
	maxPayments     int           // 0: no cap
	merchantIdleTTL time.Duration // 0: never forget
	metrics         bool
	storeURL        string // "" is the in-memory store; else a postgres:// URL
	storeFrom       string // "--store" or PAYMOCK_STORE, for errors
}

// flagSpec describes one flag of serve: its name, default, help text and
// whether it may be given more than once.
type flagSpec struct {
	name       string
	def        string
	arg        string // placeholder in the help text
	usage      string
	repeatable bool
	isBool     bool // --name alone means true; --name=false turns it off
}

// flagSpecs is every flag of serve, in the order of the help text.
var flagSpecs = []flagSpec{
	{name: "addr", def: ":8080", arg: "host:port", usage: "listen address"},
	{name: "public-url", arg: "url", usage: "base of the URLs handed to customers (default http://localhost:<port of --addr>)"},
	{name: "config", arg: "file", usage: "YAML file of merchants, keys, accounts and webhooks"},
	{name: "api-key", arg: "key", usage: "a merchant API key; each becomes merchant key-1, key-2, ... (repeatable)", repeatable: true},
	{name: "clock", def: string(lifecycle.ClockReal), arg: "mode", usage: "real, or frozen (time moves only when advanced)"},
	{name: "clock-start", arg: "time", usage: "RFC 3339 instant every merchant's clock starts at (default now)"},
	{name: "seed", arg: "n", usage: "unsigned 64-bit seed for ids, --variants all, --fake-payments and fault draws: same seed, same output (default random)"},
	{name: "log-format", def: "text", arg: "format", usage: "text or json"},
	{name: "log-level", def: "info", arg: "level", usage: "debug, info, warn or error"},
	{name: "body-limit", def: strconv.Itoa(mockserver.DefaultBodyLimit), arg: "bytes", usage: "largest request body accepted"},
	{name: "webhook-url", arg: "url", usage: "webhook endpoint for every merchant without its own (repeatable)", repeatable: true},
	{name: "webhook-secret", arg: "whsec_...", usage: "whsec_ + base64 secret for the --webhook-url endpoints (default: generated and logged once)"},
	{name: "webhook-deny", def: "169.254.0.0/16,fe80::/10,0.0.0.0/8,::", arg: "cidrs", usage: "comma-separated address ranges webhooks may not reach, checked when an endpoint is added and at every connection (empty: none)"},
	{name: "webhook-retry", def: defaultWebhookRetry, arg: "delays", usage: "comma-separated delays between webhook delivery attempts, on the merchant's clock"},
	{name: "scenarios", arg: "path", usage: "scenario file, or folder of *.yaml and *.yml files"},
	{name: "faults", arg: "file", usage: "YAML list of fault rules applied to every merchant"},
	{name: "variants", def: "default", arg: "forms", usage: "wire forms of payments sent: amount=number|string, status=completed|succeeded, payment_link=include|omit (comma-separated), or all to rotate them (seeded)"},
	{name: "journal-size", def: strconv.Itoa(mockserver.DefaultJournalSize), arg: "n", usage: "requests kept in each merchant's journal; 0 turns the journal and the report off"},
	{name: "fake-payments", def: "0", arg: "n", usage: "payments each merchant starts with, made up from --seed"},
	{name: "max-merchants", def: strconv.Itoa(merchants.DefaultMaxMerchants), arg: "n", usage: "open-mode merchants held at once (configured ones do not count); a new key past it gets 429 merchant_limit; 0 for no cap"},
	{name: "max-payments", def: strconv.Itoa(paymock.DefaultMaxPayments), arg: "n", usage: "payments each merchant may hold; a create past it gets 400 payment_limit until POST /_sandbox/reset; 0 for no cap"},
	{name: "merchant-idle-ttl", def: defaultMerchantIdleTTL, arg: "duration", usage: "an open-mode merchant with no request for this long, and no work pending, is forgotten; 0 keeps them for ever"},
	{name: "metrics", def: "true", isBool: true, usage: "serve GET /metrics in the Prometheus text format; --metrics=false turns it off"},
	{name: "store", def: "memory", arg: "memory|url", usage: "where payments are kept: memory, or a postgres:// URL of a PostgreSQL database"},
}

// defaultMerchantIdleTTL is sandbox.DefaultMerchantIdleTTL as the help
// text shows it ("24h", not time.Duration's "24h0m0s").
const defaultMerchantIdleTTL = "24h"

// argSpecs is flagSpecs as parseArgs reads them.
func argSpecs() []argSpec {
	out := make([]argSpec, len(flagSpecs))
	for i, s := range flagSpecs {
		out[i] = argSpec{name: s.name, isBool: s.isBool}
	}
	return out
}

// envName is the environment variable of a flag: "public-url" -> "PAYMOCK_PUBLIC_URL".
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// usageError is a mistake in how paymock was invoked (a flag, an env
// variable or the config file); main exits 2 on it and points to the help
// of the command that was run.
type usageError struct {
	err error
	cmd string // "report", "healthcheck"; "" for serve and the rest
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// helpCommand is how to get the help of the command that failed.
func (e *usageError) helpCommand() string {
	if e.cmd == "" {
		return "paymock -h"
	}
	return "paymock " + e.cmd + " -h"
}

func usageErrorf(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// rawFlags is the text of every flag after the command line and the
// environment were read, with where each came from.
type rawFlags struct {
	values map[string][]string
	source map[string]string // flag name -> "--addr" or "PAYMOCK_ADDR"; absent when defaulted
}

// specOf is the flagSpec of name.
func specOf(name string) flagSpec {
	for _, s := range flagSpecs {
		if s.name == name {
			return s
		}
	}
	panic("paymock: no flag " + name)
}

// get is the single value of a flag, or its default.
func (r *rawFlags) get(name string) (value, source string) {
	v := r.values[name]
	src := r.label(name)
	if len(v) == 0 {
		return specOf(name).def, src
	}
	return v[len(v)-1], src
}

// list is every value of a repeatable flag.
func (r *rawFlags) list(name string) ([]string, string) {
	return r.values[name], r.label(name)
}

func (r *rawFlags) isSet(name string) bool { _, ok := r.source[name]; return ok }

// label names the flag or env variable a value came from, for errors.
func (r *rawFlags) label(name string) string {
	if s, ok := r.source[name]; ok {
		return s
	}
	return "--" + name
}

// parseFlags reads the flags of serve from args, then the PAYMOCK_*
// environment for every flag not given on the command line. help is true
// when -h or --help was asked for; errs are the command line's own
// mistakes (unknown flags, missing values, stray arguments), which
// parseOptions reports together with those of the values.
func parseFlags(args []string, getenv func(string) string) (r *rawFlags, help bool, errs []error) {
	p := parseArgs("paymock", args, argSpecs())
	r = &rawFlags{values: map[string][]string{}, source: map[string]string{}}
	for _, s := range flagSpecs {
		if v, ok := p.values[s.name]; ok {
			if !s.repeatable {
				v = v[len(v)-1:]
			}
			r.values[s.name] = v
			r.source[s.name] = "--" + s.name
			continue // the command line wins over the environment
		}
		env := envName(s.name)
		text := getenv(env)
		if text == "" {
			continue
		}
		if s.repeatable {
			var items []string
			for _, item := range strings.Split(text, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
			r.values[s.name] = items
		} else {
			r.values[s.name] = []string{text}
		}
		r.source[s.name] = env
	}
	return r, p.help, p.errs
}

// printUsage writes the help text.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `paymock is a sandbox mock server of the payments service.

Usage:
  paymock [serve] [flags]        run the server (the default)
  paymock healthcheck [flags]    exit 0 when the server at --addr answers GET /healthz
                                 (see "paymock healthcheck -h")
  paymock report [flags]         print a running server's contract report; a CI gate
                                 (see "paymock report -h")
  paymock verify [flags]         check a deployment against the contract and paymock's
                                 choices (see "paymock verify -h")
  paymock proxy [flags]          a validating pass-through in front of a deployment
                                 (see "paymock proxy -h")
  paymock version                print the version
  paymock help [command]         print this help, or a command's

Every flag is also read from the environment as PAYMOCK_<NAME>
(--public-url -> PAYMOCK_PUBLIC_URL); a flag on the command line wins.
Repeatable flags take a comma-separated list there.

Flags:
`)
	for _, s := range flagSpecs {
		meta := "env " + envName(s.name)
		if s.def != "" {
			meta += fmt.Sprintf(", default %q", s.def)
		}
		flag := "--" + s.name
		if s.arg != "" {
			flag += " " + s.arg
		}
		fmt.Fprintf(w, "  %s  (%s)\n      %s\n", flag, meta, s.usage)
	}
}

// parseOptions validates every flag of serve and returns every mistake at
// once: argErrs (those of the command line itself, from parseFlags) first,
// then one per bad value. Errors name the flag or env variable at fault
// and never contain an API key, a webhook secret or a database password.
func parseOptions(r *rawFlags, argErrs []error) (*options, error) {
	o := &options{}
	errs := append([]error(nil), argErrs...)
	fail := func(src, format string, a ...any) {
		errs = append(errs, fmt.Errorf("invalid %s: %s", src, fmt.Sprintf(format, a...)))
	}

	var err error
	v, src := r.get("addr")
	if o.addr, err = parseAddr(v); err != nil {
		fail(src, "%v", err)
	}

	if v, src := r.get("public-url"); v != "" {
		if o.publicURL, err = parsePublicURL(v); err != nil {
			fail(src, "%v", err)
		}
	}

	if v, src := r.get("config"); v != "" {
		if st, err := os.Stat(v); err != nil {
			fail(src, "%v", err)
		} else if st.IsDir() {
			fail(src, "%s is a directory, want a YAML file", v)
		}
		o.configPath = v
	}

	keys, src := r.list("api-key")
	seen := map[string]int{}
	for i, k := range keys {
		if !paymock.WellFormedKey(k) {
			fail(src, "key %d is not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)", i+1)
			continue
		}
		if j, dup := seen[k]; dup {
			fail(src, "keys %d and %d are the same", j, i+1)
			continue
		}
		seen[k] = i + 1
		o.apiKeys = append(o.apiKeys, k)
	}

	v, src = r.get("clock")
	if o.clockMode, err = lifecycle.ParseClockMode(v); err != nil {
		fail(src, "%q: want real or frozen", v)
	}

	if v, src := r.get("clock-start"); v != "" {
		if o.clockStart, err = time.Parse(time.RFC3339, v); err != nil {
			fail(src, "%q is not an RFC 3339 time such as 2030-01-02T15:04:05Z", v)
		}
	}

	if v, src := r.get("seed"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fail(src, "%q is not an unsigned 64-bit integer", v)
		} else {
			o.seed = &n
		}
	}

	v, src = r.get("log-format")
	switch o.logFormat = strings.ToLower(v); o.logFormat {
	case "text", "json":
	default:
		fail(src, "%q: want text or json", v)
	}

	v, src = r.get("log-level")
	switch strings.ToLower(v) {
	case "debug":
		o.logLevel = slog.LevelDebug
	case "info":
		o.logLevel = slog.LevelInfo
	case "warn":
		o.logLevel = slog.LevelWarn
	case "error":
		o.logLevel = slog.LevelError
	default:
		fail(src, "%q: want debug, info, warn or error", v)
	}

	v, src = r.get("body-limit")
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
		fail(src, "%q: want a number of bytes greater than 0", v)
	} else {
		o.bodyLimit = n
	}

	urls, urlsSrc := r.list("webhook-url")
	for _, u := range urls {
		if err := checkHTTPURL(u); err != nil {
			fail(urlsSrc, "%q: %v", u, err)
			continue
		}
		o.webhookURLs = append(o.webhookURLs, u)
	}

	if v, src := r.get("webhook-secret"); v != "" {
		if err := checkWebhookSecret(v); err != nil {
			fail(src, "%v", err)
		} else {
			o.webhookSecret = v
		}
	}

	v, src = r.get("webhook-deny")
	if o.webhookDeny, err = egress.ParseDeny(v); err != nil {
		fail(src, "%v", err)
	} else {
		if o.webhookDeny == nil {
			o.webhookDeny = []netip.Prefix{} // given empty: none denied
		}
		// An address the deny list holds would fail every delivery: refuse
		// it now, as the control API does. A name is checked at each
		// connection (egress.Policy.CheckLiteral).
		policy := o.egress()
		for _, u := range o.webhookURLs {
			if err := policy.CheckLiteral(u); err != nil {
				fail(urlsSrc, "%q: %v", u, err)
			}
		}
	}

	v, src = r.get("variants")
	if _, err := paymock.ParseVariants(v, 0); err != nil {
		fail(src, "%v", err)
	} else {
		o.variants = v
	}

	v, src = r.get("journal-size")
	if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 10_000_000 {
		fail(src, "%q: want a number of requests from 0 (off) to 10000000", v)
	} else {
		o.journalSize = n
	}

	v, src = r.get("fake-payments")
	if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 1_000_000 {
		fail(src, "%q: want a number of payments from 0 to 1000000", v)
	} else {
		o.fakePayments = n
	}

	v, src = r.get("webhook-retry")
	if o.webhookRetry, err = parseRetry(v); err != nil {
		fail(src, "%v", err)
	}
	o.webhookRetrySet = r.isSet("webhook-retry")

	if v, src := r.get("scenarios"); v != "" {
		if _, err := os.Stat(v); err != nil {
			fail(src, "%v", err)
		}
		o.scenariosPath = v
	}

	if v, src := r.get("faults"); v != "" {
		if st, err := os.Stat(v); err != nil {
			fail(src, "%v", err)
		} else if st.IsDir() {
			fail(src, "%s is a directory, want a YAML file of fault rules", v)
		}
		o.faultsPath = v
	}

	v, src = r.get("max-merchants")
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		fail(src, "%q: want a whole number of merchants, or 0 for no cap", v)
	} else {
		o.maxMerchants = n
	}

	v, src = r.get("max-payments")
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		fail(src, "%q: want a whole number of payments, or 0 for no cap", v)
	} else {
		o.maxPayments = n
	}

	v, src = r.get("merchant-idle-ttl")
	if d, err := time.ParseDuration(v); err != nil || d < 0 {
		fail(src, "%q: want a duration such as 24h or 30m, or 0 to keep merchants for ever", v)
	} else {
		o.merchantIdleTTL = d
	}

	v, src = r.get("metrics")
	if b, err := strconv.ParseBool(v); err != nil {
		fail(src, "%q: want true or false", v)
	} else {
		o.metrics = b
	}

	v, src = r.get("store")
	o.storeFrom = src
	if o.storeURL, err = parseStore(v); err != nil {
		fail(src, "%v", err)
	}

	if len(errs) > 0 {
		return nil, &usageError{err: errors.Join(errs...)}
	}
	return o, nil
}

// egress is the policy of --webhook-deny.
func (o *options) egress() *egress.Policy {
	return egress.New(egress.Config{Deny: o.webhookDeny})
}

// parseStore reads --store: "memory" (returned as "") or a postgres:// URL.
// Errors never repeat the value past its scheme: a URL can hold a password.
func parseStore(s string) (string, error) {
	if strings.EqualFold(s, "memory") {
		return "", nil
	}
	scheme, _, hasScheme := strings.Cut(s, "://")
	if !hasScheme {
		if strings.ContainsAny(s, ":@/= ") {
			return "", errors.New("want memory, or a URL such as postgres://user:password@host:5432/paymock")
		}
		return "", fmt.Errorf("%q: want memory, or a URL such as postgres://user:password@host:5432/paymock", s)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
	default:
		if strings.Trim(strings.ToLower(scheme), "abcdefghijklmnopqrstuvwxyz+.-") != "" {
			return "", errors.New("want memory, or a postgres:// URL")
		}
		return "", fmt.Errorf("%s:// URLs are not supported: want memory, or a postgres:// URL", scheme)
	}
	if _, err := url.Parse(s); err != nil {
		return "", errors.New("not a usable URL: want postgres://user:password@host:5432/paymock")
	}
	// A password with an unescaped @, / or ? moves part of it into the
	// host, path or query, where later messages would print it: refuse
	// it here, saying how to write it, and print none of it.
	rest := s[len(scheme)+len("://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if strings.Count(rest[:end], "@") > 1 || strings.Contains(rest[end:], "@") {
		return "", errors.New("the URL has an @ outside its user:password@ part: escape @, / and ? in the password as %40, %2F and %3F")
	}
	return s, nil
}

// parseAddr checks a listen address: host:port with a numeric port (0
// picks a free one). The host may be empty to listen on every interface.
func parseAddr(addr string) (string, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q: want host:port, e.g. :8080 or 127.0.0.1:8080", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%q: the port must be a number from 0 to 65535", addr)
	}
	return addr, nil
}

// parsePublicURL checks a --public-url and trims its trailing slashes.
func parsePublicURL(s string) (string, error) {
	if err := checkHTTPURL(s); err != nil {
		return "", fmt.Errorf("%q: %v", s, err)
	}
	u, _ := url.Parse(s)
	if u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return "", fmt.Errorf("%q: a base URL takes no query or fragment", s)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q: a base URL takes no user name or password", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// checkHTTPURL accepts absolute http and https URLs with a host.
func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("want an absolute http:// or https:// URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// checkWebhookSecret accepts "whsec_" followed by standard base64. The
// error never repeats the secret.
func checkWebhookSecret(s string) error {
	_, err := paymock.WebhookSecretKey(s)
	return err
}

// parseRetry reads comma-separated Go durations, each greater than 0.
func parseRetry(s string) ([]time.Duration, error) {
	var out []time.Duration
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("delay %d, %q, is not a duration such as 30s or 2m", i+1, item)
		}
		if d <= 0 {
			return nil, fmt.Errorf("delay %d, %q, must be greater than 0", i+1, item)
		}
		out = append(out, d)
	}
	return out, nil
}

// otherEnv is every PAYMOCK_* variable serve does not read that is no
// mistake: one set in the shell for another command must not stop the
// start. The subcommands' own are their constants, so a renamed one is
// followed here; TestUnknownEnv_AcceptsEveryVariableTheRepositoryNames
// fails on any variable a subcommand, a doc, a script, an example or a
// test reads that is missing from it.
var otherEnv = []string{
	reportURLEnv, reportKeyEnv, // paymock report
	verifyBaseEnv, verifyKeyEnv, verifySecretEnv, // paymock verify
	proxyUpstreamEnv,  // paymock proxy
	envPrefix + "URL", // what CI jobs often call the server's address
	// scripts/: bench.sh, postgres.sh, test.sh, image.sh; the
	// benchmarks' heap profiles; verify's doc test.
	envPrefix + "BIN", envPrefix + "POSTGRES_URL", envPrefix + "FUZZTIME", envPrefix + "HEAPPROFILE",
	envPrefix + "IMAGE", envPrefix + "LOCAL_BASES", envPrefix + "UPDATE_DOCS",
	// The ports the compose files publish (examples/, docs/docker.md):
	// docker compose reads them, not paymock.
	envPrefix + "PORT", envPrefix + "1_PORT", envPrefix + "2_PORT",
}

// otherEnvPrefixes start the variables of paymock's own tests
// (PAYMOCK_TEST_STORE, PAYMOCK_SKIP_DOCKER, ...).
var otherEnvPrefixes = []string{envPrefix + "TEST_", envPrefix + "SKIP_"}

// unknownEnv is an error for every PAYMOCK_* variable of environ that
// serve does not read and otherEnv does not know, with the nearest name
// when one is close: a typo there (PAYMOCK_ADRR) must stop the start as a
// mistyped flag does, rather than start on the defaults.
func unknownEnv(environ []string) []error {
	var specs []argSpec
	known := map[string]bool{}
	for _, s := range flagSpecs {
		known[envName(s.name)] = true
		specs = append(specs, argSpec{name: s.name})
	}
	for _, name := range otherEnv {
		known[name] = true
	}
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || known[name] ||
			slices.ContainsFunc(otherEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		msg := "unknown environment variable " + name
		flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, envPrefix)), "_", "-")
		if near := nearest(flag, specs); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", envName(near))
		}
		errs = append(errs, errors.New(msg+"; paymock reads PAYMOCK_<FLAG> for each flag of \"paymock --help\""))
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}
