package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/lifecycle"
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
	scenariosPath   string
	variants        string // validated; the seeded Variants is built at serve
	journalSize     int
	fakePayments    int
}

// flagSpec describes one flag: its name, default, help text and whether it
// may be given more than once.
type flagSpec struct {
	name       string
	def        string
	arg        string // placeholder in the help text
	usage      string
	repeatable bool
}

// flagSpecs is every flag, in the order of the help text.
var flagSpecs = []flagSpec{
	{name: "addr", def: ":8080", arg: "host:port", usage: "listen address"},
	{name: "public-url", arg: "url", usage: "base of the URLs handed to customers (default http://localhost:<port of --addr>)"},
	{name: "config", arg: "file", usage: "YAML file of merchants, keys, accounts and webhooks"},
	{name: "api-key", arg: "key", usage: "a merchant API key; each becomes merchant key-1, key-2, ... (repeatable)", repeatable: true},
	{name: "clock", def: string(lifecycle.ClockReal), arg: "mode", usage: "real, or frozen (time moves only when advanced)"},
	{name: "clock-start", arg: "time", usage: "RFC 3339 instant every merchant's clock starts at (default now)"},
	{name: "seed", arg: "n", usage: "seed for ids and fake data, an unsigned integer (default random)"},
	{name: "log-format", def: "text", arg: "format", usage: "text or json"},
	{name: "log-level", def: "info", arg: "level", usage: "debug, info, warn or error"},
	{name: "body-limit", def: strconv.Itoa(mockserver.DefaultBodyLimit), arg: "bytes", usage: "largest request body accepted"},
	{name: "webhook-url", arg: "url", usage: "webhook endpoint for every merchant without its own (repeatable)", repeatable: true},
	{name: "webhook-secret", arg: "whsec_...", usage: "whsec_ + base64 secret for the --webhook-url endpoints (default: generated and logged once)"},
	{name: "webhook-retry", def: defaultWebhookRetry, arg: "delays", usage: "comma-separated delays between webhook delivery attempts, on the merchant's clock"},
	{name: "scenarios", arg: "path", usage: "scenario file or folder of *.yaml files"},
	{name: "variants", def: "default", arg: "forms", usage: "wire forms of payments sent: amount=number|string, status=completed|succeeded, payment_link=include|omit (comma-separated), or all to rotate them (seeded)"},
	{name: "journal-size", def: strconv.Itoa(mockserver.DefaultJournalSize), arg: "n", usage: "requests kept in each merchant's journal; 0 turns the journal and the report off"},
	{name: "fake-payments", def: "0", arg: "n", usage: "payments each merchant starts with, made up from --seed"},
}

// envName is the environment variable of a flag: "public-url" -> "PAYMOCK_PUBLIC_URL".
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// usageError is a mistake in how paymock was invoked (a flag, an env
// variable or the config file); main exits 2 on it.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

// rawValue collects the text of one flag; repeatable flags keep every
// occurrence.
type rawValue struct {
	spec   *flagSpec
	values []string
}

func (v *rawValue) String() string {
	if v == nil || len(v.values) == 0 {
		return ""
	}
	return strings.Join(v.values, ",")
}

func (v *rawValue) Set(s string) error {
	if v.spec.repeatable {
		v.values = append(v.values, s)
	} else {
		v.values = []string{s}
	}
	return nil
}

// rawFlags is the text of every flag after the command line and the
// environment were read, with where each came from.
type rawFlags struct {
	values map[string]*rawValue
	source map[string]string // flag name -> "--addr" or "PAYMOCK_ADDR"; absent when defaulted
}

// get is the single value of a flag, or its default.
func (r *rawFlags) get(name string) (value, source string) {
	v := r.values[name]
	src := r.label(name)
	if len(v.values) == 0 {
		return v.spec.def, src
	}
	return v.values[len(v.values)-1], src
}

// list is every value of a repeatable flag.
func (r *rawFlags) list(name string) ([]string, string) {
	return r.values[name].values, r.label(name)
}

func (r *rawFlags) isSet(name string) bool { _, ok := r.source[name]; return ok }

// label names the flag or env variable a value came from, for errors.
func (r *rawFlags) label(name string) string {
	if s, ok := r.source[name]; ok {
		return s
	}
	return "--" + name
}

// parseFlags reads args, then the PAYMOCK_* environment for every flag not
// given on the command line. It returns the remaining arguments.
// flag.ErrHelp is returned as is when -h or --help was asked for.
func parseFlags(cmd string, args []string, getenv func(string) string) (*rawFlags, []string, error) {
	fs := flag.NewFlagSet("paymock "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, help is printed by the caller
	r := &rawFlags{values: map[string]*rawValue{}, source: map[string]string{}}
	for i := range flagSpecs {
		s := &flagSpecs[i]
		v := &rawValue{spec: s}
		r.values[s.name] = v
		fs.Var(v, s.name, s.usage)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, err
		}
		return nil, nil, &usageError{err}
	}
	fs.Visit(func(f *flag.Flag) { r.source[f.Name] = "--" + f.Name })
	for _, s := range flagSpecs {
		if r.isSet(s.name) {
			continue // the command line wins over the environment
		}
		env := envName(s.name)
		text := getenv(env)
		if text == "" {
			continue
		}
		v := r.values[s.name]
		if s.repeatable {
			for _, item := range strings.Split(text, ",") {
				if item = strings.TrimSpace(item); item != "" {
					v.values = append(v.values, item)
				}
			}
		} else {
			v.values = []string{text}
		}
		r.source[s.name] = env
	}
	return r, fs.Args(), nil
}

// printUsage writes the help text.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `paymock is a sandbox mock server of the payments service.

Usage:
  paymock [serve] [flags]        run the server (the default)
  paymock healthcheck [flags]    exit 0 when the server at --addr answers GET /healthz
  paymock version                print the version

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
		fmt.Fprintf(w, "  --%s %s  (%s)\n      %s\n", s.name, s.arg, meta, s.usage)
	}
}

// parseOptions validates every flag of serve. Errors name the flag or env
// variable at fault and never contain an API key or a webhook secret.
func parseOptions(r *rawFlags) (*options, error) {
	o := &options{}
	var errs []error
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

	urls, src := r.list("webhook-url")
	for _, u := range urls {
		if err := checkHTTPURL(u); err != nil {
			fail(src, "%q: %v", u, err)
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

	if len(errs) > 0 {
		return nil, &usageError{errors.Join(errs...)}
	}
	return o, nil
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
	rest, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return errors.New("the secret must start with whsec_")
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) == 0 {
		return errors.New("the part after whsec_ must be non-empty standard base64")
	}
	return nil
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
