// paymock's own answers: a whole sandbox in process, on a loopback port,
// asked the same suite, so the comparison cannot drift from the code.

package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/lifecycle"
	"github.com/paymock/paymock/sandbox"
	"github.com/paymock/paymock/webhooks"
)

// referenceKey is the key of the reference's one merchant.
const referenceKey = "sk_paymock_verify_reference"

// referenceAccount is the reference merchant's active account.
const referenceAccount = "acct_sandbox_active"

// reference is an in-process paymock and, with webhooks, the receiver of
// its deliveries.
type reference struct {
	sb   *sandbox.Sandbox
	srv  *http.Server
	done chan struct{}
	url  string
	recv *receiver
}

// startReference starts a default paymock on a frozen clock; with
// webhooks, its deliveries go to a receiver of its own.
func startReference(withWebhooks bool) (*reference, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("reference paymock: %w", err)
	}
	ref := &reference{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	seed := uint64(1)
	cfg := sandbox.Config{
		Clock: lifecycle.ClockConfig{Mode: lifecycle.ClockFrozen},
		// A configured merchant, not open mode: an unknown key must be
		// refused as a deployment refuses it.
		Merchants: []paymock.Merchant{{Name: "paymock verify", APIKeys: []string{referenceKey}, PCIApproved: true,
			Accounts: []paymock.Account{{ID: referenceAccount, Active: true}}}},
		Seed:      &seed,
		PublicURL: ref.url,
	}
	if withWebhooks {
		hookLn, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("reference paymock's receiver: %w", err)
		}
		secret, err := webhooks.GenerateSecret()
		if err == nil {
			ref.recv, err = newReceiver(hookLn, secret)
		}
		if err != nil {
			ln.Close()
			hookLn.Close()
			return nil, fmt.Errorf("reference paymock's receiver: %w", err)
		}
		cfg.Webhooks = sandbox.WebhookConfig{URLs: []string{"http://" + hookLn.Addr().String()}, Secret: secret}
	}
	ref.sb, err = sandbox.New(cfg)
	if err != nil {
		ln.Close()
		if ref.recv != nil {
			ref.recv.close()
		}
		return nil, fmt.Errorf("reference paymock: %w", err)
	}
	ref.sb.Start()
	ref.srv = &http.Server{Handler: ref.sb.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(ref.done)
		_ = ref.srv.Serve(ln)
	}()
	return ref, nil
}

func (r *reference) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	<-r.done
	_ = r.sb.Close(ctx)
	if r.recv != nil {
		r.recv.close()
	}
}

// side is the reference as one side of the suite.
func (r *reference) side(runID string, timeout time.Duration) *side {
	return &side{base: r.url, key: referenceKey, account: referenceAccount, client: &http.Client{},
		timeout: timeout, host: "the reference paymock", runID: runID, obs: newObservations()}
}

// afterCreates completes a payment of its own (the list then shows the
// successful outcome's name) and, with webhooks, moves the clock past the
// expiring payment's expiry so that its event is sent.
func (r *reference) afterCreates(s *side) func(context.Context) error {
	return func(ctx context.Context) error {
		docs, err := contract.Embedded()
		if err != nil {
			return err
		}
		cl, err := sandbox.NewClient(sandbox.ClientConfig{URL: r.url, APIKey: referenceKey, Answers: docs})
		if err != nil {
			return fmt.Errorf("reference paymock: %w", err)
		}
		extra := s.call(ctx, "reference.completed", http.MethodPost, "/api/v1/payments", s.createBody(map[string]any{"mcc": 5999}), "")
		var p struct {
			ID string `json:"id"`
		}
		if err := jsonBody(extra, &p); err != nil {
			return fmt.Errorf("reference paymock: %w", err)
		}
		delete(s.obs.exchanges, "reference.completed")
		s.obs.order = s.obs.order[:len(s.obs.order)-1]
		if _, err := cl.Complete(ctx, p.ID); err != nil {
			return fmt.Errorf("reference paymock: %w", err)
		}
		if r.recv != nil && s.obs.expiringID != "" {
			if _, err := cl.Advance(ctx, 2*time.Second); err != nil {
				return fmt.Errorf("reference paymock: %w", err)
			}
		}
		return nil
	}
}

// webhooks waits for the reference's expiry delivery.
func (r *reference) webhooks(ctx context.Context, s *side) error {
	if r.recv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s.obs.webhooks = r.recv.wait(ctx, []string{s.obs.expiringID})
	if s.obs.expiryDelivery() == nil {
		return errors.New("the reference paymock sent no expiry webhook within 10s")
	}
	return nil
}
