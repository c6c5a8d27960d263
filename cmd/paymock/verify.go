// "paymock verify": a deployment of the service checked against the
// contract and against paymock's choices; or recorded exchanges checked
// offline (--replay).

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/verify"
)

// The environment variables of "paymock verify": the key and the secret
// are better kept off the command line.
const (
	verifyBaseEnv   = "PAYMOCK_VERIFY_BASE_URL"
	verifyKeyEnv    = "PAYMOCK_VERIFY_API_KEY"
	verifySecretEnv = "PAYMOCK_VERIFY_WEBHOOK_SECRET"
)

func verifyFlags() []argSpec {
	var out []argSpec
	for _, name := range []string{"base-url", "api-key", "account-id", "max-creates", "format", "out", "timeout",
		"listen", "webhook-secret", "webhook-wait", "replay"} {
		out = append(out, argSpec{name: name})
	}
	return append(out, argSpec{name: "card", isBool: true})
}

// printVerifyUsage writes the help text of "paymock verify".
func printVerifyUsage(w io.Writer) {
	fmt.Fprintf(w, `paymock verify checks a deployment of the payments service (its real
sandbox, or anything else) against openapi.yaml and against every choice
paymock made where the spec is silent.

Usage:
  paymock verify --base-url URL --api-key KEY [flags]
  paymock verify --replay DIR [--api-key KEY] [--format F] [--out FILE]

It runs a fixed, safe suite (creates, retrieve, list with pagination edges,
and the error cases: unknown id, a missing field, both mcc and account_id,
a bad key, per_page=101), says first how many payments it may create, and
reports contract violations, then drift (point, paymock's answer, the
deployment's), then the --variants that bring paymock closest. Exit status:
  0  no violation and no drift
  1  a violation, drift, or a deployment that could not be checked
     (unreachable, a refused key, a TLS error, an answer that is not JSON,
     no answer in time): the report is then partial
  2  a usage error, a --replay folder that is missing, cannot be read or
     holds no recording, or an --out file that cannot be written

Flags:
  --base-url URL          the deployment's base address (env %s)
  --api-key KEY           its API key, sent as a bearer token (env %s)
  --account-id ID         also create a payment by this account
  --card                  also create one with a test card (the 3DS path); only
                          for PCI-approved merchants, so off by default
  --max-creates N         create at most N payments (default %d); each carries
                          metadata paymock_verify=<run id>
  --format F              text (default), json or junit
  --out FILE              write the report to FILE instead of stdout
  --timeout D             bound on each call (default %s)
  --listen ADDR           receive the deployment's webhooks on ADDR (register an
                          endpoint pointing there first); without it the webhook
                          points are skipped
  --webhook-secret S      that endpoint's whsec_ secret (env %s)
  --webhook-wait D        how long to wait for the webhook of the payment the run
                          makes expire (default %s)
  --replay DIR            check exchanges recorded by "paymock proxy --record DIR"
                          offline, against openapi.yaml, instead of a deployment;
                          with --api-key, only that key's exchanges: the report
                          the proxy gave for it
`, verifyBaseEnv, verifyKeyEnv, verify.DefaultMaxCreates, verify.DefaultTimeout, verifySecretEnv, verify.DefaultWebhookWait)
}

// verifyOptions is the validated command line of "paymock verify".
type verifyOptions struct {
	cfg    verify.Config
	listen string
	format string
	out    string
	replay string
	// replayKey is the key whose recorded exchanges a replay reports;
	// "" for every exchange.
	replayKey string
}

