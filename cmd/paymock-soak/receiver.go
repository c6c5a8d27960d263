// The webhook receiver: a merchant's endpoint that verifies every delivery
// with the Standard Webhooks reference library, fails a share of them on
// purpose, and counts what it saw so the server's figures can be checked.

package main

import (
	crand "crypto/rand"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// receiverStats are the receiver's own counts.
type receiverStats struct {
	Attempts     int // POSTs received
	Accepted     int // answered 2xx
	Refused      int // answered 500 on purpose
	BadSignature int // failed verification (answered 400)
	Events       int // distinct webhook-ids seen
	Delivered    int // distinct webhook-ids answered 2xx at least once
	Duplicates   int // a 2xx to an id already answered 2xx
}

// receiver is a loopback HTTP server taking the sandbox's deliveries.
type receiver struct {
	url, secret string
	srv         *http.Server
	hook        *standardwebhooks.Webhook

	mu        sync.Mutex
	rnd       *rand.Rand
	failShare float64
	st        receiverStats
	delivered map[string]bool // webhook-id -> answered 2xx
}

// startReceiver listens on a free loopback port. failShare of the
// deliveries, drawn from seed, are answered 500.
func startReceiver(failShare float64, seed uint64) (*receiver, error) {
	key := make([]byte, 24)
	if _, err := crand.Read(key); err != nil {
		return nil, err
	}
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{
		url: "http://" + l.Addr().String() + "/hooks", secret: secret, hook: hook,
		rnd: mrand(seed, 2), failShare: failShare, delivered: map[string]bool{},
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// mrand is a generator of its own for one user of the seed.
func mrand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// ServeHTTP takes one delivery.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	verr := r.hook.Verify(body, req.Header)
	id := req.Header.Get("webhook-id")

	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Attempts++
	if _, seen := r.delivered[id]; !seen {
		r.delivered[id] = false
		r.st.Events++
	}
	switch {
	case verr != nil:
		r.st.BadSignature++
		w.WriteHeader(http.StatusBadRequest)
	case r.rnd.Float64() < r.failShare:
		r.st.Refused++
		w.WriteHeader(http.StatusInternalServerError)
	default:
		r.st.Accepted++
		if r.delivered[id] {
			r.st.Duplicates++
		} else {
			r.delivered[id] = true
			r.st.Delivered++
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (r *receiver) stats() receiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

func (r *receiver) close() { _ = r.srv.Close() }
