// Fake payments: the same config gives the same bytes, whatever else runs.

package fakepayments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/paymock/paymock"
)

var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func merchant(id string, pci bool) *paymock.Merchant {
	return &paymock.Merchant{ID: id, Name: id, PCIApproved: pci}
}

func config(seed uint64, m *paymock.Merchant, n int) Config {
	return Config{Seed: seed, Merchant: m, Count: n, Now: testNow, PublicURL: "http://localhost:8080"}
}

func generate(t testing.TB, cfg Config) []paymock.Payment {
	t.Helper()
	ps, err := Generate(cfg)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(ps) != cfg.Count {
		t.Fatalf("Generate gave %d payments, want %d", len(ps), cfg.Count)
	}
	return ps
}

// encodeAll is the wire form of every payment, one per line.
func encodeAll(t testing.TB, ps []paymock.Payment) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range ps {
		data, err := p.Encode(paymock.Encoding{})
		if err != nil {
			t.Fatalf("encode %s: %v", p.ID, err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestSameConfigGivesIdenticalBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"seed 7, pci merchant", config(7, merchant("acme", true), 250)},
		{"seed 0 is a seed like any other", config(0, merchant("acme", true), 50)},
		{"open-mode merchant without pci", config(42, merchant("key_0123456789ab", false), 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := encodeAll(t, generate(t, tc.cfg))
			b := encodeAll(t, generate(t, tc.cfg))
			if !bytes.Equal(a, b) {
				t.Fatal("two runs of the same config differ")
			}
		})
	}
}

func TestGlobalFakerAndOtherWorkDoNotChangeOutput(t *testing.T) {
	cfg := config(7, merchant("acme", true), 100)
	want := encodeAll(t, generate(t, cfg))
	// Unrelated work in between: other merchants, other seeds.
	generate(t, config(99, merchant("other", true), 500))
	generate(t, config(7, merchant("third", false), 30))
	if got := encodeAll(t, generate(t, cfg)); !bytes.Equal(got, want) {
		t.Fatal("output depends on what ran before")
	}
}

func TestNowIsReadAsUTCWholeSeconds(t *testing.T) {
	cfg := config(7, merchant("acme", true), 100)
	want := encodeAll(t, generate(t, cfg))
	cfg.Now = testNow.Add(400 * time.Millisecond).In(time.FixedZone("CET", 3600))
	if got := encodeAll(t, generate(t, cfg)); !bytes.Equal(got, want) {
		t.Fatal("the same instant in another zone, or with a fraction of a second, gives other payments")
	}
}

func TestConcurrentCallsAgree(t *testing.T) {
	cfgs := []Config{config(7, merchant("acme", true), 300), config(7, merchant("globex", false), 300)}
	want := make([][]byte, len(cfgs))
	for i, cfg := range cfgs {
		want[i] = encodeAll(t, generate(t, cfg))
	}
	got := make([][]byte, 8)
	done := make(chan int)
	for i := range got {
		go func() {
			defer func() { done <- i }()
			ps, err := Generate(cfgs[i%2])
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = encodeAll(t, ps)
		}()
	}
	for range got {
		<-done
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i%2]) {
			t.Errorf("concurrent call %d differs from a call on its own", i)
		}
	}
}

func TestBillingCountryFollowsCurrency(t *testing.T) {
	want := map[paymock.Currency][]string{
		paymock.USD: {"US"}, paymock.CAD: {"CA"}, paymock.GBP: {"GB"}, paymock.EUR: euroCountries,
	}
	for _, p := range generate(t, config(7, merchant("acme", true), 500)) {
		pm := p.PaymentMethod
		if pm == nil {
			continue
		}
		if pm.BillingDetails == nil || pm.BillingDetails.Address == nil || pm.BillingDetails.Name != p.Customer.Name {
			t.Fatalf("%s: billing details %+v", p.ID, pm.BillingDetails)
		}
		c := pm.BillingDetails.Address.Country
		if !slices.Contains(want[p.Currency], c) {
			t.Errorf("%s: %s payment billed in %s", p.ID, p.Currency, c)
		}
	}
}

