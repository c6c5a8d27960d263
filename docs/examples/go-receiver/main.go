// Command go-receiver is a webhook endpoint that verifies paymock's
// deliveries with the Standard Webhooks reference library for Go.
//
//	WEBHOOK_SECRET=whsec_... go run ./docs/examples/go-receiver
//
// It listens on :9000 (ADDR to change it) and accepts POST /hooks.
package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// event is the part of a paymock webhook body this receiver reads; fields
// it does not know are skipped, as they should be (an extra_fields fault
// sends some).
type event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"data"`
}

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set WEBHOOK_SECRET to the whsec_... secret paymock signs with")
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		log.Fatalf("WEBHOOK_SECRET: %v", err)
	}
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = ":9000"
	}

	http.HandleFunc("POST /hooks", func(w http.ResponseWriter, r *http.Request) {
		// Verify the raw bytes, before any JSON decoding.
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil {
			log.Printf("rejected a delivery: %v", err)
			http.Error(w, "invalid signature", http.StatusBadRequest)
			return
		}
		var ev event
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case "payment.completed", "payment.failed", "payment.expired":
			log.Printf("verified %s %s: payment %s is %s", ev.ID, ev.Type, ev.Data.ID, ev.Data.Status)
		case "webhook.test":
			log.Printf("verified %s %s", ev.ID, ev.Type)
		default:
			// New types come over time: take them and ignore them, or the
			// sender retries them for days (an unknown_type fault sends one).
			log.Printf("ignored %s of unknown type %s", ev.ID, ev.Type)
		}
		w.WriteHeader(http.StatusNoContent) // any 2xx marks the delivery delivered
	})

	log.Printf("listening on %s, POST /hooks", addr)
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
