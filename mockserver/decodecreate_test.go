// Tests that the create body read by hand is what encoding/json reads.

package mockserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/paymock/paymock"
)

// createBodies are seeds: plain bodies the hand reader takes, and bodies
// it must leave to encoding/json.
var createBodies = []string{
	createWith(`"expires_in":60,"mcc":5732`),
	createWith(`"expires_in":3600,"account_id":"acct_sandbox_active"`),
	"{ \"amount\" : 10.50 ,\n\t\"currency\":\"USD\", \"metadata\" : {\"a\":[1,{\"b\":\"}\\\"]\"}],\"c\":null} , \"mcc\": 6e1 }",
	`{"amount":"10.50","currency":"USD"}`,
	`{"Amount":10.5}`,
	`{"amount":10.5,"amount":11}`,
	`{"customer":{"email":"a@b.co","email":"c@d.co"}}`,
	`{"customer":{"Email":"a@b.co"}}`,
	`{"customer":null}`,
	`{"description":"caf\u00e9"}`,
	`{"description":"tab\there"}`,
	`{"description":"é"}`,
	`{"expires_in":60.5}`,
	`{"expires_in":1e400}`,
	`{"mcc":null}`,
	`{"metadata":null}`,
	`{"metadata":[1]}`,
	`{"account_id":null}`,
	`{"unknown":1}`,
	`{"payment_method":{"type":"card"}}`,
	`{}`,
	`[]`,
	`{"amount":1} x`,
}

func TestDecodeCreate_TakesThePlainBody(t *testing.T) {
	for _, body := range createBodies[:3] {
		var got paymock.CreateRequest
		if !decodeCreate([]byte(body), &got) {
			t.Errorf("not read by hand: %s", body)
		}
		sameAsEncodingJSON(t, []byte(body))
	}
}

// sameAsEncodingJSON fails when the hand reader takes body and reads it
// otherwise than decodeJSON.
func sameAsEncodingJSON(t *testing.T, body []byte) {
	t.Helper()
	var got paymock.CreateRequest
	if !decodeCreate(body, &got) {
		if !reflect.DeepEqual(got, paymock.CreateRequest{}) {
			t.Fatalf("a refused body changed the request: %+v", got)
		}
		return
	}
	var want paymock.CreateRequest
	if err := decodeJSON(body, &want); err != nil {
		t.Fatalf("read by hand, refused by encoding/json (%v): %s", err, body)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read by hand as\n%#v\nencoding/json reads\n%#v\nof %s", got, want, body)
	}
}

// FuzzDecodeCreate_ReadsWhatEncodingJSONReads compares the hand reader
// with encoding/json on any valid JSON body.
func FuzzDecodeCreate_ReadsWhatEncodingJSONReads(f *testing.F) {
	for _, b := range createBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return // the chain answers invalid_json before any decode
		}
		sameAsEncodingJSON(t, body)
	})
}

// BenchmarkDecodeCreate compares the hand reader with encoding/json on
// the body of a typical create.
func BenchmarkDecodeCreate(b *testing.B) {
	body := []byte(createWith(`"expires_in":3600,"mcc":5732`))
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r paymock.CreateRequest
			if !decodeCreate(body, &r) {
				b.Fatal("not plain")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r paymock.CreateRequest
			if err := decodeJSON(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
