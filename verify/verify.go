// Package verify keeps the twin honest: it runs a fixed, safe suite of
// calls against a deployment of the payments service (its real sandbox,
// or anything else) and against an in-process paymock, checks every
// answer of the deployment against openapi.yaml, and compares the two
// sides on every open point of the spec (Points), reporting contract
// violations, drift, and the paymock settings that come closest.
package verify

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paymock/paymock/contract"
)

// Defaults of Config.
const (
	DefaultMaxCreates  = 10
	DefaultTimeout     = 30 * time.Second
	DefaultWebhookWait = 2 * time.Minute
)

// Config is what a run checks, and how.
type Config struct {
	// BaseURL is the deployment's base address, the one /api/v1 paths
	// start from.
	BaseURL string
	// APIKey is the deployment's key, sent as a bearer token and never
	// written anywhere.
	APIKey string
	// AccountID adds a create by account (and is the account of the
	// mcc-and-account error check); "" leaves that create out.
	AccountID string
	// Card adds a create with a test card (the 3DS path). Off by
	// default: the spec reserves cards for PCI-approved merchants.
	Card bool
	// MaxCreates bounds the payments the run may create; 0 means
	// DefaultMaxCreates.
	MaxCreates int
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Client makes the calls to the deployment; nil means a client that
	// follows no redirect.
	Client *http.Client
	// Webhooks turns on the webhook part; nil skips it.
	Webhooks *WebhookConfig
	// Progress receives the notice of what the run will do, first; nil
	// discards it.
	Progress io.Writer
	// RunID tags the run's payments (metadata paymock_verify); "" draws
	// one.
	RunID string
}

// WebhookConfig is the webhook part of a run.
type WebhookConfig struct {
	// Listener is where the deployment's deliveries arrive (the merchant
	// has registered an endpoint pointing at it). Run closes it.
	Listener net.Listener
	// Secret is the endpoint's whsec_ signing secret.
	Secret string
	// Wait bounds the wait for the expiry webhook; 0 means
	// DefaultWebhookWait.
	Wait time.Duration
}

// Run runs the suite and returns its report. The error is for a run that
// could not start (a bad configuration, no reference paymock); whatever
// the deployment does is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	base, host, err := checkBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, errors.New("verify: an API key is required")
	}
	if cfg.MaxCreates == 0 {
		cfg.MaxCreates = DefaultMaxCreates
	}
	if cfg.MaxCreates < 0 {
		return nil, errors.New("verify: max creates must not be negative")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if cfg.RunID == "" {
		cfg.RunID = "vfy_" + rand.Text()[:16]
	}
	docs, err := contract.Embedded()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	var dep *receiver
	if cfg.Webhooks != nil {
		if cfg.Webhooks.Listener == nil {
			return nil, errors.New("verify: the webhook part needs a listener for the deployment's deliveries")
		}
		if cfg.Webhooks.Wait <= 0 {
			cfg.Webhooks.Wait = DefaultWebhookWait
		}
		if dep, err = newReceiver(cfg.Webhooks.Listener, cfg.Webhooks.Secret); err != nil {
			cfg.Webhooks.Listener.Close()
			return nil, fmt.Errorf("verify: %w", err)
		}
		defer dep.close()
	}
	ref, err := startReference(dep != nil)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer ref.close()

	rep := &Report{RunID: cfg.RunID, Target: host, Notice: notice(cfg, host)}
	fmt.Fprintln(progress, rep.Notice)
	p := plan{maxCreates: cfg.MaxCreates, account: cfg.AccountID != "", card: cfg.Card, expiring: dep != nil}

	deployment := &side{base: base, key: cfg.APIKey, account: cfg.AccountID, client: cfg.Client, timeout: cfg.Timeout,
		host: host, runID: cfg.RunID, obs: newObservations()}
	if deployment.account == "" {
		deployment.account = "acct_paymock_verify"
	}
	problem, skips := deployment.run(ctx, p, nil)
	if problem != "" {
		rep.Problems = append(rep.Problems, problem)
	}
	rep.Skipped = skips

	pm := ref.side(cfg.RunID, cfg.Timeout)
	if refProblem, _ := pm.run(ctx, p, ref.afterCreates(pm)); refProblem != "" {
		return nil, fmt.Errorf("verify: the reference paymock failed: %s", refProblem)
	}

	if dep != nil {
		rep.Webhooks = fmt.Sprintf("listened on %s for up to %s", cfg.Webhooks.Listener.Addr(), cfg.Webhooks.Wait)
		if problem == "" {
			if err := ref.webhooks(ctx, pm); err != nil {
				return nil, fmt.Errorf("verify: %w", err)
			}
			wctx, cancel := context.WithTimeout(ctx, cfg.Webhooks.Wait)
			deployment.obs.webhooks = dep.wait(wctx, []string{deployment.obs.expiringID})
			cancel()
			rep.Webhooks += fmt.Sprintf("; %d %s received", len(deployment.obs.webhooks), plural(len(deployment.obs.webhooks), "delivery", "deliveries"))
			if deployment.obs.expiringID == "" {
				rep.Webhooks += "; the deployment did not create the payment meant to expire (expires_in 1)"
			} else if deployment.obs.expiryDelivery() == nil {
				rep.Webhooks += "; none about the payment meant to expire (" + deployment.obs.expiringID + ")"
			}
		}
	} else {
		rep.Webhooks = "skipped: no --listen (the webhook points are not compared)"
	}

	ids := newIdentity(deployment.obs)
	if ids.listTooLong(deployment.obs) {
		rep.Skipped = append(rep.Skipped, Skip{checkListCreated,
			"the list of 100 says it is one page of more, in an order the spec does not show: the run's payments were not looked for in it"})
	}
	for _, c := range deployment.obs.order {
		x := deployment.obs.exchanges[c]
		rep.Checks = append(rep.Checks, x)
		if x.Status == 0 {
			// A check after the first that got no answer: the run went
			// on without it, and the report says which.
			if x.Error != problem {
				rep.Problems = append(rep.Problems, c+": "+x.Error)
			}
			continue
		}
		for _, v := range CheckAnswer(ctx, docs.Service, x.req, x.Status, x.header, x.body) {
			v.Check = c
			rep.Violations = append(rep.Violations, v)
		}
		rep.Violations = append(rep.Violations, ids.violations(x)...)
	}
	rep.compare(pm.obs, deployment.obs)
	return rep, nil
}

// checkBase reads the base URL and returns it without a trailing slash,
// with its host for messages.
func checkBase(raw string) (base, host string, err error) {
	if raw == "" {
		return "", "", errors.New("verify: a base URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("verify: base URL %q: want an absolute http(s) URL, e.g. https://sandbox.payments.example", raw)
	}
	if u.User != nil {
		return "", "", errors.New("verify: the base URL must not carry credentials: give the key as the API key")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("verify: base URL %q: want no query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), u.Host, nil
}

// notice is what the run says before its first call.
func notice(cfg Config, host string) string {
	card := "it sends no card (--card adds a test card and the 3DS path)"
	if cfg.Card {
		card = "one of them with the test card " + testCard
	}
	return fmt.Sprintf("paymock verify %s against %s: it creates at most %d payments, each with metadata paymock_verify=%s; %s",
		cfg.RunID, host, cfg.MaxCreates, cfg.RunID, card)
}

func jsonBody(x *Exchange, v any) error {
	if x.Error != "" {
		return errors.New(x.Error)
	}
	if err := json.Unmarshal(x.body, v); err != nil {
		return fmt.Errorf("%s %s: answered %d, not JSON: %w", x.Method, x.Path, x.Status, err)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