func TestDifferentInputsGiveDifferentData(t *testing.T) {
	base := config(7, merchant("acme", true), 50)
	want := generate(t, base)
	otherMerchant := base
	otherMerchant.Merchant = merchant("globex", true)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"different seed", config(8, merchant("acme", true), 50)},
		{"different merchant", otherMerchant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generate(t, tc.cfg)
			ids := make(map[string]bool)
			for _, p := range want {
				ids[p.ID] = true
			}
			same := 0
			for i, p := range got {
				if ids[p.ID] {
					t.Errorf("id %s repeats across configs", p.ID)
				}
				if p.Customer.Email == want[i].Customer.Email && p.Description == want[i].Description {
					same++
				}
			}
			if same > 2 {
				t.Errorf("%d of %d payments have the same customer and description", same, len(got))
			}
		})
	}
}

func TestMerchantOrderDoesNotMatter(t *testing.T) {
	a, b := merchant("acme", true), merchant("globex", false)
	aFirst := encodeAll(t, generate(t, config(7, a, 120)))
	generate(t, config(7, b, 120))
	aSecond := encodeAll(t, generate(t, config(7, a, 120)))
	if !bytes.Equal(aFirst, aSecond) {
		t.Fatal("merchant A's payments change when B is generated first")
	}
}

func TestCountBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"zero gives none", config(7, merchant("acme", true), 0), false},
		{"negative is an error", config(7, merchant("acme", true), -1), true},
		{"above the maximum is an error", config(7, merchant("acme", true), MaxCount+1), true},
		{"no merchant is an error", config(7, nil, 1), true},
		{"no clock is an error", Config{Seed: 7, Merchant: merchant("acme", true), Count: 1, PublicURL: "http://localhost:8080"}, true},
		{"relative public url is an error", Config{Seed: 7, Merchant: merchant("acme", true), Count: 1, Now: testNow, PublicURL: "localhost:8080"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := Generate(tc.cfg)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Generate(%+v) succeeded, want an error", tc.cfg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if ps == nil || len(ps) != 0 {
				t.Fatalf("got %v, want an empty, non-nil slice", ps)
			}
		})
	}
}

