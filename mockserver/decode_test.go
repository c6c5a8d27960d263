// The differential fuzz target of request decoding: whatever number the
// contract's check lets through, the decode takes it or answers a 400
// naming the field, never an error that would be a 500.

package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/faults"
)

// numberFields are the integer fields of request bodies, each with a body
// that holds NUM where the fuzzer's number goes, and the Go value it
// decodes into.
var numberFields = []struct {
	path, field, body string
	decode            func(body []byte) (int64, error)
}{
	{"/api/v1/payments", "expires_in", createWith(`"expires_in":NUM,"mcc":5732`), createField(func(r paymock.CreateRequest) int64 { return int64(*r.ExpiresIn) })},
	{"/api/v1/payments", "mcc", createWith(`"expires_in":60,"mcc":NUM`), createField(func(r paymock.CreateRequest) int64 { return int64(*r.MCC) })},
	{"/api/v1/payments", "payment_method.card.expiry_month", createWith(`"expires_in":60,"account_id":"acct_sandbox_active",` +
		`"payment_method":{"type":"card","card":{"number":"4242424242424242","expiry_month":NUM,"expiry_year":2034,"cvc":"123"}}`),
		createField(func(r paymock.CreateRequest) int64 { return int64(r.PaymentMethod.Card.ExpiryMonth) })},
	{"/_sandbox/faults", "status", `{"operation":"createPayment","status":NUM}`, faultField(func(r faults.Rule) int64 { return int64(r.Status) })},
	{"/_sandbox/faults", "times", `{"operation":"*","delay_ms":10,"times":NUM}`, faultField(func(r faults.Rule) int64 { return int64(*r.Times) })},
	{"/_sandbox/faults", "duplicate", `{"target":"webhooks","duplicate":NUM}`, faultField(func(r faults.Rule) int64 { return int64(r.Duplicate) })},
	{"/_sandbox/clock/advance", "seconds", `{"seconds":NUM}`, func(body []byte) (int64, error) {
		var req struct {
			Seconds paymock.Whole `json:"seconds"`
		}
		err := decodeJSON(body, &req)
		return int64(req.Seconds), err
	}},
}

func createWith(fields string) string {
	return `{"amount":10.5,"currency":"USD","customer":{"email":"jane@example.com","name":"Jane"},"description":"d",` +
		`"metadata":{},"success_url":"https://shop.example.com/s","cancel_url":"https://shop.example.com/c",` + fields + `}`
}

func createField(get func(paymock.CreateRequest) int64) func([]byte) (int64, error) {
	return func(body []byte) (int64, error) {
		var r paymock.CreateRequest
		if err := decodeJSON(body, &r); err != nil {
			return 0, err
		}
		return get(r), nil
	}
}

func FuzzDecode_TakesWhatTheContractTakes(f *testing.F) {
	for _, n := range []string{"60", "60.0", "6e1", "6E+1", "600e-1", "12.0", "1e400", "-0", "60.5",
		"9223372036854775807", "9223372036854775808", "60.000000000000001", "1e-400", "0.6e2"} {
		for i := range numberFields {
			f.Add(uint8(i), n)
		}
	}
	docs, err := contract.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, num string) {
		nf := numberFields[int(which)%len(numberFields)]
		body := []byte(strings.Replace(nf.body, "NUM", num, 1))
		if !json.Valid(body) {
			return // the chain refuses it before the contract check (invalid_json)
		}
		r, _ := http.NewRequest(http.MethodPost, nf.path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		doc := docs.For(nf.path)
		rt, err := doc.Match(r)
		if err != nil {
			t.Fatal(err)
		}
		if doc.ValidateRequest(context.Background(), r, rt, body, true) != nil {
			return // refused by the contract: a 400 already
		}
		got, err := nf.decode(body)
		if err != nil {
			de, ok := paymock.AsError(err)
			if !ok || de.Type != paymock.InvalidRequest || de.Param != nf.field {
				t.Fatalf("%s %s: the contract took it, the decode failed without a 400 naming %s: %v", nf.field, num, nf.field, err)
			}
			return
		}
		want, ok := new(big.Rat).SetString(strings.TrimSpace(num))
		if !ok || !want.IsInt() || want.Num().Cmp(big.NewInt(got)) != 0 {
			t.Fatalf("%s %s decoded as %d", nf.field, num, got)
		}
	})
}

func faultField(get func(faults.Rule) int64) func([]byte) (int64, error) {
	return func(body []byte) (int64, error) {
		var r faults.Rule
		if err := decodeFaultRule(body, &r); err != nil {
			return 0, err
		}
		return get(r), nil
	}
}
