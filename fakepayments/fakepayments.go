// Package fakepayments makes realistic, reproducible seed payments for one
// merchant: the data behind `--fake-payments N`.
//
// Everything comes from one random source per merchant, seeded from the run's
// seed and the merchant id, so the same inputs give byte-identical payments
// (ids included) whatever else the process did before. Every payment is built
// the way the API builds one (paymock.ValidateCreate, paymock.NewPayment,
// Payment.Transition), so it obeys the create rules and the contract.
//
// The names, products and addresses are gofakeit v7's: its data is
// extracted at build time (fakedata.txt) and drawn as gofakeit draws it,
// because linking gofakeit costs every start its package initialisation,
// fake payments asked for or not.
package fakepayments

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// Config for Generate.
type Config struct {
	Seed      uint64            // the run's --seed
	Merchant  *paymock.Merchant // whose payments; its ID and PCI approval shape the output
	Count     int               // how many payments, 0..MaxCount
	Now       time.Time         // the merchant's clock now
	PublicURL string            // base for checkout/3DS URLs, e.g. "http://localhost:8080"
}

// MaxCount bounds Count, so that a typo in a flag cannot exhaust memory.
const MaxCount = 1_000_000

// Window is how far back the created_at of the payments reaches from Now.
const Window = 30 * 24 * time.Hour

// Bounds of expires_in for generated payments.
const (
	MinExpiresIn = 15 * time.Minute
	MaxExpiresIn = 24 * time.Hour
)

// Generate returns cfg.Count payments for the merchant, oldest first
// (ascending CreatedAt), reproducible: the same Seed, merchant (ID and PCI
// approval), Count, Now and PublicURL give byte-identical payments (ids
// included), whatever else the process did before, and regardless of which
// merchant is generated first.
//
// Statuses agree with Now: a pending payment expires after Now; one whose
// expires_at is at or before Now is expired (updated_at = expires_at),
// completed or failed (updated_at between created_at and expires_at).
// Card payments (3DS page) are made only for PCI-approved merchants, as the
// API accepts cards only from them.
func Generate(cfg Config) ([]paymock.Payment, error) {
	d, err := parseFakeData(fakeDataText)
	if err != nil {
		// The embedded text is fixed at build time and tested: only a
		// broken build gets here.
		return nil, fmt.Errorf("fakepayments: %w", err)
	}
	return generateWith(cfg, func(src rand.Source) names { return &faker{src: src, d: d} })
}