// TestSeed7Spread checks the properties of a realistic batch one by one.
func TestSeed7Spread(t *testing.T) {
	m := merchant("acme", true)
	cfg := config(7, m, 250)
	ps := generate(t, cfg)
	start := testNow.Add(-Window)

	statuses := map[paymock.Status]int{}
	currencies := map[paymock.Currency]int{}
	ids := map[string]bool{}
	customerOf := map[string]string{} // email -> customer id
	emailOf := map[string]string{}    // customer id -> email
	cards := 0
	for i, p := range ps {
		statuses[p.Status]++
		currencies[p.Currency]++
		name := fmt.Sprintf("payment %d (%s)", i, p.ID)

		if ids[p.ID] {
			t.Errorf("%s: id repeats", name)
		}
		ids[p.ID] = true
		if len(p.ID) != len("pay_")+paymock.IDLength || !strings.HasPrefix(p.ID, "pay_") {
			t.Errorf("%s: id is not pay_ + 24 characters", name)
		}
		if p.MerchantID != m.ID {
			t.Errorf("%s: merchant %q", name, p.MerchantID)
		}

		// Time line.
		if p.CreatedAt.Before(start) || p.CreatedAt.After(testNow) {
			t.Errorf("%s: created_at %s outside the 30 days before now", name, p.CreatedAt)
		}
		if i > 0 && !p.CreatedAt.After(ps[i-1].CreatedAt) {
			t.Errorf("%s: created_at %s not after the previous %s", name, p.CreatedAt, ps[i-1].CreatedAt)
		}
		for _, ts := range []time.Time{p.CreatedAt, p.UpdatedAt, p.ExpiresAt, p.CompletedAt} {
			if ts.Location() != time.UTC || ts.Nanosecond() != 0 {
				t.Errorf("%s: time %v is not UTC whole seconds", name, ts)
			}
		}
		if exp := p.ExpiresAt.Sub(p.CreatedAt); exp < MinExpiresIn || exp > MaxExpiresIn {
			t.Errorf("%s: expires_in %s outside 15m..24h", name, exp)
		}
		switch p.Status {
		case paymock.StatusPending:
			if !p.ExpiresAt.After(testNow) {
				t.Errorf("%s: pending but expired at %s", name, p.ExpiresAt)
			}
			if !p.UpdatedAt.Equal(p.CreatedAt) || !p.CompletedAt.IsZero() {
				t.Errorf("%s: pending with updated_at %s, completed_at %s", name, p.UpdatedAt, p.CompletedAt)
			}
		case paymock.StatusExpired:
			if p.ExpiresAt.After(testNow) || !p.UpdatedAt.Equal(p.ExpiresAt) || !p.CompletedAt.IsZero() {
				t.Errorf("%s: expired with expires_at %s, updated_at %s", name, p.ExpiresAt, p.UpdatedAt)
			}
		case paymock.StatusCompleted, paymock.StatusFailed:
			if !p.UpdatedAt.After(p.CreatedAt) || !p.UpdatedAt.Before(p.ExpiresAt) || p.UpdatedAt.After(testNow) {
				t.Errorf("%s: %s at %s, outside (created %s, expires %s) or after now", name, p.Status, p.UpdatedAt, p.CreatedAt, p.ExpiresAt)
			}
			if p.Status == paymock.StatusCompleted != p.CompletedAt.Equal(p.UpdatedAt) {
				t.Errorf("%s: %s with completed_at %v", name, p.Status, p.CompletedAt)
			}
			if p.Status == paymock.StatusFailed && !p.CompletedAt.IsZero() {
				t.Errorf("%s: failed with completed_at", name)
			}
		default:
			t.Errorf("%s: status %q", name, p.Status)
		}

		// Money.
		if p.Amount < 100 || p.Amount > 200000 {
			t.Errorf("%s: amount %s outside 1.00..2000.00", name, p.Amount)
		}
		if s := p.Amount.String(); len(s) < 4 || s[len(s)-3] != '.' {
			t.Errorf("%s: amount %q without two decimals", name, s)
		}

		// Customer.
		if !paymock.ValidEmail(p.Customer.Email) || p.Customer.Email != strings.ToLower(p.Customer.Email) {
			t.Errorf("%s: email %q", name, p.Customer.Email)
		}
		if strings.TrimSpace(p.Customer.Name) == "" || !strings.HasPrefix(p.Customer.ID, "cus_") {
			t.Errorf("%s: customer %+v", name, p.Customer)
		}
		if id, ok := customerOf[p.Customer.Email]; ok && id != p.Customer.ID {
			t.Errorf("%s: email %s has customer ids %s and %s", name, p.Customer.Email, id, p.Customer.ID)
		}
		if e, ok := emailOf[p.Customer.ID]; ok && e != p.Customer.Email {
			t.Errorf("%s: customer %s has emails %s and %s", name, p.Customer.ID, e, p.Customer.Email)
		}
		customerOf[p.Customer.Email], emailOf[p.Customer.ID] = p.Customer.ID, p.Customer.Email

		// Content.
		if strings.TrimSpace(p.Description) == "" {
			t.Errorf("%s: empty description", name)
		}
		var md map[string]any
		if err := json.Unmarshal(p.Metadata, &md); err != nil || md["source"] == nil {
			t.Errorf("%s: metadata %s", name, p.Metadata)
		}
		for _, u := range []string{p.SuccessURL, p.CancelURL} {
			if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || !strings.HasSuffix(pu.Hostname(), ".example.com") {
				t.Errorf("%s: redirect url %q", name, u)
			}
		}

		// Card or checkout page.
		if pm := p.PaymentMethod; pm != nil {
			cards++
			if p.CheckoutURL != cfg.PublicURL+"/3ds/"+p.ID {
				t.Errorf("%s: card payment with page %s", name, p.CheckoutURL)
			}
			if pm.Type != "card" || len(pm.Card.Last4) != 4 || pm.Card.Brand == "unknown" ||
				pm.Card.ExpiryMonth < 1 || pm.Card.ExpiryMonth > 12 || pm.Card.ExpiryYear <= p.CreatedAt.Year() {
				t.Errorf("%s: card %+v", name, pm.Card)
			}
		} else if p.CheckoutURL != cfg.PublicURL+"/checkout/"+p.ID {
			t.Errorf("%s: checkout page %s", name, p.CheckoutURL)
		}
	}

	for _, s := range []paymock.Status{paymock.StatusPending, paymock.StatusCompleted, paymock.StatusExpired, paymock.StatusFailed} {
		if statuses[s] == 0 {
			t.Errorf("no %s payments: %v", s, statuses)
		}
	}
	for _, c := range paymock.Currencies {
		if currencies[c] == 0 {
			t.Errorf("no %s payments: %v", c, currencies)
		}
	}
	if currencies[paymock.USD] <= currencies[paymock.EUR] {
		t.Errorf("USD is not the most common currency: %v", currencies)
	}
	if cards < 25 || cards > 80 {
		t.Errorf("%d card payments of 250, want about 20%%", cards)
	}
	if n := len(customerOf); n >= len(ps) || n > len(ps)/3+1 {
		t.Errorf("%d customers for %d payments: customers should repeat", n, len(ps))
	}
	t.Logf("statuses %v, currencies %v, cards %d, customers %d", statuses, currencies, cards, len(customerOf))
}

