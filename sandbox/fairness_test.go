// Fair delivery: a merchant whose endpoints never answer cannot delay
// another merchant's deliveries or API calls, on either backend.

package sandbox

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// hungListener accepts connections and never answers on them, until the
// test ends.
type hungListener struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newHungListener(t *testing.T) *hungListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	// Registered after the sandbox, so it runs first: the held sends end
	// at once and the sandbox closes without waiting out their timeout.
	t.Cleanup(func() {
		_ = ln.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			_ = c.Close()
		}
	})
	return h
}

func (h *hungListener) accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

func (h *hungListener) url() string { return "http://" + h.ln.Addr().String() + "/hooks" }

func TestFairDelivery_AMerchantWhoseEndpointsNeverAnswerCannotDelayAnother(t *testing.T) {
	// An attempt times out only after a minute, far past the 2 s bound:
	// while B's delivery is awaited none of A's attempts can have ended,
	// so B's arriving means it went past A's hung sends, not after them.
	env := newEnv(t, withWebhookTimeout(time.Minute))
	hung := newHungListener(t)
	for range 20 {
		if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyA, map[string]any{"url": hung.url()}); st != http.StatusCreated {
			t.Fatalf("add A's endpoint: %d %v", st, body)
		}
	}
	for range 50 {
		id := env.create(keyA, nil)
		if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyA, nil); st != http.StatusOK {
			t.Fatalf("complete A's payment: %d %v", st, body)
		}
	}
	waitFor(t, func() bool { return hung.accepted() > 0 }, "A's sends to hang")

	rcv := newRawReceiver(t)
	if st, body, _ := env.do("POST", "/_sandbox/webhook-endpoints", keyB, map[string]any{"url": rcv.srv.URL + "/hooks"}); st != http.StatusCreated {
		t.Fatalf("add B's endpoint: %d %v", st, body)
	}
	id := env.create(keyB, nil)
	if st, body, _ := env.do("POST", "/_sandbox/payments/"+id+"/complete", keyB, nil); st != http.StatusOK {
		t.Fatalf("complete B's payment: %d %v", st, body)
	}
	select {
	case d := <-rcv.notify:
		if !bytes.Contains(d.Body, []byte(id)) || !bytes.Contains(d.Body, []byte(`"payment.completed"`)) {
			t.Errorf("B got %s, want the payment.completed of %s", d.Body, id)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("B's payment.completed did not arrive within 2 s while A's endpoints hang")
	}

	// None of A's sends has ended: all were still hung when B's arrived.
	if hung.accepted() == 0 {
		t.Fatal("A's endpoints were never called")
	}
	st, body, _ := env.do("GET", "/_sandbox/events?per_page=100", keyA, nil)
	if st != http.StatusOK {
		t.Fatalf("A's events: %d %v", st, body)
	}
	items := body["items"].([]any)
	if len(items) != 50 {
		t.Fatalf("A has %d events, want 50", len(items))
	}
	for _, it := range items {
		for _, d := range it.(map[string]any)["deliveries"].([]any) {
			del := d.(map[string]any)
			if del["state"] != "pending" || len(del["attempts"].([]any)) != 0 {
				t.Fatalf("one of A's deliveries ended before B's arrived: %v", del)
			}
		}
	}
	if strings.Contains(env.logs.String(), "queue full") {
		t.Error("the log speaks of a full delivery queue")
	}
}
