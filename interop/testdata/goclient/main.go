// Command goclient round-trips amounts through a paymock server with the
// client oapi-codegen generated from openapi.yaml, as a Go merchant would
// use it. The interop tests generate the client package beside this file
// in a module of their own and run it; it is not part of paymock's build.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"paymockinterop/goclient/client"
)

func main() {
	base := flag.String("base", "", "paymock's base URL")
	token := flag.String("token", "", "the merchant's API key")
	form := flag.String("form", "number", "the form the server sends amounts in: number or string")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, *base, *token, *form); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

// amounts are the smallest, a precise and the largest amount: each must
// come back exactly, which a float32 field cannot do (1234567.89 becomes
// 1234567.9).
var amounts = []string{"0.01", "1234567.89", "999999999.99"}

func run(ctx context.Context, base, token, form string) error {
	auth := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	c, err := client.NewClientWithResponses(base, client.WithRequestEditorFn(auth))
	if err != nil {
		return err
	}
	for _, want := range amounts {
		amount, err := strconv.ParseFloat(want, 64)
		if err != nil {
			return err
		}
		mcc := int32(5732)
		created, err := c.CreatePaymentWithResponse(ctx, client.CreatePaymentRequest{
			Amount:      amount,
			Currency:    client.USD,
			Customer:    client.CustomerInput{Email: "jane@example.com", Name: "Jane Doe"},
			Description: "Order " + want,
			ExpiresIn:   3600,
			Metadata:    client.MetadataInput{"order_id": "ord_" + want},
			SuccessUrl:  "https://shop.example.com/success",
			CancelUrl:   "https://shop.example.com/cancel",
			Mcc:         &mcc,
		})
		if err != nil {
			return fmt.Errorf("create %s: %w", want, err)
		}
		if created.JSON201 == nil {
			return fmt.Errorf("create %s: status %d: %s", want, created.StatusCode(), created.Body)
		}
		// A create answers a CreatedPayment (a Payment with cancel_url),
		// whose amount oapi-codegen gives a union type of its own.
		ca := created.JSON201.Amount
		if err := same(ca.AsCreatedPaymentAmount0, ca.AsCreatedPaymentAmount1, want, form); err != nil {
			return fmt.Errorf("create %s: %w", want, err)
		}
		got, err := c.RetrievePaymentWithResponse(ctx, created.JSON201.Id)
		if err != nil {
			return fmt.Errorf("retrieve %s: %w", want, err)
		}
		if got.JSON200 == nil {
			return fmt.Errorf("retrieve %s: status %d: %s", want, got.StatusCode(), got.Body)
		}
		ga := got.JSON200.Amount
		if err := same(ga.AsPaymentAmount0, ga.AsPaymentAmount1, want, form); err != nil {
			return fmt.Errorf("retrieve %s: %w", want, err)
		}
		fmt.Printf("%s round-tripped as a %s\n", want, form)
	}
	return nil
}

// same checks an amount as a generated union type holds it, read with
// its two As methods: a float64 equal to the one sent, or the decimal
// string of it.
func same(asNumber func() (float64, error), asString func() (string, error), want, form string) error {
	switch form {
	case "number":
		f, err := asNumber()
		if err != nil {
			return fmt.Errorf("amount is not a number: %w", err)
		}
		var f64 float64 = f // a float32 here would not compile
		if got := strconv.FormatFloat(f64, 'f', -1, 64); got != want {
			return fmt.Errorf("amount %s, want %s", got, want)
		}
	case "string":
		s, err := asString()
		if err != nil {
			return fmt.Errorf("amount is not a string: %w", err)
		}
		if s != want {
			return fmt.Errorf("amount %q, want %q", s, want)
		}
	default:
		return fmt.Errorf("unknown form %q", form)
	}
	return nil
}
