// Tests that the payment's hand-written wire form is byte for byte what
// encoding/json writes.

package paymock

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// samePaymentJSON fails when Encode and EncodeJSON of the wire form differ.
func samePaymentJSON(t *testing.T, p Payment, enc Encoding) {
	t.Helper()
	got, gotErr := p.Encode(enc)
	w := p.wire(enc)
	want, wantErr := EncodeJSON(w)
	if b, ok := appendWire(nil, &w); ok && len(b) > wireSize(&w) {
		t.Fatalf("%d bytes, wireSize %d: %s", len(b), wireSize(&w), b)
	}
	if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Encode:\n%s (%v)\nencoding/json:\n%s (%v)", got, gotErr, want, wantErr)
	}
}

func testPayment() Payment {
	at := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	return Payment{ID: "pay_eX4wfP3t53uWYeLytOXuTdQK", MerchantID: "mer_1", Amount: 1050, Currency: "USD", Status: StatusPending,
		Customer: Customer{ID: "cus_eX4wfP3t53uWYeLytOXuTdQK", Email: "a@b.co", Name: "A B"}, Description: "d",
		Metadata: json.RawMessage(`{"k":"v"}`), SuccessURL: "https://a.example/ok", CancelURL: "https://a.example/no",
		CheckoutURL: "http://127.0.0.1:8080/checkout/pay_x", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
}

func TestEncode_WritesWhatEncodingJSONWrites(t *testing.T) {
	card := &PaymentMethod{Type: "card", Card: CardSummary{Brand: "visa", Last4: "4242", ExpiryMonth: 12, ExpiryYear: 2030}}
	tests := []struct {
		name   string
		change func(*Payment)
	}{
		{"pending", func(*Payment) {}},
		{"completed", func(p *Payment) { p.Status, p.CompletedAt = StatusCompleted, p.CreatedAt.Add(time.Minute) }},
		{"no metadata", func(p *Payment) { p.Metadata = nil }},
		{"metadata with spaces", func(p *Payment) { p.Metadata = json.RawMessage(`{"k": "a b"}`) }},
		{"escaped name", func(p *Payment) { p.Customer.Name = "A \"B\" <c> & \\ é \u2028 \x01" }},
		{"html in description", func(p *Payment) { p.Description = "<b>&</b>" }},
		{"card", func(p *Payment) { p.PaymentMethod = card }},
		{"invalid metadata", func(p *Payment) { p.Metadata = json.RawMessage(`{a}`) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := testPayment()
			tc.change(&p)
			for _, enc := range []Encoding{{}, {AmountAsString: true}, {StatusSucceeded: true}, {OmitPaymentLink: true}} {
				samePaymentJSON(t, p, enc)
			}
		})
	}
}

// FuzzEncode_WritesWhatEncodingJSONWrites compares the two encodings of
// payments made of arbitrary strings and metadata.
func FuzzEncode_WritesWhatEncodingJSONWrites(f *testing.F) {
	f.Add("pay_x", "a@b.co", "A B", "d", []byte(`{"k":"v"}`), "https://a.example", int64(1050), uint8(0))
	f.Add("", "", "\"", "\u2028", []byte(`{"k": 1}`), "<&>", int64(-1), uint8(7))
	f.Fuzz(func(t *testing.T, id, email, name, desc string, metadata []byte, url string, amount int64, flags uint8) {
		p := testPayment()
		p.ID, p.Customer.Email, p.Customer.Name, p.Description, p.SuccessURL, p.CheckoutURL = id, email, name, desc, url, url
		p.Metadata, p.Amount = metadata, Amount(amount)
		if flags&1 != 0 {
			p.Status, p.CompletedAt = StatusCompleted, p.CreatedAt
		}
		samePaymentJSON(t, p, Encoding{AmountAsString: flags&2 != 0, StatusSucceeded: flags&4 != 0, OmitPaymentLink: flags&8 != 0})
	})
}

func TestFormatTime_WritesWhatTimeFormatWrites(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 11, 24, 4, 5, 6, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 12, 31, 23, 59, 59, 500, time.UTC),
		time.Date(-1, 6, 1, 12, 0, 0, 1, time.UTC),
		time.Date(2026, 3, 29, 2, 30, 0, 0, time.FixedZone("x", 3600+1800)),
		time.Now(),
	} {
		if got, want := FormatTime(at), at.UTC().Truncate(time.Second).Format(TimeLayout); got != want {
			t.Errorf("FormatTime(%v) = %s, want %s", at, got, want)
		}
	}
}