// generateWith is Generate with the text drawn by newNames.
func generateWith(cfg Config, newNames func(rand.Source) names) ([]paymock.Payment, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Count == 0 {
		return []paymock.Payment{}, nil
	}
	g := newGenerator(cfg, newNames)
	slots := g.timeline()
	out := make([]paymock.Payment, 0, cfg.Count)
	for i := range slots {
		p, err := g.payment(slots[i])
		if err != nil {
			return nil, fmt.Errorf("fakepayments: payment %d of merchant %s: %w", i+1, cfg.Merchant.ID, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (cfg Config) validate() error {
	switch {
	case cfg.Merchant == nil:
		return errors.New("fakepayments: merchant is required")
	case cfg.Merchant.ID == "":
		return errors.New("fakepayments: merchant has no id")
	case cfg.Count < 0:
		return fmt.Errorf("fakepayments: count must not be negative, got %d", cfg.Count)
	case cfg.Count > MaxCount:
		return fmt.Errorf("fakepayments: count must be at most %d, got %d", MaxCount, cfg.Count)
	case cfg.Now.IsZero():
		return errors.New("fakepayments: now is required")
	case cfg.Now.UTC().Add(-Window).Year() < 1000 || cfg.Now.UTC().Year() > 9990:
		return fmt.Errorf("fakepayments: now %s is out of range", cfg.Now.UTC().Format(time.RFC3339))
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("fakepayments: public url %q must be an absolute http(s) URL without query", cfg.PublicURL)
	}
	return nil
}

// seeds derives the merchant's seeds from the run's seed and an FNV-1a hash
// of the merchant id: one pair for the faker's PCG source, one for ids.
func seeds(seed uint64, merchantID string) (pcg1, pcg2, ids uint64) {
	h := fnv.New64a()
	h.Write([]byte(merchantID))
	base := splitmix64(seed) ^ h.Sum64()
	return splitmix64(base + 1), splitmix64(base + 2), splitmix64(base + 3)
}

// splitmix64 is the SplitMix64 finaliser: it spreads nearby inputs (seeds
// 1, 2, 3...) over unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

type generator struct {
	cfg  Config
	now  time.Time
	base string // PublicURL without a trailing slash

	f   names        // text: names, products, addresses
	r   *rand.Rand   // numbers; the same PCG source as f
	ids *paymock.IDs // pay_ and cus_ ids, a per-merchant ChaCha8 stream

	shop      string // https://<slug>.example.com, the merchant's fake shop
	customers []person
	byEmail   map[string]string // email -> customer id, assigned on first use
	orderNo   int
	invoiceNo int
}

type person struct{ name, email string }

// names is the text a generator draws: gofakeit's Faker has these methods,
// and faker draws them as it does from the extract of its data.
type names interface {
	FirstName() string
	LastName() string
	ProductName() string
	ProductCategory() string
	Street() string
	City() string
	StateAbr() string
	Zip() string
}

// newGenerator builds the generator of cfg; newNames makes its text drawer
// on the generator's random source, which the numbers share.
func newGenerator(cfg Config, newNames func(rand.Source) names) *generator {
	s1, s2, idSeed := seeds(cfg.Seed, cfg.Merchant.ID)
	// An explicit PCG source rather than gofakeit.New(seed), which took a
	// seed of 0 as "random", so that every seed is reproducible.
	src := rand.NewPCG(s1, s2)
	g := &generator{
		cfg:     cfg,
		now:     cfg.Now.UTC().Truncate(time.Second),
		base:    strings.TrimRight(cfg.PublicURL, "/"),
		f:       newNames(src),
		r:       rand.New(src),
		ids:     paymock.NewIDs(&idSeed),
		byEmail: make(map[string]string),
	}
	g.shop = "https://" + slug(g.f.LastName()) + "-" + pick(g.r, shopWords) + ".example.com"
	g.orderNo = 10000 + g.r.IntN(50000)
	g.invoiceNo = 1 + g.r.IntN(400)
	g.customers = g.customerPool((cfg.Count + 2) / 3)
	return g
}

var shopWords = []string{"shop", "store", "goods", "supply", "market", "outfitters", "co"}

// slot is the time line of one payment, drawn before its content.
type slot struct {
	status    paymock.Status
	created   time.Time
	expiresIn time.Duration
	updated   time.Time // when it left pending; zero for pending ones
}

// Status weights, in percent.
var statusWeights = []struct {
	status paymock.Status
	weight int
}{
	{paymock.StatusCompleted, 60},
	{paymock.StatusPending, 15},
	{paymock.StatusExpired, 15},
	{paymock.StatusFailed, 10},
}

// timeline draws status, expires_in and created_at of every payment so that
// each status is consistent with now, then orders them oldest first.
func (g *generator) timeline() []slot {
	start := g.now.Add(-Window)
	slots := make([]slot, g.cfg.Count)
	used := make(map[int64]struct{}, g.cfg.Count)
	// distinct draws a created_at in [lo, hi] (unix seconds) not used yet,
	// so that created_at is strictly increasing; after a few tries (a range
	// too crowded for the count) it settles for a repeat.
	distinct := func(lo, hi int64) int64 {
		var t int64
		for try := 0; try < 16; try++ {
			t = lo + g.r.Int64N(hi-lo+1)
			if _, dup := used[t]; !dup {
				break
			}
		}
		used[t] = struct{}{}
		return t
	}
	for i := range slots {
		s := &slots[i]
		s.status = g.status()
		s.expiresIn = g.expiresIn()
		exp := int64(s.expiresIn / time.Second)
		lo, now := start.Unix(), g.now.Unix()
		switch s.status {
		case paymock.StatusPending:
			// Still open: expires_at = created_at + expires_in > now.
			s.created = time.Unix(distinct(now-exp+1, now), 0).UTC()
		case paymock.StatusExpired:
			// Ran out unpaid: expires_at <= now.
			s.created = time.Unix(distinct(lo, now-exp), 0).UTC()
			s.updated = s.created.Add(s.expiresIn)
		default:
			// Paid or declined some time after the customer arrived, before
			// expiry and before now.
			d := g.settleDelay(exp)
			s.created = time.Unix(distinct(lo, now-d), 0).UTC()
			s.updated = s.created.Add(time.Duration(d) * time.Second)
		}
	}
	slices.SortStableFunc(slots, func(a, b slot) int { return a.created.Compare(b.created) })
	return slots
}

func (g *generator) status() paymock.Status {
	n := g.r.IntN(100)
	for _, w := range statusWeights {
		if n < w.weight {
			return w.status
		}
		n -= w.weight
	}
	return paymock.StatusCompleted
}

// Usual checkout lifetimes; one in five payments picks any whole minute.
var commonExpiries = []time.Duration{
	15 * time.Minute, 30 * time.Minute, time.Hour, time.Hour, 2 * time.Hour,
	6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
}

func (g *generator) expiresIn() time.Duration {
	if g.r.IntN(5) == 0 {
		span := int64((MaxExpiresIn - MinExpiresIn) / time.Minute)
		return MinExpiresIn + time.Duration(g.r.Int64N(span+1))*time.Minute
	}
	return pick(g.r, commonExpiries)
}

// settleDelay is how long, in seconds, a customer took to pay or be
// declined: mostly a minute or few, now and then much longer, always before
// the payment expires.
func (g *generator) settleDelay(expiresIn int64) int64 {
	d := int64(math.Exp(math.Log(90) + 0.9*g.r.NormFloat64()))
	return min(max(d, 8), expiresIn-1)
}

// customerPool makes n distinct people, each with a lower-case email
// derived from the name on an example domain.
func (g *generator) customerPool(n int) []person {
	pool := make([]person, 0, n)
	seen := make(map[string]bool, n)
	for range n {
		first, last := g.f.FirstName(), g.f.LastName()
		fl, ll := slug(first), slug(last)
		var local string
		switch g.r.IntN(5) {
		case 0:
			local = fl + ll
		case 1:
			local = fl[:1] + "." + ll
		case 2:
			local = fl + "_" + ll
		case 3:
			local = fl + "." + ll + strconv.Itoa(g.r.IntN(90)+10)
		default:
			local = fl + "." + ll
		}
		domain := pick(g.r, emailDomains)
		email := local + "@" + domain
		for k := 2; seen[email]; k++ {
			email = local + strconv.Itoa(k) + "@" + domain
		}
		seen[email] = true
		pool = append(pool, person{name: first + " " + last, email: email})
	}
	return pool
}

var emailDomains = []string{"example.com", "example.com", "example.org", "example.net", "mail.example.com"}

// customer picks a payer, favouring the front of the pool so that regulars
// come back, and gives them the merchant's customer id for their email.
func (g *generator) customer() paymock.Customer {
	u := g.r.Float64()
	c := g.customers[int(u*u*float64(len(g.customers)))]
	id, ok := g.byEmail[c.email]
	if !ok {
		id = g.ids.New("cus")
		g.byEmail[c.email] = id
	}
	return paymock.Customer{ID: id, Email: c.email, Name: c.name}
}

// Currency weights, in percent, and the rough value of one USD in each, so
// that amounts look like local prices.
var currencies = []struct {
	c      paymock.Currency
	weight int
	perUSD float64
}{
	{paymock.USD, 50, 1},
	{paymock.EUR, 20, 0.92},
	{paymock.GBP, 15, 0.79},
	{paymock.CAD, 15, 1.37},
}

func (g *generator) currency() (paymock.Currency, float64) {
	n := g.r.IntN(100)
	for _, c := range currencies {
		if n < c.weight {
			return c.c, c.perUSD
		}
		n -= c.weight
	}
	return paymock.USD, 1
}

// Amount bounds, in minor units.
const (
	minAmount paymock.Amount = 100    // 1.00
	maxAmount paymock.Amount = 200000 // 2,000.00
)

// amount draws a log-normal price (median about 35, most under a few
// hundred, a tail to 2,000) in the currency, priced the way shops do:
// often x.99, sometimes whole.
func (g *generator) amount(perUSD float64) paymock.Amount {
	var major float64
	for try := 0; try < 8; try++ {
		major = math.Exp(math.Log(35)+1.15*g.r.NormFloat64()) * perUSD
		if major >= 1 && major <= 2000 {
			break
		}
	}
	return g.priced(major)
}

func (g *generator) priced(major float64) paymock.Amount {
	cents := paymock.Amount(math.Round(major * 100))
	switch n := g.r.IntN(10); {
	case n < 4 && cents >= 200: // 24.99
		cents = cents/100*100 - 1
	case n < 6: // 25.00
		cents = (cents + 50) / 100 * 100
	}
	return min(max(cents, minAmount), maxAmount)
}

// Subscription plans and their monthly price in USD.
var plans = []struct {
	name    string
	monthly float64
}{
	{"Starter", 9}, {"Basic", 12}, {"Plus", 19}, {"Pro", 29}, {"Premium", 49}, {"Business", 99}, {"Team", 149},
}

// metadata is the merchant's metadata; the field order is the key order.
type metadata struct {
	OrderID        string `json:"order_id,omitempty"`
	SubscriptionID string `json:"subscription_id,omitempty"`
	Plan           string `json:"plan,omitempty"`
	InvoiceID      string `json:"invoice_id,omitempty"`
	Source         string `json:"source"`
}

var sources = []string{"web", "web", "web", "web", "web", "web", "mobile", "mobile", "mobile", "pos"}

// purchase draws what was bought: the description, metadata, amount and
// where the customer returns to.
func (g *generator) purchase(created time.Time, perUSD float64) (desc string, md metadata, amount paymock.Amount, success, cancel string, mcc int64) {
	md.Source = pick(g.r, sources)
	switch n := g.r.IntN(100); {
	case n < 65: // a shop order
		g.orderNo += 1 + g.r.IntN(3)
		no := strconv.Itoa(g.orderNo)
		md.OrderID = "ord_" + no
		var b strings.Builder
		b.WriteString("Order #" + no + " — ")
		items := 1 + g.r.IntN(3)*g.r.IntN(2) // one item mostly, up to three
		for i := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(1+g.r.IntN(3)*g.r.IntN(2)) + "× " + g.f.ProductName())
		}
		desc = b.String()
		amount = g.amount(perUSD)
		success = g.shop + "/orders/" + md.OrderID + "/thanks"
		cancel = g.shop + "/cart"
		mcc = pick(g.r, []int64{5311, 5399, 5732, 5999})
	case n < 85: // a subscription renewal or sign-up
		p := pick(g.r, plans)
		period, price := "monthly", p.monthly
		if g.r.IntN(4) == 0 {
			period, price = "annual", p.monthly*10
		}
		md.SubscriptionID = "sub_" + g.alnum(14)
		md.Plan = strings.ToLower(p.name) + "_" + period
		desc = fmt.Sprintf("%s plan — %s subscription (%s)", p.name, period, created.Format("Jan 2006"))
		amount = min(max(paymock.Amount(math.Round(price*perUSD))*100-1, minAmount), maxAmount)
		success = g.shop + "/account/billing?status=success"
		cancel = g.shop + "/account/billing?status=cancelled"
		mcc = 5968
	default: // an invoice
		g.invoiceNo += 1 + g.r.IntN(2)
		no := fmt.Sprintf("INV-%d-%05d", created.Year(), g.invoiceNo)
		md.InvoiceID = strings.ToLower(strings.ReplaceAll(no, "-", "_"))
		cat := g.f.ProductCategory()
		desc = fmt.Sprintf("Invoice %s — %s%s", no, strings.ToUpper(cat[:1]), cat[1:])
		amount = g.amount(perUSD * 3)
		success = g.shop + "/invoices/" + strings.ToLower(no) + "/paid"
		cancel = g.shop + "/invoices/" + strings.ToLower(no)
		mcc = 7399
	}
	return desc, md, amount, success, cancel, mcc
}

// Test card numbers that pass the Luhn check and that the sandbox treats
// as plain successful cards (none of the scenario test cards).
var testCards = []string{
	"4242424242424242", "4242424242424242", "4000056655665556", // visa
	"5555555555554444", "2223003122003222", // mastercard
	"378282246310005",  // amex
	"6011111111111117", // discover
	"3056930009020004", // diners
	"3566002020360505", // jcb
	"6200000000000005", // unionpay
}

var euroCountries = []string{"DE", "FR", "NL", "IE", "ES", "IT", "BE", "AT"}

var cities = map[string][]string{
	"CA": {"Toronto", "Vancouver", "Montreal", "Calgary", "Ottawa", "Halifax"},
	"GB": {"London", "Manchester", "Leeds", "Bristol", "Edinburgh", "Cardiff"},
	"DE": {"Berlin", "Munich", "Hamburg", "Cologne"},
	"FR": {"Paris", "Lyon", "Marseille", "Lille"},
	"NL": {"Amsterdam", "Utrecht", "Rotterdam"},
	"IE": {"Dublin", "Cork", "Galway"},
	"ES": {"Madrid", "Barcelona", "Valencia"},
	"IT": {"Milan", "Rome", "Turin"},
	"BE": {"Brussels", "Antwerp", "Ghent"},
	"AT": {"Vienna", "Graz", "Salzburg"},
}

// card draws a card for a 3DS payment; only its summary is ever stored.
func (g *generator) card(created time.Time, cur paymock.Currency, holder string) *paymock.PaymentMethodInput {
	number := pick(g.r, testCards)
	cvc := fmt.Sprintf("%03d", g.r.IntN(1000))
	if paymock.CardBrand(number) == "amex" {
		cvc = fmt.Sprintf("%04d", g.r.IntN(10000))
	}
	// The fake addresses are American: a full one for USD cards, a city
	// and country elsewhere.
	var addr *paymock.Address
	switch cur {
	case paymock.USD:
		addr = &paymock.Address{Line1: g.f.Street(), City: g.f.City(), State: g.f.StateAbr(), PostalCode: g.f.Zip(), Country: "US"}
	case paymock.CAD:
		addr = &paymock.Address{City: pick(g.r, cities["CA"]), Country: "CA"}
	case paymock.GBP:
		addr = &paymock.Address{City: pick(g.r, cities["GB"]), Country: "GB"}
	default:
		country := pick(g.r, euroCountries)
		addr = &paymock.Address{City: pick(g.r, cities[country]), Country: country}
	}
	return &paymock.PaymentMethodInput{
		Type: "card",
		Card: &paymock.CardInput{
			Number:      number,
			ExpiryMonth: paymock.Whole(1 + g.r.IntN(12)),
			ExpiryYear:  paymock.Whole(created.Year() + 1 + g.r.IntN(5)),
			CVC:         cvc,
		},
		BillingDetails: &paymock.BillingDetails{Name: holder, Address: addr},
	}
}

// payment builds one payment through the create rules, then moves it to
// the status of its slot.
func (g *generator) payment(s slot) (paymock.Payment, error) {
	id := g.ids.New("pay")
	cus := g.customer()
	cur, perUSD := g.currency()
	desc, md, amount, success, cancel, mcc := g.purchase(s.created, perUSD)
	raw, err := json.Marshal(md)
	if err != nil {
		return paymock.Payment{}, err
	}
	expiresIn := paymock.Whole(s.expiresIn / time.Second)
	req := paymock.CreateRequest{
		Amount:      json.Number(amount.String()),
		Currency:    cur,
		Customer:    &paymock.CustomerInput{Email: cus.Email, Name: cus.Name},
		Description: desc,
		ExpiresIn:   &expiresIn,
		Metadata:    raw,
		SuccessURL:  success,
		CancelURL:   cancel,
		MCC:         (*paymock.Whole)(&mcc),
	}
	if g.cfg.Merchant.PCIApproved && g.r.IntN(5) == 0 {
		req.PaymentMethod = g.card(s.created, cur, cus.Name)
	}
	v, err := paymock.ValidateCreate(req, g.cfg.Merchant, s.created)
	if err != nil {
		return paymock.Payment{}, err
	}
	p := paymock.NewPayment(v, paymock.NewPaymentInput{ID: id, Merchant: g.cfg.Merchant, Customer: cus, PublicURL: g.base, Now: s.created})
	if s.status != paymock.StatusPending {
		if err := p.Transition(s.status, s.updated); err != nil {
			return paymock.Payment{}, err
		}
	}
	return p, nil
}

const alphanumeric = "0123456789abcdefghijklmnopqrstuvwxyz"

func (g *generator) alnum(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphanumeric[g.r.IntN(len(alphanumeric))]
	}
	return string(b)
}

// slug lower-cases s and keeps only letters and digits.
func slug(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "x"
	}
	return string(b)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }
