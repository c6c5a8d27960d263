// Command shop serves the example shop; docker-compose.yml runs it beside
// paymock. Configuration comes from the environment:
//
//	SHOP_ADDR         listen address (default :8000)
//	PAYMENTS_URL      base URL of the payments service, e.g. http://paymock:8080
//	PAYMENTS_API_KEY  the shop's API key
//	WEBHOOK_SECRET    the whsec_ secret webhooks are signed with
package main

import (
	"errors"
	"log"
	"net/http"
	"os"
	"time"

	shop "github.com/paymock/paymock/examples/merchant-go"
)

func main() {
	s, err := shop.New(shop.ConfigFromEnv(os.Getenv))
	if err != nil {
		log.Fatal(err)
	}
	addr := os.Getenv("SHOP_ADDR")
	if addr == "" {
		addr = ":8000"
	}
	srv := &http.Server{Addr: addr, Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("shop listening on %s", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