// FuzzFormatTime_WritesWhatTimeFormatWrites compares the hand-written
// timestamp with time.Format's at any instant and zone offset.
func FuzzFormatTime_WritesWhatTimeFormatWrites(f *testing.F) {
	f.Add(int64(1795000000), int64(0), 0)
	f.Add(int64(-62135596800), int64(1), -3600)
	f.Add(int64(253402300799), int64(999999999), 50400)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(100*3600)))
		if got, want := FormatTime(at), at.UTC().Truncate(time.Second).Format(TimeLayout); got != want {
			t.Fatalf("FormatTime(%v) = %s, want %s", at, got, want)
		}
	})
}

// FuzzFormatTimes_AreFormatTimeOfEach: the three times written into one
// shared string are FormatTime's of each, whichever of them leaves the
// years the hand-written form takes.
func FuzzFormatTimes_AreFormatTimeOfEach(f *testing.F) {
	f.Add(int64(1795000000), int64(1795000060), int64(1795086400), int64(7))
	f.Add(int64(-62135596800), int64(0), int64(253402300799), int64(999999999))
	f.Add(int64(253402300800), int64(1), int64(-62135596801), int64(-1))
	f.Fuzz(func(t *testing.T, a, b, c, nsec int64) {
		ta, tb, tc := time.Unix(a, nsec), time.Unix(b, -nsec), time.Unix(c, nsec/3)
		ga, gb, gc := formatTimes(ta, tb, tc)
		if ga != FormatTime(ta) || gb != FormatTime(tb) || gc != FormatTime(tc) {
			t.Fatalf("formatTimes = %q %q %q, want %q %q %q", ga, gb, gc, FormatTime(ta), FormatTime(tb), FormatTime(tc))
		}
	})
}

func TestFormatTimes_OneAllocation(t *testing.T) {
	at := time.Unix(1795000000, 0)
	if n := testing.AllocsPerRun(100, func() { formatTimes(at, at, at) }); n != 1 {
		t.Fatalf("formatTimes allocates %v times, want 1", n)
	}
}

// TestWire_PartsShareOneAllocation: a pending payment's wire form makes
// its amount's bytes and its next action in one allocation, and its three
// times in another; a completed one adds its completed_at string.
func TestWire_PartsShareOneAllocation(t *testing.T) {
	completed := samplePayment()
	completed.Status, completed.CompletedAt = StatusCompleted, completed.UpdatedAt
	for _, tc := range []struct {
		name   string
		p      Payment
		enc    Encoding
		allocs float64
	}{
		{"pending", samplePayment(), Encoding{}, 2},
		{"pending, amount as a string", samplePayment(), Encoding{AmountAsString: true}, 2},
		{"completed", completed, Encoding{}, 3},
	} {
		w := tc.p.wire(tc.enc)
		if (w.NextAction != nil) != (tc.p.Status == StatusPending) || w.NextAction != nil && w.NextAction.URL != tc.p.CheckoutURL {
			t.Errorf("%s: next action %+v", tc.name, w.NextAction)
		}
		if n := testing.AllocsPerRun(100, func() { tc.p.wire(tc.enc) }); n != tc.allocs {
			t.Errorf("%s: wire made %v allocations, want %v", tc.name, n, tc.allocs)
		}
	}
}

func TestWireSize_HoldsTheBytes(t *testing.T) {
	// The shortest values leave the most to the fixed part.
	p := Payment{CreatedAt: time.Unix(0, 0)}
	for _, status := range []Status{StatusPending, StatusCompleted} {
		p.Status = status
		for _, enc := range []Encoding{{}, {AmountAsString: true}, {OmitPaymentLink: true}} {
			w := p.wire(enc)
			b, ok := appendWire(nil, &w)
			if !ok {
				t.Fatal("not plain")
			}
			if size := wireSize(&w); len(b) > size {
				t.Errorf("%s %+v: %d bytes, wireSize %d", status, enc, len(b), size)
			}
		}
	}
}

// BenchmarkFormatTime compares the hand-written timestamp with
// time.Format's.
func BenchmarkFormatTime(b *testing.B) {
	at := time.Date(2026, 11, 24, 4, 5, 6, 7, time.UTC)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = FormatTime(at)
		}
	})
	b.Run("time-format", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = at.UTC().Truncate(time.Second).Format(TimeLayout)
		}
	})
}