func TestCardsOnlyForPCIApprovedMerchants(t *testing.T) {
	for _, p := range generate(t, config(7, merchant("acme", false), 250)) {
		if p.PaymentMethod != nil || !strings.Contains(p.CheckoutURL, "/checkout/") {
			t.Fatalf("%s: card payment for a merchant without PCI approval", p.ID)
		}
	}
}

func TestPublicURLTrailingSlash(t *testing.T) {
	cfg := config(7, merchant("acme", true), 20)
	cfg.PublicURL = "https://sandbox.example.com/"
	for _, p := range generate(t, cfg) {
		if !strings.HasPrefix(p.CheckoutURL, "https://sandbox.example.com/checkout/pay_") &&
			!strings.HasPrefix(p.CheckoutURL, "https://sandbox.example.com/3ds/pay_") {
			t.Fatalf("checkout url %s", p.CheckoutURL)
		}
	}
}

// paymentSchema is components.schemas.Payment of the service contract.
func paymentSchema(t *testing.T) *openapi3.Schema {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../openapi.yaml")
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	ref := doc.Components.Schemas["Payment"]
	if ref == nil || ref.Value == nil {
		t.Fatal("openapi.yaml has no components.schemas.Payment")
	}
	return ref.Value
}

// contractOptions turn on format checks, with email and uri checked the way
// the server checks them (kin-openapi does not check those by default).
var contractOptions = []openapi3.SchemaValidationOption{
	openapi3.MultiErrors(),
	openapi3.VisitAsResponse(),
	openapi3.EnableFormatValidation(),
	openapi3.WithStringFormatValidator("email", openapi3.NewCallbackValidator(func(s string) error {
		if !paymock.ValidEmail(s) {
			return errors.New("not an email address")
		}
		return nil
	})),
	openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
			return errors.New("not an absolute URI")
		}
		return nil
	})),
}

func validateWire(schema *openapi3.Schema, data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return schema.VisitJSON(v, contractOptions...)
}

func TestEveryPaymentMatchesTheContract(t *testing.T) {
	schema := paymentSchema(t)
	t.Run("the check rejects a bad payment", func(t *testing.T) {
		p := generate(t, config(7, merchant("acme", true), 1))[0]
		p.Customer.Email = "not-an-email"
		data, err := p.Encode(paymock.Encoding{})
		if err != nil {
			t.Fatal(err)
		}
		if validateWire(schema, data) == nil {
			t.Fatal("a payment with a bad email passed the contract: format checks are off")
		}
	})
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"pci merchant, seed 7", config(7, merchant("acme", true), 500)},
		{"merchant without pci, seed 1", config(1, merchant("globex", false), 500)},
		{"open-mode merchant, seed 0", config(0, merchant("key_00aa11bb22cc", true), 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range generate(t, tc.cfg) {
				data, err := p.Encode(paymock.Encoding{})
				if err != nil {
					t.Fatalf("encode %s: %v", p.ID, err)
				}
				if err := validateWire(schema, data); err != nil {
					t.Fatalf("%s does not match the Payment schema: %v\n%s", p.ID, err, data)
				}
			}
		})
	}
}

func TestNoCardNumberIsStored(t *testing.T) {
	data := encodeAll(t, generate(t, config(7, merchant("acme", true), 250)))
	for _, n := range testCards {
		if bytes.Contains(data, []byte(n)) {
			t.Fatalf("card number %s appears in the payments", n)
		}
	}
}

func TestTestCardsAreValid(t *testing.T) {
	for _, n := range testCards {
		if !paymock.Luhn(n) || paymock.CardBrand(n) == "unknown" {
			t.Errorf("test card %s: luhn %v, brand %s", n, paymock.Luhn(n), paymock.CardBrand(n))
		}
	}
}

func BenchmarkGenerate10000(b *testing.B) {
	cfg := config(7, merchant("acme", true), 10000)
	for b.Loop() {
		if _, err := Generate(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