func parseVerifyOptions(args []string, getenv func(string) string) (o *verifyOptions, help bool, err error) {
	p := parseArgs("paymock verify", args, verifyFlags())
	if p.help {
		return nil, true, nil
	}
	errs := p.errs
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	value := func(flag, env string) (string, string) {
		if p.set(flag) || env == "" {
			return p.last(flag), "--" + flag
		}
		return getenv(env), env
	}
	o = &verifyOptions{format: "text", out: p.last("out"), replay: p.last("replay"), listen: p.last("listen")}
	if p.set("format") {
		o.format = p.last("format")
	}
	switch o.format {
	case "text", "json", "junit":
	default:
		fail("invalid --format: %q: want text, json or junit", o.format)
	}
	if p.set("out") && o.out == "" {
		fail("invalid --out: want a file name")
	}
	if p.set("replay") {
		if o.replay == "" {
			fail("invalid --replay: want a folder")
		}
		// --api-key selects that key's exchanges, as paymock report
		// selects the proxy's report by key. Only the flag: a
		// PAYMOCK_VERIFY_API_KEY set for a nightly verify would
		// otherwise narrow a replay without a word.
		if p.set("api-key") {
			o.replayKey = p.last("api-key")
			if !paymock.WellFormedKey(o.replayKey) {
				fail("invalid --api-key: not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)")
			}
		}
		for _, f := range []string{"base-url", "account-id", "card", "max-creates", "listen", "webhook-secret", "webhook-wait"} {
			if p.set(f) {
				fail("--%s has no use with --replay: a replay calls no deployment", f)
			}
		}
		if len(errs) > 0 {
			return nil, false, &usageError{err: fmt.Errorf("verify: %w", errors.Join(errs...)), cmd: "verify"}
		}
		return o, false, nil
	}
	base, baseSrc := value("base-url", verifyBaseEnv)
	key, keySrc := value("api-key", verifyKeyEnv)
	switch {
	case base == "":
		fail("--base-url (or %s) is required", verifyBaseEnv)
	default:
		if _, err := parsePublicURL(base); err != nil {
			fail("invalid %s: %v", baseSrc, err)
		}
	}
	switch {
	case key == "":
		fail("--api-key (or %s) is required", verifyKeyEnv)
	case !paymock.WellFormedKey(key):
		fail("invalid %s: not a valid bearer token (letters, digits and -._~+/ only, optional trailing =)", keySrc)
	}
	o.cfg = verify.Config{BaseURL: base, APIKey: key, AccountID: p.last("account-id")}
	if p.set("card") {
		o.cfg.Card, _ = strconv.ParseBool(p.last("card"))
	}
	if p.set("account-id") && o.cfg.AccountID == "" {
		fail("invalid --account-id: want an account id")
	}
	o.cfg.MaxCreates = verify.DefaultMaxCreates
	if p.set("max-creates") {
		n, err := strconv.Atoi(strings.TrimSpace(p.last("max-creates")))
		if err != nil || n < 1 {
			fail("invalid --max-creates: %q: want a whole number of payments, at least 1", p.last("max-creates"))
		}
		o.cfg.MaxCreates = n
	}
	duration := func(flag string, def time.Duration) time.Duration {
		if !p.set(flag) {
			return def
		}
		d, err := time.ParseDuration(p.last(flag))
		if err != nil || d <= 0 {
			fail("invalid --%s: %q: want a duration greater than 0, e.g. 30s", flag, p.last(flag))
		}
		return d
	}
	o.cfg.Timeout = duration("timeout", verify.DefaultTimeout)
	wait := duration("webhook-wait", verify.DefaultWebhookWait)
	secret, secretSrc := value("webhook-secret", verifySecretEnv)
	switch {
	case o.listen != "" && secret == "":
		fail("--listen needs --webhook-secret (or %s): the secret of the endpoint that points at it", verifySecretEnv)
	case o.listen == "" && p.set("listen"):
		fail("invalid --listen: want an address, e.g. :9000")
	case o.listen == "" && (p.set("webhook-secret") || p.set("webhook-wait")):
		fail("--webhook-secret and --webhook-wait need --listen: the address the deployment's webhooks arrive at")
	case o.listen != "" && !strings.HasPrefix(secret, "whsec_"):
		// Never repeat the secret.
		fail("invalid %s: want a whsec_ secret", secretSrc)
	}
	if o.listen != "" {
		o.cfg.Webhooks = &verify.WebhookConfig{Secret: secret, Wait: wait}
	}
	if len(errs) > 0 {
		return nil, false, &usageError{err: fmt.Errorf("verify: %w", errors.Join(errs...)), cmd: "verify"}
	}
	return o, false, nil
}

// findingsError is a run that found violations, drift or a problem; main
// exits 1.
type findingsError struct{ summary string }

func (e *findingsError) Error() string { return "verify: " + e.summary }

// verifyCommand is "paymock verify".
func verifyCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, help, err := parseVerifyOptions(args, getenv)
	if help {
		printVerifyUsage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	if o.replay != "" {
		return replayCommand(ctx, o, stdout)
	}
	if o.cfg.Webhooks != nil {
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			return fmt.Errorf("verify: --listen %s: %w", o.listen, err)
		}
		o.cfg.Webhooks.Listener = ln
	}
	o.cfg.Progress = stderr
	rep, err := verify.Run(ctx, o.cfg)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch o.format {
	case "json":
		err = rep.WriteJSON(&buf)
	case "junit":
		err = rep.WriteJUnit(&buf)
	default:
		// The notice went to stderr before the run; a text report on
		// stdout would repeat it on the same terminal. One written to
		// --out is read on its own, and keeps it.
		text := *rep
		if o.out == "" {
			text.Notice = ""
		}
		err = text.WriteText(&buf)
	}
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := writeOut(o.out, stdout, buf.Bytes()); err != nil {
		return err
	}
	if !rep.Failed() {
		return nil
	}
	parts := []string{}
	if len(rep.Problems) > 0 {
		parts = append(parts, "a check got no usable answer: "+rep.Problems[0])
	}
	parts = append(parts, fmt.Sprintf("%d %s, %d drifting %s",
		len(rep.Violations), plural(len(rep.Violations), "contract violation", "contract violations"),
		len(rep.Drift), plural(len(rep.Drift), "point", "points")))
	return &findingsError{summary: strings.Join(parts, "; ")}
}

// writeOut writes a report to the file of --out, or to stdout.
func writeOut(path string, stdout io.Writer, data []byte) error {
	if path == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeOutputFile(path, data); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
